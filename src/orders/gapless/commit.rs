//! One gapless transaction and what its outcome means: committed orders are created and
//! the claim is kept for the next chunk (or was given up by the last); a cancelled one
//! tells, item by item, whether the claim was lost, a reference has its order already, or
//! an invoice refused its credit note; those items leave the queue and the rest is tried
//! again.

use super::super::credit::refuse;
use super::super::{OrderError, OrderService};
use super::Run;
use super::chunk::Chunk;
use crate::orders::batch::Batch;
use crate::store::backoff;
use crate::store::orders::{CounterState, InvoiceRef, OrdersCommit, OrdersExtras};

impl OrderService {
    pub(super) async fn commit(
        &self,
        batch: &mut Batch,
        run: &mut Run,
        state: CounterState,
        chunk: Chunk,
    ) -> Result<(), OrderError> {
        let invoices: Vec<Option<InvoiceRef>> = chunk
            .indexes
            .iter()
            .map(|&index| batch.invoices[index].clone())
            .collect();
        let extras = OrdersExtras {
            advance: Some(&chunk.advance),
            jump: chunk.jump.as_ref(),
            invoices: &invoices,
            low: chunk.low.as_ref(),
        };
        let outcome = self
            .store
            .commit_orders(
                &batch.series.series_id,
                &batch.period,
                &chunk.orders,
                &extras,
            )
            .await?;
        let cancelled = match outcome {
            OrdersCommit::Committed => {
                committed(batch, run, chunk);
                return Ok(());
            }
            OrdersCommit::Cancelled(cancelled) => cancelled,
        };
        let version = chunk.advance.format_version;
        match cancelled.counter_now {
            // The claim was taken over (it expired) or the period's format was changed
            // before its first number: claim again.
            Some(now) => {
                run.hold.may_own = now.pending.is_some_and(|p| p.owner == run.hold.owner);
                if now.format_version.is_some_and(|v| v != version) {
                    self.refresh_series(&mut batch.series).await?;
                }
            }
            None => run.hold.claimed = Some(state),
        }
        for (j, order) in cancelled.existing {
            batch.found(chunk.indexes[j], order);
            run.queue.retain(|&i| i != chunk.indexes[j]);
        }
        for (j, refusal) in cancelled.invoices {
            refuse(batch, chunk.indexes[j], refusal);
            run.queue.retain(|&i| i != chunk.indexes[j]);
        }
        run.low_written |= cancelled.low_written;
        if cancelled.conflict {
            backoff(run.attempts).await;
        }
        Ok(())
    }
}

/// The chunk's orders are numbered: the claim is kept for the next chunk, or the last
/// chunk gave it up.
fn committed(batch: &mut Batch, run: &mut Run, chunk: Chunk) {
    let more = chunk.advance.keep_until.is_some();
    run.hold.may_own = more;
    if more {
        run.hold.claimed = Some(CounterState {
            last: Some(chunk.advance.new),
            head: Some(chunk.advance.head.clone()),
            format_version: Some(chunk.advance.format_version),
            pending: None,
            moved_to: None,
        });
    }
    run.low_written |= chunk.low.is_some();
    for (order, index) in chunk.orders.into_iter().zip(&chunk.indexes) {
        batch.created(*index, order);
    }
    run.queue.drain(..chunk.indexes.len());
    run.attempts = 0;
    run.waits.reset();
}
