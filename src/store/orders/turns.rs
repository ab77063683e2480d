//! Turns on a gapless counter: writers that meet on one counter book consecutive turns
//! instead of racing for it. A booking is one update of the counter item that never
//! loses: it extends the booked time by the writer's turn, or starts it now when no turn
//! is booked ahead, and returns the counter. A turn is its writer's by time alone: its
//! transactions still move the counter only from the value they expect, and no other
//! single post moves it while a turn is booked ahead (`CounterRight::Free`).

use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};

use super::super::codec::{key, n};
use super::super::error::conditional;
use super::super::table::unless_held;
use super::super::{Store, StoreError, keys};
use super::counter::{CounterState, FORMAT_VERSION, TURNS, decode_counter};
use tally_domain::ids::SeriesId;
use tally_domain::series::Period;

/// A turn booked on a counter.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Milliseconds since the epoch.
    pub start: i64,
    pub end: i64,
    /// The counter as the booking found it.
    pub counter: CounterState,
}

/// Where a booking puts its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnPlace {
    /// After the turns booked ahead.
    Queued,
    /// From now: no turn is booked past now.
    Now,
}

/// What a writer books: a turn of `length` milliseconds, asked for at `now`, on a counter
/// whose period numbers in `format_version` unless an earlier write fixed another.
#[derive(Debug, Clone, Copy)]
pub struct Booking {
    pub format_version: u32,
    pub now: i64,
    pub length: i64,
}

impl Store {
    /// Books a turn, trying `place` first (a booking whose place is wrong tries the other,
    /// one unit each).
    pub async fn book_turn(
        &self,
        series_id: &SeriesId,
        period: &Period,
        booking: Booking,
        place: TurnPlace,
    ) -> Result<Turn, StoreError> {
        let counter = keys::series_counter(series_id, period);
        let mut place = place;
        for _ in 0..4 {
            match unless_held(|| self.book_at(&counter, booking, place)).await? {
                Some(turn) => return Ok(turn),
                None if place == TurnPlace::Queued => place = TurnPlace::Now,
                None => place = TurnPlace::Queued,
            }
        }
        Err(StoreError::Contention { attempts: 4 })
    }

    /// One booking at `place` on the counter item `counter`; `None` when the place is
    /// wrong.
    async fn book_at(
        &self,
        counter: &str,
        booking: Booking,
        place: TurnPlace,
    ) -> Result<Option<Turn>, StoreError> {
        self.write_meter().single_write(1);
        let update = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(counter.to_owned())))
            .expression_attribute_names("#turns", TURNS)
            .expression_attribute_names("#fmt", FORMAT_VERSION)
            .expression_attribute_values(":fmt", n(booking.format_version))
            .expression_attribute_values(":now", n(booking.now))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::None);
        let update = match place {
            TurnPlace::Queued => update
                .update_expression(
                    "SET #turns = #turns + :length, #fmt = if_not_exists(#fmt, :fmt)",
                )
                .condition_expression("#turns >= :now")
                .expression_attribute_values(":length", n(booking.length)),
            TurnPlace::Now => update
                .update_expression("SET #turns = :end, #fmt = if_not_exists(#fmt, :fmt)")
                .condition_expression("attribute_not_exists(#turns) OR #turns < :now")
                .expression_attribute_values(":end", n(booking.now + booking.length)),
        };
        match conditional(update.send().await)? {
            Ok(output) => {
                let item = output.attributes.ok_or_else(|| {
                    StoreError::Invariant("the booked counter was not returned".into())
                })?;
                let counter = decode_counter(&item)?;
                let end = counter
                    .turns
                    .ok_or_else(|| StoreError::Invariant("a booked counter has no turns".into()))?;
                Ok(Some(Turn {
                    start: end - booking.length,
                    end,
                    counter,
                }))
            }
            Err(_) => Ok(None),
        }
    }
}
