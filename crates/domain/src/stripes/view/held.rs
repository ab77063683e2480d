//! What the view knows of stripes' hold marks: room under their caps, which ended ones a
//! hold's write sweeps, and what live holds keep.

use std::cmp::Reverse;

use super::StripeView;
use crate::stripes::{ChosenTake, STRIPE_SWEEP_MARKS};

impl StripeView {
    /// The same view, each stripe carrying at most `caps[stripe]` hold marks.
    pub fn with_held_caps(mut self, caps: Vec<u64>) -> Self {
        debug_assert_eq!(caps.len(), self.held_caps.len());
        self.held_caps = caps;
        self
    }

    /// The most hold marks `stripe` may carry.
    pub fn held_cap(&self, stripe: u32) -> u64 {
        self.held_caps[stripe as usize]
    }

    /// Ended hold marks ahead of the known counters, which a write may remove (behind a
    /// cursor one is a free number, left for a sale or hold of it).
    fn sweepable(&self, stripe: u32) -> impl Iterator<Item = u64> + '_ {
        self.held[stripe as usize]
            .iter()
            .filter(move |&(&offset, &end)| end <= self.now && !self.is_behind(stripe, offset))
            .map(|(&offset, _)| offset)
    }

    /// Hold marks one write of a hold may add to `stripe`: its cap less the marks it
    /// carries, plus the ended ones it sweeps.
    pub(in crate::stripes) fn hold_room(&self, stripe: u32) -> u64 {
        let sweep = self.sweepable(stripe).take(STRIPE_SWEEP_MARKS).count() as u64;
        let marks = self.held[stripe as usize].len() as u64;
        (self.held_cap(stripe) + sweep).saturating_sub(marks)
    }

    /// Ended hold marks behind a cursor: free numbers a hold takes over without a new mark.
    pub(in crate::stripes) fn ended_behind(&self, stripe: u32) -> u64 {
        self.held[stripe as usize]
            .iter()
            .filter(|&(&o, &end)| end <= self.now && self.is_behind(stripe, o))
            .count() as u64
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
    use super::super::super::{Chosen, Held, StripeCounters, StripeLayout};
    use super::*;

    #[test]
    fn a_hold_sweeps_the_ended_marks_ahead_and_keeps_within_the_cap() {
        let mut view = StripeView::new(StripeLayout::new(100, 1), 100).with_held_caps(vec![5]);
        view.at(1_000);
        view.learn(0, StripeCounters { bottom: 10, top: 0 }, &Chosen::new());
        // Live at 50 and 60; ended at 70 and 80 ahead, and at 5 behind the bottom cursor.
        let held = [(5, 10), (50, 2_000), (60, 3_000), (70, 500), (80, 900)];
        view.learn_held(0, &Held::from(held));
        assert_eq!(view.live_held(), 2);
        assert_eq!(view.first_hold_end(0..1), Some(2_000));
        // 5 marks at a cap of 5, 2 ended ahead that may be swept: room for 2 more.
        assert_eq!(view.hold_room(0), 2);
        let takes = view.group(&[(0, 30)]);
        let fitted = view.fit_hold(takes).unwrap();
        // Only what the cap needs, the farthest from the cursors first.
        assert_eq!(fitted[0].swept, vec![70]);
        assert_eq!(fitted[0].bottom_at_most, 30);
        let two = view.fit_hold(view.group(&[(0, 30), (0, 31)])).unwrap();
        assert_eq!(two[0].swept, vec![70, 80]);
        // Three new numbers would leave 6 marks, over the cap.
        let three = view.group(&[(0, 30), (0, 31), (0, 32)]);
        assert_eq!(view.fit_hold(three), Err(vec![0]));
        // Taking over ended marks adds none: behind the cursor, or ahead of it.
        let reused = view
            .fit_hold(view.group(&[(0, 5), (0, 70), (0, 31)]))
            .unwrap();
        assert_eq!(reused[0].returned, vec![5]);
        assert_eq!(reused[0].hold_marked, vec![70]);
        assert_eq!(reused[0].swept, vec![80]);
    }
}
