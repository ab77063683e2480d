//! The counter item of a series and period: the last number issued (`last`), the head of
//! the hash chain (`head`, gapless series), the format version the period is numbered in
//! (`fmt`, fixed by its first write), the lease of the writer numbering it now
//! (`pending`, gapless series), the end of the turns booked (`turns`, see `turns.rs`) and
//! the token of the last reservation (`reserved_by`, fast series, see `reserve.rs`).
//!
//! A gapless writer moves `last` and `head` in the transaction that writes its orders, on
//! condition that `last` is what it expects and that it may move the counter
//! ([`CounterRight`]). A batch first leases the counter with a single conditional update (one
//! write unit, and cheap to lose), so that writers that would collide lose on the lease,
//! not on a transaction of up to a hundred items. A lease whose owner died expires and is
//! taken over; its orders were never written, so no number is lost and none repeats. A
//! single post needs no lease: its transaction of three items moves the counter from the
//! value its process knows, and a cancellation returns the counter as it is.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use serde::{Deserialize, Serialize};

use super::super::codec::{Item, derived, from_item, key, n, s};
use super::super::error::{build_error, done_unless_failed, sdk_error};
use super::super::table::{Verdict, put_if_absent};
use super::super::transaction::{Roled, RoledOutcome};
use super::super::{Store, StoreError, keys};
use super::codec::{encode_move, encode_range_low};
use tally_domain::ids::SeriesId;
use tally_domain::journal::Draft;
use tally_domain::order::Move;
use tally_domain::series::{Period, RangeLow};

pub(super) const LAST: &str = "last";
pub(super) const HEAD: &str = "head";
pub(super) const FORMAT_VERSION: &str = "fmt";
pub(super) const PENDING: &str = "pending";
/// The end of the last turn booked (milliseconds since the epoch): turns follow each
/// other in booking order.
pub(super) const TURNS: &str = "turns";
/// The last counter of the latest move: while `last` equals it, the last counter was
/// skipped, not issued.
const MOVED_TO: &str = "moved_to";
/// Fast series: the token of the reservation that last moved the counter (see
/// `reserve.rs`); a move removes it.
pub(super) const RESERVED_BY: &str = "reserved_by";
pub(super) const OWNER: &str = "owner";
pub(super) const UNTIL: &str = "until";

/// A live lease of a counter, stored as it derives: its fields are the attributes
/// `OWNER` and `UNTIL` that conditions name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    pub owner: String,
    /// Milliseconds since the epoch; past it, anyone may take the lease over.
    pub until: i64,
}

/// A period's counter as stored, read as it derives: its fields are the attributes that
/// updates name (`LAST`, `HEAD`, `FORMAT_VERSION`, ...; a test compares them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct CounterState {
    pub last: Option<u64>,
    pub head: Option<String>,
    /// The format version the period is numbered in, once fixed.
    #[serde(rename = "fmt")]
    pub format_version: Option<u32>,
    pub pending: Option<Pending>,
    /// The last counter a move skipped.
    pub moved_to: Option<u64>,
    /// The end of the last turn booked, in milliseconds since the epoch.
    pub turns: Option<i64>,
}

pub(crate) fn decode_counter(item: &Item) -> Result<CounterState, StoreError> {
    from_item(item)
}

/// What a lease found.
#[derive(Debug)]
pub enum Lease {
    /// The caller owns the counter; its state now.
    Leased(CounterState),
    /// Another writer owns it and its lease is live: that lease, when DynamoDB told it.
    Busy(Option<Pending>),
}

/// How a move of the counter ended.
#[derive(Debug)]
pub enum CounterMoved {
    Moved,
    /// The counter changed since it was read, or is leased: read it again.
    Changed,
}

impl Store {
    /// A period's counter, if it exists.
    pub async fn get_counter(
        &self,
        series_id: &SeriesId,
        period: &Period,
    ) -> Result<Option<CounterState>, StoreError> {
        self.get_consistent(keys::series_counter(series_id, period))
            .await?
            .as_ref()
            .map(decode_counter)
            .transpose()
    }

