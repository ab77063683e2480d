//! Fast numbering: one atomic `ADD` reserves a block of numbers for a whole batch, then the
//! orders are written with no counter in their transactions, so writers never wait for
//! each other. A failure can leave unused numbers in the block, never a number used twice.

use std::collections::VecDeque;
use std::ops::Range;

use super::batch::Batch;
use super::{MAX_ATTEMPTS, OrderError, OrderService};
use crate::domain::order::Order;
use crate::domain::series::NumberFormat;
use crate::store::backoff;
use crate::store::limits::MAX_TRANSACTION_ITEMS;
use crate::store::orders::OrdersCommit;

/// Orders per fast transaction: two items per order (50).
const FAST_CHUNK: usize = MAX_TRANSACTION_ITEMS / 2;

impl OrderService {
    pub(super) async fn number_fast(
        &self,
        batch: &mut Batch,
        mut queue: VecDeque<usize>,
    ) -> Result<(), OrderError> {
        let series_id = batch.series.series_id.clone();
        let period = batch.period.clone();
        let mut block: Range<u64> = 0..0;
        let mut format: Option<NumberFormat> = None;
        let mut attempts = 0;
        while !queue.is_empty() {
            attempts += 1;
            if attempts > MAX_ATTEMPTS {
                batch.give_up(queue);
                return Ok(());
            }
            if block.is_empty() {
                let count = queue.len() as u64;
                let (last, version) = self
                    .store
                    .reserve_numbers(
                        &series_id,
                        &period,
                        batch.series.definition.start,
                        count,
                        batch.series.latest_version(),
                    )
                    .await?;
                block = last + 1 - count..last + 1;
                format = Some(self.format_version(&mut batch.series, version).await?);
            }
            let format = format.as_ref().expect("set with the block");
            let take = queue
                .len()
                .min(FAST_CHUNK)
                .min((block.end - block.start) as usize);
            let chunk: Vec<usize> = queue.iter().take(take).copied().collect();
            let orders: Vec<Order> = chunk
                .iter()
                .enumerate()
                .map(|(j, &index)| batch.numbered(index, block.start + j as u64, format))
                .collect();
            match self
                .store
                .commit_orders(&series_id, &period, None, &orders)
                .await?
            {
                OrdersCommit::Committed => {
                    block.start += take as u64;
                    for (order, index) in orders.into_iter().zip(&chunk) {
                        batch.created(*index, order);
                    }
                    queue.drain(..take);
                    attempts = 0;
                }
                OrdersCommit::Cancelled(cancelled) => {
                    for (j, order) in cancelled.existing {
                        batch.found(chunk[j], order);
                        queue.retain(|&i| i != chunk[j]);
                    }
                    if cancelled.conflict {
                        backoff(attempts).await;
                    }
                }
            }
        }
        Ok(())
    }
}
