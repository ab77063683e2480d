//! Repeats found by the write itself: a reference item is written only if absent, so a
//! transaction that meets one returns the order it holds (`ALL_OLD`). Only then is
//! anything read: the order's credit notes, which live on its number item.

use std::collections::VecDeque;

use super::batch::Batch;
use super::{OrderError, OrderService};
use tally_domain::order::Order;

impl OrderService {
    /// Items of a chunk whose reference has an order already: that order is their
    /// outcome, and they leave the queue. `existing` holds positions in the chunk
    /// `indexes`.
    pub(super) async fn settle_repeats(
        &self,
        batch: &mut Batch,
        queue: &mut VecDeque<usize>,
        indexes: &[usize],
        existing: Vec<(usize, Order)>,
    ) -> Result<(), OrderError> {
        if existing.is_empty() {
            return Ok(());
        }
        let (positions, orders): (Vec<usize>, Vec<Order>) = existing.into_iter().unzip();
        let orders = self.store.with_credit_notes(orders).await?;
        for (j, order) in positions.into_iter().zip(orders) {
            batch.found(indexes[j], order);
            queue.retain(|&i| i != indexes[j]);
        }
        Ok(())
    }
}
