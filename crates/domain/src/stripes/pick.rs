//! A hold's lucky dip: free offsets at random, as unpredictable as a purchase's, without
//! moving a cursor, and within each stripe's cap on hold marks.

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, RngExt};

use super::{STRIPE_WRITE_TICKETS, StripeView};

/// Tries at a random offset before a stripe's free offsets are listed in full.
const RANDOM_TRIES: u32 = 32;

/// Why a hold's lucky dip found too few numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortfall {
    /// The view knows of fewer free numbers than asked for.
    Free,
    /// Enough are free, but the stripes' caps on hold marks leave too few of them.
    HoldRoom,
    /// Enough are free, but too few in what one write of each stripe may take.
    Spread,
}

impl StripeView {
    /// `quantity` free offsets as `(stripe, offset)`: a stripe drawn in proportion to what
    /// one write of it can give, all of that, then the next, so a hold spans few stripes.
    pub fn pick_free(
        &self,
        quantity: u64,
        rng: &mut impl Rng,
    ) -> Result<Vec<(u32, u64)>, Shortfall> {
        let stripes = 0..self.layout().stripes();
        let writable = |s: u32| self.room(s).min(STRIPE_WRITE_TICKETS);
        let mut rooms: Vec<(u32, u64)> = stripes
            .clone()
            .map(|s| (s, writable(s).min(self.hold_room(s) + self.ended_behind(s))))
            .collect();
        if rooms.iter().map(|r| r.1).sum::<u64>() < quantity {
            return Err(if self.remaining() < quantity {
                Shortfall::Free
            } else if stripes.map(writable).sum::<u64>() >= quantity {
                Shortfall::HoldRoom
            } else {
                Shortfall::Spread
            });
        }
        let mut picked: Vec<(u32, u64)> = Vec::with_capacity(quantity as usize);
        while (picked.len() as u64) < quantity {
            let &(stripe, room) = rooms
                .choose_weighted(rng, |r| r.1)
                .map_err(|_| Shortfall::HoldRoom)?;
            rooms.retain(|r| r.0 != stripe);
            let need = (quantity - picked.len() as u64).min(room);
            picked.append(&mut self.free_offsets(stripe, need, rng));
        }
        Ok(picked)
    }

    /// Up to `count` distinct free offsets of a stripe, uniform among its free ones while
    /// its hold room lasts; then only offsets whose ended mark the hold takes over.
    fn free_offsets(&self, stripe: u32, count: u64, rng: &mut impl Rng) -> Vec<(u32, u64)> {
        let len = self.layout().len(stripe);
        let mut room = self.hold_room(stripe);
        let mut picked: Vec<u64> = Vec::with_capacity(count as usize);
        let mut accept = |offset: u64, picked: &mut Vec<u64>| {
            // An ended mark behind a cursor is taken over; any other number adds a mark, or
            // keeps one the write would otherwise sweep.
            let costs =
                !(self.is_behind(stripe, offset) && self.hold_end(stripe, offset).is_some());
            if !self.is_sold(stripe, offset) && !picked.contains(&offset) && (room > 0 || !costs) {
                room -= u64::from(costs);
                picked.push(offset);
            }
        };
        let mut tries = RANDOM_TRIES * count as u32;
        while (picked.len() as u64) < count && tries > 0 {
            tries -= 1;
            accept(rng.random_range(0..len), &mut picked);
        }
        if (picked.len() as u64) < count {
            // Mostly sold or out of hold room: list what is left and draw from it.
            let mut free: Vec<u64> = (0..len)
                .filter(|&o| !self.is_sold(stripe, o) && !picked.contains(&o))
                .collect();
            free.shuffle(rng);
            for offset in free {
                if picked.len() as u64 == count {
                    break;
                }
                accept(offset, &mut picked);
            }
        }
        picked.into_iter().map(|offset| (stripe, offset)).collect()
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
        let counters = StripeCounters { bottom: 10, top: 5 };
        for s in 0..4 {
            view.learn(s, counters, &Chosen::from([12, 13]));
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
        assert_eq!(view.pick_free(free + 1, &mut rng), Err(Shortfall::Free));
        // One write of a stripe names at most 44 of its numbers.
        let writable: u64 = (0..4).map(|s| view.room(s).min(STRIPE_WRITE_TICKETS)).sum();
        assert!(writable < free);
        assert!(view.pick_free(writable, &mut rng).is_ok());
        assert_eq!(
            view.pick_free(writable + 1, &mut rng),
            Err(Shortfall::Spread)
        );
    }

    #[test]
    fn a_hold_adds_no_more_marks_than_the_stripes_caps_leave_room_for() {
        let mut view = StripeView::new(StripeLayout::new(200, 2), 100).with_held_caps(vec![3, 2]);
        view.at(1_000);
        view.learn(0, StripeCounters { bottom: 10, top: 0 }, &Chosen::new());
        // Stripe 0: a live mark ahead, an ended one behind the cursor (taken over for
        // free), an ended one ahead (swept). Stripe 1: two live marks, at its cap.
        view.learn_held(0, &Held::from([(50, 2_000), (4, 500), (60, 900)]));
        view.learn_held(1, &Held::from([(1, 2_000), (2, 3_000)]));
        let mut rng = StdRng::seed_from_u64(3);
        // Room for one new mark (cap 3 - 3 marks + 1 swept) and the ended one behind.
        for _ in 0..20 {
            let picked = view.pick_free(2, &mut rng).unwrap();
            assert!(picked.contains(&(0, 4)), "{picked:?}");
            assert!(picked.iter().all(|&(s, _)| s == 0), "{picked:?}");
            let take = &view.fit_hold(view.group(&picked)).unwrap()[0];
            let added = take.offsets.len() - take.hold_marked.len();
            assert!(added <= take.swept.len(), "{take:?}");
        }
        assert_eq!(view.pick_free(3, &mut rng), Err(Shortfall::HoldRoom));
    }
}
