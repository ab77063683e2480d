//! Reserving a block: one atomic `ADD` of the period's counter, sized for the process
//! (its block size) and at least for what the request misses. A series with a room
//! (authorised ranges, a `max_length`, an exact width) reserves only inside it: the `ADD`
//! carries the condition that the counter is where the block still fits, and a counter
//! that must skip to the next range is moved there by a declared move. A block never
//! crosses a range's end, and never a period's: each period has its own counter.
//!
//! The room is the period's format's, which its counter fixes (`fmt`): a format changed
//! for a coming period leaves the current one numbering in its own. A process plans with
//! the version it knows for the period, else the newest; the `ADD` holds only if the
//! period numbers in that version (or has none yet), and a refusal tells the right one.

use jiff::Timestamp;
use std::ops::RangeInclusive;
use tally_domain::time::Epoch;
use tracing::warn;

use super::super::SeriesPeriod;
use super::super::batch::Batch;
use super::super::{OrderError, OrderService};
use crate::store::StoreError;
use crate::store::orders::{Bounds, CounterMoved, Reservation};
use tally_domain::order::{Move, Reason};
use tally_domain::series::{Jump, MAX_COUNTER, NumberFormat, SpareCounter, Stop};

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
        let (planned, format) = self.planned_format(batch, &key).await?;
        let bounded = !batch.series.definition.ranges.is_empty()
            || batch.series.ceiling(&format) < MAX_COUNTER;
        let (count, reservation) = if bounded {
            let last = seen.unwrap_or(None);
            let room = match self.room(batch, &format, last).await? {
                Ok(room) => room,
                Err(stop) => return Ok(Reserved::Stop(stop)),
            };
            if let Some(jump) = &room.jump {
                *seen = self.jump(batch, jump, last, planned).await?;
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
                .reserve_within(&series_id, &batch.period, start, count, planned, bounds)
                .await?;
            (count, reservation)
        } else {
            let count = size.reservation(wanted, MAX_COUNTER);
            let reservation = self
                .store
                .reserve_numbers(&series_id, &batch.period, start, count, planned)
                .await?;
            (count, reservation)
        };
        let (end, version) = match reservation {
            Reservation::Reserved { last, version } => (last, version),
            Reservation::Refused(counter) => {
                *seen = Some(counter.last);
                if let Some(fixed) = counter.format_version {
                    self.blocks.learned(&key, fixed);
                }
                return Ok(Reserved::Again);
            }
        };
        *seen = Some(Some(end));
        self.keep_block(batch, &key, end + 1 - count..=end, wanted, version)
            .await
    }

    /// The version to plan with and its format: the one this process learned for the
    /// period, else the newest. A learned version the series no longer has was pending
    /// for the period and was replaced before its first number: it is forgotten, and a
    /// refused `ADD` tells the period's version again.
    async fn planned_format(
        &self,
        batch: &mut Batch,
        key: &SeriesPeriod,
    ) -> Result<(u32, NumberFormat), OrderError> {
        if let Some(learned) = self.blocks.version(key) {
            if let Some(format) = self.stored_format(&mut batch.series, learned).await? {
                return Ok((learned, format));
            }
            self.blocks.forget_version(key);
        }
        let newest = batch.series.latest_version();
        Ok((
            newest,
            self.format_version(&mut batch.series, newest).await?,
        ))
    }

    /// Moves the counter from `last` over `jump`, a declared gap, and returns its last
    /// value now: the jump's end, or as read again if the counter changed meanwhile.
    async fn jump(
        &self,
        batch: &Batch,
        jump: &Jump,
        last: Option<u64>,
        version: u32,
    ) -> Result<Option<Option<u64>>, OrderError> {
        let series_id = &batch.series.series_id;
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
                series_id,
                &batch.period,
                last,
                &moved,
                version,
                now,
                None,
                None,
            )
            .await?;
        Ok(match moved_to {
            CounterMoved::Moved => Some(Some(jump.to)),
            CounterMoved::Changed => {
                let counter = self.store.get_counter(series_id, &batch.period).await?;
                Some(counter.and_then(|c| c.last))
            }
        })
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
        let format = self.format_version(&mut batch.series, version).await?;
        // Whatever planned the block, no counter past the period's format is issued (O3):
        // those are left unused.
        let ceiling = batch.series.ceiling(&format);
        let (first, last) = block.into_inner();
        if last > ceiling {
            warn!(
                series = %key.0, period = %key.1, first, last, ceiling,
                "counters past the period's format left unused"
            );
        }
        let last = last.min(ceiling);
        if first > last {
            return Ok(Reserved::Stop(Stop::SeriesExhausted));
        }
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
        Ok(Reserved::Block(counters, format))
    }
}
