//! Reserving a block: one atomic `ADD` of the period's counter, sized for the process
//! (its block size) and at least for what the request misses. A series with a room
//! (authorised ranges, a `max_length`, an exact width) reserves only inside it: the `ADD`
//! carries the condition that the counter is where the block still fits, and a counter
//! that must skip to the next range is moved there by a declared move. A block never
//! crosses a range's end, and never a period's: each period has its own counter.

use jiff::Timestamp;
use std::ops::RangeInclusive;
use tally_domain::time::Epoch;

use super::super::SeriesPeriod;
use super::super::batch::Batch;
use super::super::{OrderError, OrderService};
use crate::store::StoreError;
use crate::store::orders::{Bounds, CounterMoved, Reservation};
use tally_domain::order::{Move, Reason};
use tally_domain::series::{MAX_COUNTER, NumberFormat, SpareCounter, Stop};

/// Counters for the front of the queue, or why there are none.
pub(super) enum Reserved {
    /// The request's share of a new block, lowest first, in the period's format.
    Block(Vec<SpareCounter>, NumberFormat),
    /// The counter was not where it was thought to be: plan again.
    Again,
    Stop(Stop),
}

impl OrderService {
    /// Reserves a block for `wanted` more orders: the request keeps what it needs and the
    /// process the rest. A series without a room reserves at once; one with a room as
    /// much as its current range (or format) still holds.
    pub(super) async fn reserve(
        &self,
        batch: &mut Batch,
        wanted: u64,
        seen: &mut Option<Option<u64>>,
    ) -> Result<Reserved, OrderError> {
        let key: SeriesPeriod = (batch.series.series_id.clone(), batch.period.clone());
        let size = self.blocks.ran_dry(&key, batch.now);
        let series_id = batch.series.series_id.clone();
        let start = batch.series.definition.start;
        let latest = batch.series.latest_version();
        let planned = self.format_version(&mut batch.series, latest).await?;
        let bounded = !batch.series.definition.ranges.is_empty()
            || batch.series.ceiling(&planned) < MAX_COUNTER;
        if !bounded {
            let count = size.reservation(wanted, MAX_COUNTER);
            let (last, version) = self
                .store
                .reserve_numbers(&series_id, &batch.period, start, count, latest)
                .await?;
            return self
                .keep_block(batch, &key, last + 1 - count..=last, wanted, version)
                .await;
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
            let now = Timestamp::now().epoch_millis();
            let moved_to = self
                .store
                .move_counter(
                    &series_id,
                    &batch.period,
                    last,
                    &moved,
                    latest,
                    now,
                    None,
                    None,
                )
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
        let count = size.reservation(wanted, room.counters());
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
        // The block that passes the low threshold writes the notice; so does any later one of a process
        // that has not, in case that writer died first (the notice is written once).
        if let Some(low) = batch.series.low_passed(None, end, Timestamp::now())
            && !self.low_notice_written(&low)
        {
            self.store.write_low_notice(&low).await?;
            self.remember_low_notice(&low);
        }
        self.keep_block(batch, &key, end + 1 - count..=end, wanted, version)
            .await
    }

    /// The request's share of a block (its first `wanted` counters); the process keeps
    /// the rest.
    async fn keep_block(
        &self,
        batch: &mut Batch,
        key: &SeriesPeriod,
        block: RangeInclusive<u64>,
        wanted: u64,
        version: u32,
    ) -> Result<Reserved, OrderError> {
        let (first, last) = block.into_inner();
        let mine = last.min(first + wanted - 1);
        self.blocks
            .reserved(key, mine + 1..=last, version, batch.now);
        let counters = (first..=mine)
            .map(|counter| SpareCounter {
                counter,
                reserved_at: batch.now,
                doubtful: false,
            })
            .collect();
        let format = self.format_version(&mut batch.series, version).await?;
        Ok(Reserved::Block(counters, format))
    }
}
