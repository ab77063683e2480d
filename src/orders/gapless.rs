//! Gapless numbering: the counter of the series and period moves in the same transaction
//! as the orders it numbers (compare-and-set), so a number exists if and only if its order
//! does. Writers that lose the counter learn its new value and try again.

use std::collections::VecDeque;

use tracing::warn;

use super::batch::Batch;
use super::outcome::{ItemOutcome, RejectionCode};
use super::{MAX_ATTEMPTS, OrderError, OrderService};
use crate::domain::order::Order;
use crate::store::backoff;
use crate::store::limits::MAX_TRANSACTION_ITEMS;
use crate::store::orders::{CounterMove, OrdersCommit};

/// Orders per gapless transaction: the counter plus two items per order (49).
const GAPLESS_CHUNK: usize = (MAX_TRANSACTION_ITEMS - 1) / 2;

impl OrderService {
    pub(super) async fn number_gapless(
        &self,
        batch: &mut Batch,
        mut queue: VecDeque<usize>,
    ) -> Result<(), OrderError> {
        let series_id = batch.series.series_id.clone();
        let period = batch.period();
        let first = batch.series.definition.start;
        let cache_key = (series_id.clone(), period.clone());
        let mut attempts = 0;
        // The counter as last seen by this process; `None` means read it first.
        let mut known = self.counter(&cache_key);
        while !queue.is_empty() {
            attempts += 1;
            if attempts > MAX_ATTEMPTS {
                batch.give_up(queue);
                return Ok(());
            }
            let last = match known {
                Some(last) => last,
                None => self
                    .store
                    .get_counter(&series_id, &period)
                    .await?
                    .unwrap_or(first - 1),
            };
            let chunk: Vec<usize> = queue.iter().take(GAPLESS_CHUNK).copied().collect();
            let orders: Vec<Order> = chunk
                .iter()
                .enumerate()
                .map(|(j, &index)| batch.numbered(index, last + 1 + j as u64))
                .collect();
            let counter = CounterMove {
                expected: (last >= first).then_some(last),
                new: last + orders.len() as u64,
            };
            match self
                .store
                .commit_orders(&series_id, &period, Some(counter), &orders)
                .await?
            {
                OrdersCommit::Committed => {
                    self.set_counter(&cache_key, counter.new);
                    known = Some(counter.new);
                    for (order, index) in orders.into_iter().zip(&chunk) {
                        batch.outcomes[*index] = Some(ItemOutcome::Created(order));
                    }
                    queue.drain(..chunk.len());
                    attempts = 0;
                }
                OrdersCommit::Cancelled(cancelled) => {
                    if let Some(now) = cancelled.counter_now {
                        self.set_counter(&cache_key, now.max(first - 1));
                    } else if !cancelled.number_taken.is_empty() && cancelled.existing.is_empty() {
                        // The counter agreed, yet the number exists: another series renders
                        // the same numbers. A gapless series cannot skip it.
                        warn!(number = %orders[cancelled.number_taken[0]].order_number, "order number already used elsewhere");
                        batch.reject_all(
                            queue,
                            RejectionCode::OrderNumberTaken,
                            "the next number of this series is already used by another series",
                        );
                        return Ok(());
                    }
                    let lost_race = cancelled.conflict || cancelled.counter_now.is_some();
                    for (j, order) in cancelled.existing {
                        batch.found(chunk[j], order);
                        queue.retain(|&i| i != chunk[j]);
                    }
                    // Writers that lost the counter to the same winner would all retry at
                    // once and collide again: spread them out, then read the counter afresh,
                    // since what the cancellation said has aged during the wait.
                    if lost_race {
                        backoff(attempts).await;
                        known = None;
                    } else {
                        known = Some(last);
                    }
                }
            }
        }
        Ok(())
    }
}
