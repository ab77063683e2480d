//! Numbers a buyer chose: where each sits in the stripes, whether the view knows it sold,
//! and what a purchase of them writes to each stripe.

use std::collections::BTreeSet;

use super::{STRIPE_WRITE_NAMES, StripeView, stripe_budget};

/// The named numbers of one stripe, as a write of them: offsets ahead of both cursors join
/// its chosen set (or get hold marks), on the condition that no cursor has reached them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChosenTake {
    pub stripe: u32,
    /// Offsets from the stripe's first index ahead of both cursors, ascending.
    pub offsets: Vec<u64>,
    /// Offsets behind a cursor whose hold is over, ascending: free again.
    pub returned: Vec<u64>,
    /// Those of `offsets` with an ended hold's mark, which the write removes or replaces,
    /// as far as the view knows. Ascending.
    pub hold_marked: Vec<u64>,
    /// Other ended hold marks ahead of the cursors that a hold's write removes to keep the
    /// stripe under its cap. Ascending.
    pub swept: Vec<u64>,
    /// The most hold marks the stripe may carry (see `held_caps`).
    pub hold_marks_most: u64,
    /// The largest bottom cursor that leaves every offset unsold.
    pub bottom_at_most: u64,
    /// The largest top cursor that leaves every offset unsold.
    pub top_at_most: u64,
}

impl ChosenTake {
    /// Keeps `offset` ahead of both cursors: they must not have reached it.
    pub(super) fn ahead(&mut self, offset: u64, len: u64) {
        self.bottom_at_most = self.bottom_at_most.min(offset);
        self.top_at_most = self.top_at_most.min(len - 1 - offset);
    }
}

/// What a purchase of chosen numbers should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Take(Vec<ChosenTake>),
    /// The view knows these numbers (positions in the request) sold; but a hold may end and
    /// give numbers back, so a refusal first reads their `stripes`.
    Taken {
        positions: Vec<usize>,
        stripes: Vec<u32>,
    },
    /// The numbers lie in more stripes than one purchase may touch (`stripe_budget`), or
    /// too many lie in one stripe for one write of it (`STRIPE_WRITE_NAMES`).
    TooSpread,
}

impl StripeView {
    /// The writes for chosen numbers, each given as `(stripe, offset)`; `extra_items` are
    /// the items of the transaction besides tickets and stripes (the record, an allowance).
    pub fn choose(&self, located: &[(u32, u64)], extra_items: usize) -> Choice {
        let positions: Vec<usize> = (0..located.len())
            .filter(|&p| self.is_sold(located[p].0, located[p].1))
            .collect();
        if !positions.is_empty() {
            let stripes: BTreeSet<u32> = positions.iter().map(|&p| located[p].0).collect();
            let stripes = stripes.into_iter().collect();
            return Choice::Taken { positions, stripes };
        }
        let takes = self.group(located);
        let items = self.transaction_items.saturating_sub(extra_items);
        let crowded = takes
            .iter()
            .any(|t| 2 * t.offsets.len() + t.returned.len() > STRIPE_WRITE_NAMES);
        if crowded || takes.len() > stripe_budget(items, located.len()) {
            return Choice::TooSpread;
        }
        Choice::Take(takes)
    }

    /// The writes of offsets named by the buyer (or by a hold), grouped by stripe in the
    /// order they come: ahead of the known cursors, or behind one.
    pub fn group(&self, located: &[(u32, u64)]) -> Vec<ChosenTake> {
        let mut takes: Vec<ChosenTake> = Vec::new();
        for &(stripe, offset) in located {
            let len = self.layout().len(stripe);
            let index = takes.iter().position(|t| t.stripe == stripe);
            let index = index.unwrap_or_else(|| {
                takes.push(ChosenTake {
                    stripe,
                    hold_marks_most: self.held_caps[stripe as usize],
                    bottom_at_most: len,
                    top_at_most: len,
                    ..ChosenTake::default()
                });
                takes.len() - 1
            });
            let take = &mut takes[index];
            if self.is_behind(stripe, offset) {
                take.returned.push(offset);
            } else {
                take.offsets.push(offset);
                if self.hold_end(stripe, offset).is_some() {
                    take.hold_marked.push(offset);
                }
                take.ahead(offset, len);
            }
        }
        for take in &mut takes {
            take.offsets.sort_unstable();
            take.returned.sort_unstable();
            take.hold_marked.sort_unstable();
        }
        takes
    }

