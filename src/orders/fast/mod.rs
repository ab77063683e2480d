//! Fast numbering: a process reserves a block of counters with one atomic `ADD` and
//! numbers from memory, single posts and batches alike, so an order costs its one
//! transaction (its number and its reference, no counter) and writers never wait for each
//! other. The block's size follows the rate the process numbers at. A counter is never
//! used twice; a crash leaves the rest of its process's blocks unused (gaps), and a counter
//! whose write has an unknown outcome is tried again, not skipped: the write that finds it
//! taken drops it.
//!
//! A request takes its counters from the process's spare ones at its start, reserves what
//! they miss before it writes (the rest of the block is kept for the next request),
//! numbers its orders in request order, and gives back at its end those it did not write.
//!
//! A range's low notice goes with the first orders at or past its low threshold that a
//! process writes, in their transaction, until the process knows it written: a fault that
//! fails the notice fails those orders with it and loses no counter, and a process that
//! dies first leaves the notice to the next one that numbers there. A process that has not
//! written a range's notice reads whether it is there before it carries it, so that it
//! does not send a chunk of orders to be cancelled for a notice written long ago. A chunk
//! whose counters pass the thresholds of several ranges carries each of their notices.

mod blocks;
mod reserve;

use std::collections::VecDeque;

pub(crate) use blocks::Blocks;
pub use blocks::SpareNumbers;

use super::batch::Batch;
use super::chunk::chunk_of;
use super::credit::refuse;
use super::{OrderError, OrderService, SeriesPeriod};
use crate::store::StoreError;
use crate::store::orders::{InvoiceRef, OrdersCancellation, OrdersCommit, OrdersExtras};
use crate::store::retry;
use jiff::Timestamp;
use reserve::Reserved;
use tally_domain::order::Order;
use tally_domain::series::{NumberFormat, RangeLow, SpareCounter};

/// How the write of a chunk ended.
enum Written {
    Committed,
    /// Nothing was written; `conflict` when another write held an item or DynamoDB
    /// throttled one (then wait before trying again).
    Cancelled {
        conflict: bool,
    },
}

/// The counters one request holds, lowest first, and their period's format.
#[derive(Default)]
struct Held {
    counters: VecDeque<SpareCounter>,
    format: Option<NumberFormat>,
}

impl OrderService {
    pub(super) async fn number_fast(
        &self,
        batch: &mut Batch,
        mut queue: VecDeque<usize>,
    ) -> Result<(), OrderError> {
        let key: SeriesPeriod = (batch.series.series_id.clone(), batch.period.clone());
        let mut held = Held::default();
        // Spare counters come with their period's format version.
        if let (taken, Some(version)) = self.blocks.take(&key, queue.len() as u64, batch.now) {
            // A block never outlives its authorised range: counters of an expired one are
            // left unused.
            held.counters = taken
                .into_iter()
                .filter(|c| batch.series.counter_live(c.counter, batch.now))
                .collect();
            if !held.counters.is_empty() {
                held.format = Some(self.format_version(&mut batch.series, version).await?);
            }
        }
        let result = self.number_held(batch, &mut queue, &mut held).await;
        self.blocks.give_back(&key, held.counters.into());
        result
    }

    async fn number_held(
        &self,
        batch: &mut Batch,
        queue: &mut VecDeque<usize>,
        held: &mut Held,
    ) -> Result<(), OrderError> {
        // The counter's last value as last seen (`None`: not seen yet).
        let mut seen: Option<Option<u64>> = None;
        // Why the series reserves no more, once it does not.
        let mut stopped = None;
        let mut attempts = 0;
        while !queue.is_empty() {
            attempts += 1;
            if attempts > retry::ORDER_WRITE.budget() {
                batch.give_up(std::mem::take(queue), 1);
                return Ok(());
            }
            // What the request misses is reserved before it writes, so that its chunks
            // are full; a new block's counters follow those held.
            let missing = queue.len().saturating_sub(held.counters.len()) as u64;
            if missing > 0 && stopped.is_none() {
                match self.reserve(batch, missing, &mut seen).await? {
                    Reserved::Block(counters, format) => {
                        held.counters.extend(counters);
                        held.format = Some(format);
                    }
                    Reserved::Again => continue,
                    Reserved::Stop(stop) => stopped = Some(stop),
                }
            }
            if let (true, Some(stop)) = (held.counters.is_empty(), stopped) {
                batch.stop(std::mem::take(queue), stop);
                return Ok(());
            }
            match self.write_chunk(batch, queue, held).await? {
                Written::Committed => attempts = 0,
                Written::Cancelled { conflict: true } => retry::ORDER_WRITE.pause(attempts).await,
                Written::Cancelled { conflict: false } => {}
            }
        }
        Ok(())
    }