    /// Leases a gapless counter for `owner` until `until` (milliseconds since the epoch),
    /// unless another writer holds a lease that is live at `now`. The period's format is
    /// fixed to `format_version` if no earlier write fixed it. One conditional update;
    /// a repeat by the SDK finds its own lease and succeeds.
    pub async fn lease_counter(
        &self,
        series_id: &SeriesId,
        period: &Period,
        owner: &str,
        format_version: u32,
        now: i64,
        until: i64,
    ) -> Result<Lease, StoreError> {
        self.write_meter().single_write(1);
        let lease = Pending {
            owner: owner.to_owned(),
            until,
        };
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::series_counter(series_id, period))))
            .update_expression("SET #pending = :lease, #fmt = if_not_exists(#fmt, :fmt)")
            .condition_expression(
                "attribute_not_exists(#pending) OR #pending.#until < :now OR #pending.#owner = :owner",
            )
            .expression_attribute_names("#pending", PENDING)
            .expression_attribute_names("#until", UNTIL)
            .expression_attribute_names("#owner", OWNER)
            .expression_attribute_names("#fmt", FORMAT_VERSION)
            .expression_attribute_values(":lease", derived(&lease)?)
            .expression_attribute_values(":fmt", n(format_version))
            .expression_attribute_values(":now", n(now))
            .expression_attribute_values(":owner", s(owner))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match result {
            Ok(output) => {
                let item = output.attributes.ok_or_else(|| {
                    StoreError::Invariant("the leased counter was not returned".into())
                })?;
                Ok(Lease::Leased(decode_counter(&item)?))
            }
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                    let held = failed.item().map(decode_counter).transpose()?;
                    Ok(Lease::Busy(held.and_then(|c| c.pending)))
                }
                Some(UpdateItemError::TransactionConflictException(_)) => Ok(Lease::Busy(None)),
                _ => Err(sdk_error("UpdateItem", err)),
            },
        }
    }

    /// Gives a lease up, if `owner` still holds it; a lease no longer held (given up by
    /// an earlier try whose answer was lost, or taken over) counts as given up.
    pub async fn release_lease(
        &self,
        series_id: &SeriesId,
        period: &Period,
        owner: &str,
    ) -> Result<(), StoreError> {
        self.write_meter().single_write(1);
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::series_counter(series_id, period))))
            .update_expression("REMOVE #pending")
            .condition_expression("#pending.#owner = :owner")
            .expression_attribute_names("#pending", PENDING)
            .expression_attribute_names("#owner", OWNER)
            .expression_attribute_values(":owner", s(owner))
            .send()
            .await;
        done_unless_failed(result)
    }

    /// Moves the counter forward over `moved.from..=moved.to` and records the move, if
    /// the counter still is at `expected` (`None`: no number yet) and no live lease holds
    /// it at `now`. In a gapless series `head` is the new head of the chain, the move's own
    /// link. The period's format is fixed if it was not, and the last reservation's token
    /// removed (no re-sent reservation takes the move for its own). A move that takes a
    /// range past its low share writes the range's mark with it (`low`). An operator's move
    /// carries its journal `entry` in the same transaction; a jump of a fast series over a
    /// range's end is no operator's and carries none.
    #[allow(clippy::too_many_arguments)]
    pub async fn move_counter(
        &self,
        series_id: &SeriesId,
        period: &Period,
        expected: Option<u64>,
        moved: &Move,
        format_version: u32,
        now: i64,
        low: Option<&RangeLow>,
        entry: Option<&Draft>,
    ) -> Result<CounterMoved, StoreError> {
        let mut update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::series_counter(series_id, period))))
            .expression_attribute_names("#last", LAST)
            .expression_attribute_names("#fmt", FORMAT_VERSION)
            .expression_attribute_names("#pending", PENDING)
            .expression_attribute_names("#until", UNTIL)
            .expression_attribute_names("#moved", MOVED_TO)
            .expression_attribute_names("#reserved_by", RESERVED_BY)
            .expression_attribute_values(":to", n(moved.to))
            .expression_attribute_values(":fmt", n(format_version))
            .expression_attribute_values(":now", n(now));
        let lease_free = "(attribute_not_exists(#pending) OR #pending.#until < :now)";
        update = match expected {
            None => {
                update.condition_expression(format!("attribute_not_exists(#last) AND {lease_free}"))
            }
            Some(old) => update
                .condition_expression(format!("#last = :old AND {lease_free}"))
                .expression_attribute_values(":old", n(old)),
        };
        update = match &moved.hash {
            Some(head) => update
                .update_expression("SET #last = :to, #moved = :to, #fmt = if_not_exists(#fmt, :fmt), #head = :head REMOVE #pending, #reserved_by")
                .expression_attribute_names("#head", HEAD)
                .expression_attribute_values(":head", s(head)),
            None => update.update_expression(
                "SET #last = :to, #moved = :to, #fmt = if_not_exists(#fmt, :fmt) REMOVE #pending, #reserved_by",
            ),
        };
        let mut tx = Roled::with_capacity(3);
        tx.push(
            MoveRole::Counter,
            TransactWriteItem::builder()
                .update(update.build().map_err(build_error)?)
                .build(),
        );
        tx.push(
            MoveRole::Move,
            put_if_absent(self.table(), encode_move(series_id, period, moved), false)?,
        );
        if let Some(low) = low {
            tx.push(
                MoveRole::RangeLow,
                put_if_absent(self.table(), encode_range_low(low), false)?,
            );
        }
        let outcome = match entry {
            Some(entry) => self.transact_journaled(tx, entry).await?,
            None => self.transact_roled(tx).await?,
        };
        match outcome {
            RoledOutcome::Committed => Ok(CounterMoved::Moved),
            RoledOutcome::Busy => Ok(CounterMoved::Changed),
            RoledOutcome::Cancelled(verdicts) => {
                let verdict = |role| verdicts.iter().find(|(r, _)| *r == role).map(|(_, v)| v);
                // Numbers are written under the counter: while the counter is as read, no
                // entry can hold the move's last number. Once the counter has moved on,
                // writers may have passed it, which is a change, not a bug.
                if matches!(verdict(MoveRole::Counter), Some(Verdict::Passed))
                    && matches!(verdict(MoveRole::Move), Some(Verdict::ConditionFailed(_)))
                {
                    return Err(StoreError::Invariant(format!(
                        "an entry already holds counter {} of {series_id} {period}",
                        moved.to
                    )));
                }
                Ok(CounterMoved::Changed)
            }
        }
    }
}