    /// Whether the view knows the offset sold or held: by a live hold, or behind a cursor
    /// without an ended hold, or chosen.
    pub fn is_sold(&self, stripe: u32, offset: u64) -> bool {
        match self.hold_end(stripe, offset) {
            Some(end) => end > self.now,
            None => {
                self.is_behind(stripe, offset) || self.chosen[stripe as usize].contains(&offset)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CHOSEN_ALWAYS_FIT, Chosen, StripeCursors, StripeLayout};
    use super::*;

    #[test]
    fn chosen_numbers_are_grouped_by_stripe_ahead_of_the_cursors_unless_known_sold() {
        let mut view = StripeView::new(StripeLayout::new(1_000, 10), 100);
        let len = view.layout().len(3);
        let Choice::Take(takes) = view.choose(&[(3, 40), (7, 2), (3, 5)], 1) else {
            panic!("expected takes");
        };
        assert_eq!(takes.len(), 2);
        assert_eq!(
            takes[0],
            ChosenTake {
                stripe: 3,
                offsets: vec![5, 40],
                hold_marks_most: len,
                bottom_at_most: 5,
                top_at_most: len - 41,
                ..ChosenTake::default()
            }
        );
        // Behind a cursor or chosen before: known sold.
        let cursors = StripeCursors { bottom: 10, top: 5 };
        view.learn(3, cursors, &Chosen::from([20, 30]));
        let positions = vec![0, 2, 3];
        let taken = view.choose(&[(3, 9), (3, 10), (3, len - 5), (3, 20), (3, 21)], 1);
        assert_eq!(
            taken,
            Choice::Taken {
                positions,
                stripes: vec![3]
            }
        );
        assert_eq!(view.room(3), len - 10 - 5 - 2);
    }

    #[test]
    fn numbers_spread_beyond_one_transaction_or_one_write_are_refused() {
        let view = StripeView::new(StripeLayout::new(1_000, 100), 100);
        let spread = |n: usize| -> Vec<(u32, u64)> { (0..n as u32).map(|s| (s, 0)).collect() };
        assert_eq!(view.choose(&spread(50), 1), Choice::TooSpread);
        assert!(matches!(view.choose(&spread(49), 1), Choice::Take(_)));
        // A bundle (too many tickets for one transaction) touches at most 32 stripes.
        let view = StripeView::new(StripeLayout::new(10_000, 100), 100);
        let bundle = |stripes: u32| -> Vec<(u32, u64)> {
            (0..200u64).map(|i| (i as u32 % stripes, i / 64)).collect()
        };
        assert!(matches!(view.choose(&bundle(32), 1), Choice::Take(t) if t.len() == 32));
        assert_eq!(view.choose(&bundle(33), 1), Choice::TooSpread);
        // The documented count always fits, even in the tightest draw: capped, with
        // instant wins (98 items), record and allowance.
        let view = StripeView::new(StripeLayout::new(100_000, 1_024), 98);
        let n = CHOSEN_ALWAYS_FIT;
        assert!(matches!(view.choose(&spread(n), 2), Choice::Take(_)));
        let one_stripe = |n: usize| -> Vec<(u32, u64)> { (0..n as u64).map(|o| (7, o)).collect() };
        assert!(matches!(view.choose(&one_stripe(n), 2), Choice::Take(_)));
        assert_eq!(view.choose(&one_stripe(n + 1), 2), Choice::TooSpread);
    }
}
