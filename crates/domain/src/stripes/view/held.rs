//! What the view knows of stripes' hold marks: room under their caps, which ended ones a
//! hold's write sweeps, what live holds keep; and a hold's lucky dip, free offsets at
//! random (as unpredictable as a purchase's) without moving a cursor.

use std::cmp::Reverse;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, RngExt};

use super::StripeView;
use crate::stripes::{ChosenTake, STRIPE_SWEEP_MARKS, STRIPE_WRITE_TICKETS, Shortfall};

/// Tries at a random offset before a stripe's free offsets are listed in full.
const RANDOM_TRIES: u32 = 32;

impl StripeView {
    /// The same view, each stripe carrying at most `caps[stripe]` hold marks.
    pub fn with_held_caps(mut self, caps: Vec<u64>) -> Self {
        debug_assert_eq!(caps.len(), self.held_caps.len());
        self.held_caps = caps;
        self
    }

    /// Ended hold marks ahead of the known cursors, which a write may remove (behind a
    /// cursor one is a free number, left for a sale or hold of it).
    fn sweepable(&self, stripe: u32) -> impl Iterator<Item = u64> + '_ {
        self.held[stripe as usize]
            .iter()
            .filter(move |&(&offset, &end)| end <= self.now && !self.is_behind(stripe, offset))
            .map(|(&offset, _)| offset)
    }

    /// Hold marks one write of a hold may add to `stripe`: its cap less the marks it
    /// carries, plus the ended ones it sweeps.
    fn hold_room(&self, stripe: u32) -> u64 {
        let sweep = self.sweepable(stripe).take(STRIPE_SWEEP_MARKS).count() as u64;
        let marks = self.held[stripe as usize].len() as u64;
        (self.held_caps[stripe as usize] + sweep).saturating_sub(marks)
    }

    /// A hold's writes with the ended marks each must sweep to keep its stripe within its
    /// cap, or the stripes where too few can go. Only as many as needed (a lucky dip may
    /// mean to take one back), farthest from the cursors first.
    pub fn fit_hold(&self, mut takes: Vec<ChosenTake>) -> Result<Vec<ChosenTake>, Vec<u32>> {
        let mut full = Vec::new();
        for take in &mut takes {
            let stripe = take.stripe;
            let len = self.layout.len(stripe);
            let known = self.known[stripe as usize];
            let marks =
                self.held[stripe as usize].len() + take.offsets.len() - take.hold_marked.len();
            let needed = (marks as u64).saturating_sub(take.hold_marks_most);
            let own = |o: &u64| take.offsets.contains(o) || take.returned.contains(o);
            let mut swept: Vec<u64> = self.sweepable(stripe).filter(|o| !own(o)).collect();
            swept.sort_by_key(|o| Reverse((o - known.bottom).min(len - known.top - 1 - o)));
            swept.truncate(STRIPE_SWEEP_MARKS.min(needed as usize));
            for &offset in &swept {
                take.ahead(offset, len);
            }
            swept.sort_unstable();
            if (swept.len() as u64) < needed {
                full.push(stripe);
            }
            take.swept = swept;
        }
        full.is_empty().then_some(takes).ok_or(full)
    }

    /// `quantity` free offsets as `(stripe, offset)`: a stripe drawn in proportion to what
    /// one write of it can give, all of that, then the next, so a hold spans few stripes.
    pub fn pick_free(
        &self,
        quantity: u64,
        rng: &mut impl Rng,
    ) -> Result<Vec<(u32, u64)>, Shortfall> {
        let stripes = 0..self.layout().stripes();
        let writable = |s: u32| self.room(s).min(STRIPE_WRITE_TICKETS);
        // Ended marks behind a cursor: free numbers a hold takes over without a new mark.
        let ended_behind = |s: u32| {
            let held = self.held[s as usize].iter();
            held.filter(|&(&o, &end)| end <= self.now && self.is_behind(s, o))
                .count() as u64
        };
        let mut rooms: Vec<(u32, u64)> = stripes
            .clone()
            .map(|s| (s, writable(s).min(self.hold_room(s) + ended_behind(s))))
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

    /// Numbers that live holds keep, as far as the view knows.
    pub fn live_held(&self) -> u64 {
        self.held
            .iter()
            .map(|held| held.values().filter(|&&end| end > self.now).count() as u64)
            .sum()
    }

    /// When the first live hold the view knows on `stripes` ends (Unix ms).
    pub fn first_hold_end(&self, stripes: impl IntoIterator<Item = u32>) -> Option<i64> {
        stripes
            .into_iter()
            .flat_map(|s| self.held[s as usize].values().copied())
            .filter(|&end| end > self.now)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{Chosen, Held, StripeCursors, StripeLayout};
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    #[test]
    fn a_hold_sweeps_the_ended_marks_ahead_and_keeps_within_the_cap() {
        let mut view = StripeView::new(StripeLayout::new(100, 1), 100).with_held_caps(vec![5]);
        view.at(1_000);
        view.learn(0, StripeCursors { bottom: 10, top: 0 }, &Chosen::new());
        // Live at 50 and 60; ended at 70 and 80 ahead, and at 5 behind the bottom cursor.
        let held = [(5, 10), (50, 2_000), (60, 3_000), (70, 500), (80, 900)];
        view.learn_held(0, &Held::from(held));
        assert_eq!(view.live_held(), 2);
        assert_eq!(view.first_hold_end(0..1), Some(2_000));
        // 5 marks at a cap of 5, 2 ended ahead that may be swept: room for 2 more.
        assert_eq!(view.hold_room(0), 2);
        let fit = |located: &[(u32, u64)]| view.fit_hold(view.group(located));
        // Only what the cap needs, the farthest from the cursors first.
        let one = &fit(&[(0, 30)]).unwrap()[0];
        assert_eq!((&one.swept, one.bottom_at_most), (&vec![70], 30));
        assert_eq!(fit(&[(0, 30), (0, 31)]).unwrap()[0].swept, vec![70, 80]);
        // Three new numbers would leave 6 marks, over the cap.
        assert_eq!(fit(&[(0, 30), (0, 31), (0, 32)]), Err(vec![0]));
        // Taking over ended marks adds none: behind the cursor, or ahead of it.
        let reused = &fit(&[(0, 5), (0, 70), (0, 31)]).unwrap()[0];
        let marks = (&reused.returned, &reused.hold_marked, &reused.swept);
        assert_eq!(marks, (&vec![5], &vec![70], &vec![80]));
    }

    #[test]
    fn a_hold_picks_only_free_offsets_and_none_twice() {
        let mut view = StripeView::new(StripeLayout::new(400, 4), 100);
        view.at(1_000);
        let cursors = StripeCursors { bottom: 10, top: 5 };
        for s in 0..4 {
            view.learn(s, cursors, &Chosen::from([12, 13]));
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
        view.learn(0, StripeCursors { bottom: 10, top: 0 }, &Chosen::new());
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