/// The items of a move's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MoveRole {
    Counter,
    /// The move's own entry, at its last number.
    Move,
    RangeLow,
}

/// The counter's part of a gapless transaction: moves `last` and `head`, on condition that
/// the counter is as the writer knows it (`expected`, the period's format) and that the
/// writer may move it ([`CounterRight`]).
pub(super) fn gapless_counter_update(
    table: &str,
    series_id: &SeriesId,
    period: &Period,
    advance: &CounterAdvance,
) -> Result<TransactWriteItem, StoreError> {
    let mut update = Update::builder()
        .table_name(table)
        .set_key(Some(key(keys::series_counter(series_id, period))))
        .expression_attribute_names("#last", LAST)
        .expression_attribute_names("#head", HEAD)
        .expression_attribute_names("#fmt", FORMAT_VERSION)
        .expression_attribute_names("#pending", PENDING)
        .expression_attribute_names("#owner", OWNER)
        .expression_attribute_values(":new", n(advance.new))
        .expression_attribute_values(":head", s(&advance.head))
        .expression_attribute_values(":fmt", n(advance.format_version))
        .expression_attribute_values(":owner", s(&advance.owner))
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
    let (set, held) = match advance.holding {
        CounterRight::Lease { until: Some(until) } => {
            update = update
                .expression_attribute_names("#until", UNTIL)
                .expression_attribute_values(":until", n(until));
            (
                "SET #last = :new, #head = :head, #pending.#until = :until",
                "#pending.#owner = :owner AND #fmt = :fmt",
            )
        }
        CounterRight::Lease { until: None } => (
            "SET #last = :new, #head = :head REMOVE #pending",
            "#pending.#owner = :owner AND #fmt = :fmt",
        ),
        CounterRight::Turn { now } => {
            update = update
                .expression_attribute_names("#until", UNTIL)
                .expression_attribute_values(":now", n(now));
            (
                "SET #last = :new, #head = :head",
                "(attribute_not_exists(#pending) OR #pending.#until < :now OR #pending.#owner = :owner) \
                 AND #fmt = :fmt",
            )
        }
        CounterRight::Free { now } => {
            update = update
                .expression_attribute_names("#until", UNTIL)
                .expression_attribute_names("#turns", TURNS)
                .expression_attribute_values(":now", n(now));
            // The first number of a period fixes its format, as a lease would have.
            (
                "SET #last = :new, #head = :head, #fmt = :fmt REMOVE #pending",
                "(attribute_not_exists(#pending) OR #pending.#until < :now OR #pending.#owner = :owner) \
                 AND (attribute_not_exists(#turns) OR #turns < :now) \
                 AND (attribute_not_exists(#fmt) OR #fmt = :fmt)",
            )
        }
    };
    update = update.update_expression(set);
    update = match advance.expected {
        None => update.condition_expression(format!("{held} AND attribute_not_exists(#last)")),
        Some(old) => update
            .condition_expression(format!("{held} AND #last = :old"))
            .expression_attribute_values(":old", n(old)),
    };
    Ok(TransactWriteItem::builder()
        .update(update.build().map_err(build_error)?)
        .build())
}

/// What entitles a gapless writer to move the counter, and what becomes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterRight {
    /// It leased the counter: keeps the lease until then (more chunks follow), or gives
    /// it up.
    Lease { until: Option<i64> },
    /// It is its turn (booked, see `Store::book_turn`), and no other writer holds a live
    /// lease at `now` (milliseconds since the epoch).
    Turn { now: i64 },
    /// No turn is booked past `now` and no other writer holds a live lease: it moves the
    /// counter from the value it knows, or learns it.
    Free { now: i64 },
}

/// How a gapless chunk moves the counter.
#[derive(Debug, Clone)]
pub struct CounterAdvance {
    pub owner: String,
    pub format_version: u32,
    /// `None` when the period has no number yet.
    pub expected: Option<u64>,
    pub new: u64,
    /// The chain's head after the chunk.
    pub head: String,
    pub holding: CounterRight,
}

#[cfg(test)]
mod tests;
