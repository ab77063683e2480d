//! Fast series: a block of numbers reserved with one atomic update of the counter,
//! within bounds when the series has a room (authorised ranges, a length), in the format
//! version the writer planned with. Each update leaves its own token on the counter, so
//! that a re-sent update that finds the counter moved tells its own earlier write (the
//! answer lost) from another writer's.

use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};

use super::super::codec::{Item, Reader, key, n, s};
use super::super::error::conditional;
use super::super::{Store, StoreError, keys, random_token};
use super::counter::{CounterState, FORMAT_VERSION, LAST, RESERVED_BY, decode_counter};
use tally_domain::ids::SeriesId;
use tally_domain::series::Period;

/// Where a bounded reservation must find the counter: `last` in `low..=high` (the block
/// then stays within the room), or absent when `absent_ok`.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub low: u64,
    pub high: u64,
    pub absent_ok: bool,
}

/// What a reservation found.
#[derive(Debug)]
pub enum Reservation {
    /// The block ends at `last`; the period's format version.
    Reserved { last: u64, version: u32 },
    /// The counter was outside the bounds, or its period numbers in another format
    /// version than the one planned with: as it is.
    Refused(CounterState),
}

impl Store {
    /// Fast series without a room: reserves `count` numbers with one atomic update, if
    /// the period numbers in `format_version` (or has no format yet); the block is
    /// `last - count + 1 ..= last`. `first` is the period's first value.
    pub async fn reserve_numbers(
        &self,
        series_id: &SeriesId,
        period: &Period,
        first: u64,
        count: u64,
        format_version: u32,
    ) -> Result<Reservation, StoreError> {
        // No counter goes past MAX_COUNTER: these bounds hold any counter there is.
        let anywhere = Bounds {
            low: 0,
            high: u64::MAX - count,
            absent_ok: true,
        };
        self.reserve_within(series_id, period, first, count, format_version, anywhere)
            .await
    }

    /// Fast series: reserves `count` numbers with one atomic update, if the counter is
    /// within `bounds` (so that the block stays inside the series' room) and the period
    /// numbers in `format_version`, the one the bounds were planned with, or has no format
    /// yet (then this write fixes it); otherwise returns the counter as it is. `first` is
    /// the period's first value. A re-send by the SDK after a lost answer that finds its
    /// own write is the reservation made.
    pub async fn reserve_within(
        &self,
        series_id: &SeriesId,
        period: &Period,
        first: u64,
        count: u64,
        format_version: u32,
        bounds: Bounds,
    ) -> Result<Reservation, StoreError> {
        self.write_meter().single_write(1);
        let within = "#last BETWEEN :low AND :high";
        let within = if bounds.absent_ok {
            format!("(attribute_not_exists(#last) OR {within})")
        } else {
            within.to_owned()
        };
        let condition = format!("{within} AND (attribute_not_exists(#fmt) OR #fmt = :fmt)");
        let token = s(random_token());
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::series_counter(series_id, period))))
            .update_expression(
                "SET #last = if_not_exists(#last, :before_first) + :count, #fmt = :fmt, \
                 #reserved_by = :token",
            )
            .condition_expression(condition)
            .expression_attribute_names("#last", LAST)
            .expression_attribute_names("#fmt", FORMAT_VERSION)
            .expression_attribute_names("#reserved_by", RESERVED_BY)
            .expression_attribute_values(":token", token.clone())
            .expression_attribute_values(":before_first", n(first - 1))
            .expression_attribute_values(":count", n(count))
            .expression_attribute_values(":fmt", n(format_version))
            .expression_attribute_values(":low", n(bounds.low))
            .expression_attribute_values(":high", n(bounds.high))
            .return_values(ReturnValue::UpdatedNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match conditional(result)? {
            Ok(output) => {
                let item = output
                    .attributes()
                    .ok_or_else(|| StoreError::Invariant("the counter was not returned".into()))?;
                reserved(item)
            }
            // Its own earlier write, re-sent after a lost answer: the counter has not moved
            // since (a move removes the token), so the block ends at its `last`.
            Err(Some(old)) if old.get(RESERVED_BY) == Some(&token) => reserved(&old),
            Err(old) => Ok(Reservation::Refused(
                old.as_ref()
                    .map(decode_counter)
                    .transpose()?
                    .unwrap_or_default(),
            )),
        }
    }
}

/// The reservation that left the counter as `item`.
fn reserved(item: &Item) -> Result<Reservation, StoreError> {
    let r = Reader::new(item);
    Ok(Reservation::Reserved {
        last: r.num(LAST)?,
        version: r.num(FORMAT_VERSION)?,
    })
}
