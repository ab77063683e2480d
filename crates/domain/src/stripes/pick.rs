//! A lucky dip for a hold: free offsets picked at random, without moving a cursor, so a
//! hold's numbers are as unpredictable as a purchase's and leave the cursors to buyers.

use rand::{Rng, RngExt};

use super::StripeView;

/// Tries at a random offset before a stripe's free offsets are listed in full.
const RANDOM_TRIES: u32 = 32;

impl StripeView {
    /// `quantity` free offsets as `(stripe, offset)`: a stripe drawn in proportion to its
    /// room, as many of its free offsets as it has room for (each uniform among them),
    /// then the next stripe, so a hold spans few stripes; at most what one write of a
    /// stripe names. `None` when the view knows of fewer free numbers that way.
    pub fn pick_free(&self, quantity: u64, rng: &mut impl Rng) -> Option<Vec<(u32, u64)>> {
        let mut rooms: Vec<(u32, u64)> = (0..self.layout().stripes())
            .map(|s| (s, self.room(s).min(super::STRIPE_WRITE_TICKETS)))
            .filter(|&(_, room)| room > 0)
            .collect();
        if rooms.iter().map(|r| r.1).sum::<u64>() < quantity {
            return None;
        }
        let mut picked: Vec<(u32, u64)> = Vec::with_capacity(quantity as usize);
        while (picked.len() as u64) < quantity {
            let total: u64 = rooms.iter().map(|r| r.1).sum();
            if total == 0 {
                return None;
            }
            let mut at = rng.random_range(0..total);
            let index = rooms
                .iter()
                .position(|&(_, room)| {
                    let here = at < room;
                    at = at.saturating_sub(room);
                    here
                })
                .unwrap_or(0);
            let (stripe, room) = rooms.swap_remove(index);
            let need = (quantity - picked.len() as u64).min(room);
            let mut free = self.free_offsets(stripe, need, rng);
            picked.append(&mut free);
        }
        Some(picked)
    }

    /// `count` distinct free offsets of a stripe, uniform among its free ones.
    fn free_offsets(&self, stripe: u32, count: u64, rng: &mut impl Rng) -> Vec<(u32, u64)> {
        let len = self.layout().len(stripe);
        let mut chosen: Vec<u64> = Vec::with_capacity(count as usize);
        let mut tries = 0;
        while (chosen.len() as u64) < count && tries < RANDOM_TRIES * count as u32 {
            tries += 1;
            let offset = rng.random_range(0..len);
            if !self.is_sold(stripe, offset) && !chosen.contains(&offset) {
                chosen.push(offset);
            }
        }
        if (chosen.len() as u64) < count {
            // Mostly sold: list the free offsets and draw from them.
            let mut free: Vec<u64> = (0..len)
                .filter(|&o| !self.is_sold(stripe, o) && !chosen.contains(&o))
                .collect();
            while (chosen.len() as u64) < count && !free.is_empty() {
                let pick = rng.random_range(0..free.len());
                chosen.push(free.swap_remove(pick));
            }
        }
        chosen.into_iter().map(|o| (stripe, o)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Chosen, Held, StripeCounters, StripeLayout};
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    #[test]
    fn a_hold_picks_only_free_offsets_and_none_twice() {
        let mut view = StripeView::new(StripeLayout::new(400, 4), 100);
        view.at(1_000);
        for s in 0..4 {
            view.learn(
                s,
                StripeCounters { bottom: 10, top: 5 },
                &Chosen::from([12, 13]),
            );
            view.learn_held(s, &Held::from([(15, 2_000), (3, 500), (16, 900)]));
        }
        let mut rng = StdRng::seed_from_u64(9);
        for _ in 0..50 {
            let picked = view.pick_free(8, &mut rng).unwrap();
            assert_eq!(picked.len(), 8);
            for &(s, o) in &picked {
                assert!(!view.is_sold(s, o), "{s}/{o}");
                assert_eq!(picked.iter().filter(|&&p| p == (s, o)).count(), 1);
            }
        }
        // Per stripe: its length - 10 - 5 - 2 chosen - 1 live hold ahead + 1 ended behind.
        assert_eq!(view.room(0), view.layout().len(0) - 17);
        let free: u64 = (0..4).map(|s| view.room(s)).sum();
        assert!(view.pick_free(free, &mut rng).is_none());
        // One write of a stripe names at most 44 of its numbers.
        let writable: u64 = (0..4)
            .map(|s| view.room(s).min(super::super::STRIPE_WRITE_TICKETS))
            .sum();
        assert!(writable < free);
        assert!(view.pick_free(writable, &mut rng).is_some());
        assert!(view.pick_free(writable + 1, &mut rng).is_none());
    }
}
