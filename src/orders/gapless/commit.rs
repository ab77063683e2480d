//! One gapless transaction and what its outcome means: committed orders are created and
//! the counter's new state is known; a cancelled one tells, item by item, whether the
//! counter was not as known (then its state comes back: other writers number the period
//! too, or a lease was lost), a reference has its order already, or an invoice refused
//! its credit note; those items leave the queue and the rest is tried again.

use std::time::Duration;

use jiff::Timestamp;
use tally_domain::time::Epoch;

use super::super::credit::refuse;
use super::super::{OrderError, OrderService};
use super::Run;
use super::chunk::Chunk;
use crate::orders::batch::Batch;
use crate::store::orders::{CounterRight, CounterState, InvoiceRef, OrdersCommit, OrdersExtras};
use crate::store::{StoreError, retry};

impl OrderService {
    pub(super) async fn commit(
        &self,
        batch: &mut Batch,
        run: &mut Run,
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
            lows: chunk.low.as_slice(),
        };
        let started = std::time::Instant::now();
        let outcome = self
            .store
            .commit_orders(
                &batch.series.series_id,
                &batch.period,
                &chunk.orders,
                &extras,
            )
            .await?;
        run.view
            .timed(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX));
        let cancelled = match outcome {
            OrdersCommit::Committed => {
                committed(batch, run, chunk);
                return Ok(());
            }
            OrdersCommit::Cancelled(cancelled) => *cancelled,
        };
        if let Some(&j) = cancelled.taken.first() {
            // The counter was as known: no number above it can exist.
            return Err(StoreError::Invariant(format!(
                "number {} of {} {} already exists",
                chunk.orders[j].counter, batch.series.series_id, batch.period
            ))
            .into());
        }
        if let Some(now) = cancelled.counter_now {
            self.learn(batch, run, &chunk, now).await?;
        }
        self.settle_repeats(batch, &mut run.queue, &chunk.indexes, cancelled.existing)
            .await?;
        for (j, refusal) in cancelled.invoices {
            refuse(batch, chunk.indexes[j], refusal);
            run.queue.retain(|&i| i != chunk.indexes[j]);
        }
        if let (false, Some(low)) = (cancelled.lows_written.is_empty(), &chunk.low) {
            run.noticed.insert(low.range.from);
        }
        if cancelled.conflict {
            retry::ORDER_WRITE.pause(run.attempts).await;
        }
        Ok(())
    }

    /// The counter was not as this process knew it: its state now, from the cancellation.
    async fn learn(
        &self,
        batch: &mut Batch,
        run: &mut Run,
        chunk: &Chunk,
        counter: CounterState,
    ) -> Result<(), OrderError> {
        let now = Timestamp::now().epoch_millis();
        let owner = &run.lease.owner;
        let mine = counter.pending.as_ref().is_some_and(|p| p.owner == *owner);
        let other = counter
            .pending
            .as_ref()
            .filter(|p| p.owner != *owner && p.until >= now)
            .cloned();
        let booked_ahead = counter.turns.is_some_and(|end| end >= now);
        match chunk.advance.holding {
            // The lease was taken over (it expired), or is still this request's.
            CounterRight::Lease { .. } => run.lease.may_own = mine,
            CounterRight::Free { .. } if booked_ahead => run.contended(now),
            // Another writer numbered since this process last did: try again at once
            // with the counter learned, unless that happened a moment ago too.
            CounterRight::Free { .. } if counter.last != chunk.advance.expected => {
                run.missed(now);
            }
            CounterRight::Turn { .. } | CounterRight::Free { .. } => {}
        }
        if other.is_some() {
            run.contended(now);
        }
        let version = chunk.advance.format_version;
        let format_changed = counter.format_version.is_some_and(|v| v != version);
        run.view.state = Some(counter);
        if format_changed {
            // The period's format was changed before its first number.
            self.refresh_numbering(&mut batch.series).await?;
        }
        if let (true, Some(other)) = (run.single, other) {
            // Another writer's lease holds the counter: wait for it, at most a turn at a
            // time, then read the counter rather than send a transaction it may refuse.
            let until = other.until.min(now + self.turn_length(run));
            run.waits.saw(Some(other));
            run.view.state = None;
            self.wait_for(run, until, Duration::ZERO).await;
        }
        Ok(())
    }
}

/// The chunk's orders are numbered, and the counter is where they left it.
fn committed(batch: &mut Batch, run: &mut Run, chunk: Chunk) {
    match chunk.advance.holding {
        CounterRight::Lease { until } => run.lease.may_own = until.is_some(),
        CounterRight::Turn { .. } | CounterRight::Free { .. } => {}
    }
    // The turns booked are as last seen: a transaction does not move them.
    let turns = run.view.state.as_ref().and_then(|state| state.turns);
    run.view.state = Some(CounterState {
        last: Some(chunk.advance.new),
        head: Some(chunk.advance.head.clone()),
        format_version: Some(chunk.advance.format_version),
        pending: None,
        moved_to: None,
        turns,
    });
    if let Some(low) = &chunk.low {
        run.noticed.insert(low.range.from);
    }
    for (order, index) in chunk.orders.into_iter().zip(&chunk.indexes) {
        batch.created(*index, order);
    }
    run.queue.drain(..chunk.indexes.len());
    run.attempts = 0;
    run.waits.reset();
}
