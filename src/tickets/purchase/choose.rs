//! The step that plans a purchase of numbers the buyer chose: where each number sits, and
//! whether the view already knows one of them sold or held. A hold may end and give its
//! numbers back, so before `numbers_taken` the stripes in question are read once; a
//! number sold meanwhile fails the transaction, whose cancellation teaches the view its
//! stripe, and the next plan refuses.

use super::{PurchaseRun, Read, Refusal, Step};
use tally_domain::stripes::Choice;

impl PurchaseRun<'_> {
    /// Plans the purchase of `numbers` (ascending, distinct, in range).
    pub(super) fn choose(&mut self, numbers: Vec<u64>) -> Step {
        let located: Vec<(u32, u64)> = numbers.iter().map(|&n| self.cache.locate(n)).collect();
        // The record, and the payer's allowance in a capped draw.
        let extra = 1 + usize::from(self.cache.draw.config.max_per_payer().is_some());
        let view = self.cache.view();
        let choice = view.stripes.choose(&located, extra);
        let closed = view.closed;
        self.epoch = view.epoch;
        drop(view);
        if closed {
            return Step::Refuse(Refusal::Closed);
        }
        match choice {
            Choice::Take(takes) => Step::Commit(Vec::new(), takes),
            // Holds end and give numbers back: the stripes are read once before a refusal.
            Choice::Taken { stripes, .. } if !self.read_taken => {
                self.read_taken = true;
                Step::Read(Read::stripes(stripes))
            }
            Choice::Taken { positions, .. } => Step::Refuse(Refusal::Taken(
                positions.iter().map(|&p| numbers[p]).collect(),
            )),
            Choice::TooSpread => Step::Refuse(Refusal::TooSpread),
        }
    }
}
