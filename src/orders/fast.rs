//! Fast numbering: one atomic `ADD` reserves a block of numbers for a whole batch, then the
//! orders are written with no counter in their transactions, so writers never wait for
//! each other. A failure can leave unused numbers in the block, never a number used twice.
//!
//! A series with a room (authorised ranges, a `max_length`, an exact width) reserves only
//! inside it: the `ADD` carries the condition that the counter is where the block still
//! fits, and a counter that must skip to the next range is moved there by a declared move.

use std::collections::VecDeque;
use std::ops::Range;

use super::batch::Batch;
use super::chunk::chunk_of;
use super::credit::refuse;
use super::{MAX_ATTEMPTS, OrderError, OrderService};
use crate::domain::order::{Move, Order, Reason};
use crate::domain::series::{MAX_COUNTER, NumberFormat, Stop};
use crate::store::StoreError;
use crate::store::backoff;
use crate::store::orders::{
    Bounds, CounterMoved, InvoiceRef, OrdersCommit, OrdersExtras, Reservation,
};

/// A block of numbers for the front of the queue, or why there is none.
enum Reserved {
    Block(Range<u64>, NumberFormat),
    /// The counter was not where it was thought to be: plan again.
    Again,
    Stop(Stop),
}

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
        // The counter's last value as last seen (`None`: not seen yet).
        let mut seen: Option<Option<u64>> = None;
        let mut attempts = 0;
        while !queue.is_empty() {
            attempts += 1;
            if attempts > MAX_ATTEMPTS {
                batch.give_up(queue, 1);
                return Ok(());
            }
            if block.is_empty() {
                match self.reserve(batch, queue.len() as u64, &mut seen).await? {
                    Reserved::Block(reserved, in_format) => {
                        block = reserved;
                        format = Some(in_format);
                    }
                    Reserved::Again => continue,
                    Reserved::Stop(stop) => {
                        batch.stop(queue, stop);
                        return Ok(());
                    }
                }
            }
            let format = format.as_ref().expect("set with the block");
            let indexes = chunk_of(batch, &queue, block.end - block.start, 0);
            let orders: Vec<Order> = indexes
                .iter()
                .enumerate()
                .map(|(j, &index)| batch.numbered(index, block.start + j as u64, format))
                .collect();
            let invoices: Vec<Option<InvoiceRef>> = indexes
                .iter()
                .map(|&index| batch.invoices[index].clone())
                .collect();
            let extras = OrdersExtras {
                invoices: &invoices,
                ..OrdersExtras::default()
            };
            match self
                .store
                .commit_orders(&series_id, &period, &orders, &extras)
                .await?
            {
                OrdersCommit::Committed => {
                    block.start += indexes.len() as u64;
                    for (order, index) in orders.into_iter().zip(&indexes) {
                        batch.created(*index, order);
                    }
                    queue.drain(..indexes.len());
                    attempts = 0;
                }
                OrdersCommit::Cancelled(cancelled) => {
                    for (j, order) in cancelled.existing {
                        batch.found(indexes[j], order);
                        queue.retain(|&i| i != indexes[j]);
                    }
                    for (j, refusal) in cancelled.invoices {
                        refuse(batch, indexes[j], refusal);
                        queue.retain(|&i| i != indexes[j]);
                    }
                    if cancelled.conflict {
                        backoff(attempts).await;
                    }
                }
            }
        }
        Ok(())
    }

    /// Reserves up to `wanted` numbers: all of them in a series without a room, else as
    /// many as its current range (or format) still holds.
    async fn reserve(
        &self,
        batch: &mut Batch,
        wanted: u64,
        seen: &mut Option<Option<u64>>,
    ) -> Result<Reserved, OrderError> {
        let series_id = batch.series.series_id.clone();
        let start = batch.series.definition.start;
        let latest = batch.series.latest_version();
        let planned = self.format_version(&mut batch.series, latest).await?;
        let bounded = !batch.series.definition.ranges.is_empty()
            || batch.series.ceiling(&planned) < MAX_COUNTER;
        if !bounded {
            let (last, version) = self
                .store
                .reserve_numbers(&series_id, &batch.period, start, wanted, latest)
                .await?;
            let format = self.format_version(&mut batch.series, version).await?;
            return Ok(Reserved::Block(last + 1 - wanted..last + 1, format));
        }
        let last = seen.unwrap_or(None);
        let room = match self.room(batch, &planned, last).await? {
            Ok(room) => room,
            Err(stop) => return Ok(Reserved::Stop(stop)),
        };
        if let Some(jump) = &room.jump {
            let moved = Move {
                series: series_id.clone(),
                from: jump.from,
                to: jump.to,
                reason: Reason::parse(&jump.reason).map_err(|_| {
                    StoreError::Invariant(format!("a jump's reason is too long: {}", jump.reason))
                })?,
                at: batch.now,
                hash: None,
            };
            let now = chrono::Utc::now().timestamp_millis();
            let moved_to = self
                .store
                .move_counter(&series_id, &batch.period, last, &moved, latest, now, None)
                .await?;
            *seen = match moved_to {
                CounterMoved::Moved => Some(Some(jump.to)),
                CounterMoved::Changed => None,
            };
            if seen.is_none() {
                let counter = self.store.get_counter(&series_id, &batch.period).await?;
                *seen = Some(counter.and_then(|c| c.last));
            }
            return Ok(Reserved::Again);
        }
        let count = wanted.min(room.counters());
        let bounds = Bounds {
            low: room.first - 1,
            high: room.last - count,
            absent_ok: last.is_none(),
        };
        let reservation = self
            .store
            .reserve_within(&series_id, &batch.period, start, count, latest, bounds)
            .await?;
        let (end, version) = match reservation {
            Reservation::Reserved { last, version } => (last, version),
            Reservation::Refused(counter) => {
                *seen = Some(counter.last);
                return Ok(Reserved::Again);
            }
        };
        *seen = Some(Some(end));
        // The block that passes the mark writes it; so does any later one of a process
        // that has not, in case that writer died first (the mark is written once).
        if let Some(low) = batch.series.low_passed(None, end, chrono::Utc::now())
            && !self.range_marked(&low)
        {
            self.store.mark_range_low(&low).await?;
            self.remember_range_mark(&low);
        }
        let format = self.format_version(&mut batch.series, version).await?;
        Ok(Reserved::Block(end + 1 - count..end + 1, format))
    }
}