    /// Writes the next orders of `queue` with the lowest counters held.
    async fn write_chunk(
        &self,
        batch: &mut Batch,
        queue: &mut VecDeque<usize>,
        held: &mut Held,
    ) -> Result<Written, OrderError> {
        let format = held.format.clone().expect("set with the counters");
        // Room for every notice the counters held may bring.
        let lows = self.lows_to_notice(batch, &held.counters).await?;
        let indexes = chunk_of(batch, queue, held.counters.len() as u64, lows.len());
        let counters: Vec<SpareCounter> = held.counters.drain(..indexes.len()).collect();
        let lows = brought_by(lows, &counters);
        let orders: Vec<Order> = indexes
            .iter()
            .zip(&counters)
            .map(|(&index, c)| batch.numbered(index, c.counter, &format))
            .collect();
        let invoices: Vec<Option<InvoiceRef>> = indexes
            .iter()
            .map(|&index| batch.invoices[index].clone())
            .collect();
        let extras = OrdersExtras {
            invoices: &invoices,
            lows: &lows,
            ..OrdersExtras::default()
        };
        let outcome = self
            .store
            .commit_orders(&batch.series.series_id, &batch.period, &orders, &extras)
            .await;
        let cancelled = match outcome {
            Ok(OrdersCommit::Committed) => {
                lows.iter().for_each(|low| self.remember_low_notice(low));
                for (order, index) in orders.into_iter().zip(&indexes) {
                    batch.created(*index, order);
                }
                queue.drain(..indexes.len());
                return Ok(Written::Committed);
            }
            Ok(OrdersCommit::Cancelled(cancelled)) => *cancelled,
            Err(err) => {
                // The write may have committed: its counters are tried again, never reused
                // blindly.
                return_counters(held, counters, |c| SpareCounter {
                    doubtful: true,
                    ..c
                });
                return Err(err.into());
            }
        };
        let conflict = cancelled.conflict;
        // Another process wrote these notices: the chunk goes again without them.
        for &j in &cancelled.lows_written {
            self.remember_low_notice(&lows[j]);
        }
        let taken = self
            .settle_cancelled(batch, queue, &indexes, &counters, cancelled)
            .await?;
        // Nothing of a cancelled transaction was written: its counters stay the request's,
        // but for those a lost write of theirs turned out to hold.
        let kept: Vec<SpareCounter> = counters
            .into_iter()
            .enumerate()
            .filter(|(j, _)| !taken.contains(j))
            .map(|(_, c)| c)
            .collect();
        return_counters(held, kept, |c| c);
        Ok(Written::Cancelled { conflict })
    }

    /// What a cancelled chunk says of its items: references with an order already,
    /// invoices that refuse their credit note, counters taken. Returns the positions of
    /// the counters taken.
    async fn settle_cancelled(
        &self,
        batch: &mut Batch,
        queue: &mut VecDeque<usize>,
        indexes: &[usize],
        counters: &[SpareCounter],
        cancelled: OrdersCancellation,
    ) -> Result<Vec<usize>, OrderError> {
        if let Some(&j) = cancelled.taken.iter().find(|&&j| !counters[j].doubtful) {
            return Err(StoreError::Invariant(format!(
                "number {} of {} {} already exists",
                counters[j].counter, batch.series.series_id, batch.period
            ))
            .into());
        }
        self.settle_repeats(batch, queue, indexes, cancelled.existing)
            .await?;
        for (j, refusal) in cancelled.invoices {
            refuse(batch, indexes[j], refusal);
            queue.retain(|&i| i != indexes[j]);
        }
        Ok(cancelled.taken)
    }

    /// The low notices `counters` bring that are not written: one per range among them at
    /// or past its low threshold. A notice this process does not know written is read
    /// (consistently); one found there is remembered and not carried.
    async fn lows_to_notice<'a>(
        &self,
        batch: &Batch,
        counters: impl IntoIterator<Item = &'a SpareCounter>,
    ) -> Result<Vec<RangeLow>, OrderError> {
        let mut lows: Vec<RangeLow> = Vec::new();
        for c in counters {
            let Some(low) = batch.series.low_passed(None, c.counter, Timestamp::now()) else {
                continue;
            };
            if self.low_notice_written(&low) || lows.iter().any(|l| l.range == low.range) {
                continue;
            }
            if self.store.range_low_written(&low).await? {
                self.remember_low_notice(&low);
                continue;
            }
            lows.push(low);
        }
        Ok(lows)
    }
}

/// The notices of `lows` that `counters` bring: a counter of theirs at or past the
/// range's low threshold.
fn brought_by(lows: Vec<RangeLow>, counters: &[SpareCounter]) -> Vec<RangeLow> {
    lows.into_iter()
        .filter(|low| {
            counters
                .iter()
                .any(|c| low.threshold <= c.counter && c.counter <= low.range.to)
        })
        .collect()
}

/// Puts counters back at the front of what a request holds, lowest first.
fn return_counters(
    held: &mut Held,
    counters: Vec<SpareCounter>,
    tag: impl Fn(SpareCounter) -> SpareCounter,
) {
    for counter in counters.into_iter().rev() {
        held.counters.push_front(tag(counter));
    }
}
