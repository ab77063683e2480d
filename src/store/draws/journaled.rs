//! The operator's writes of a draw item, each with its journal entry in the same
//! transaction: creating the draw, declaring or withdrawing its beacon until a buyer
//! trusted it, freezing its eligible list.

use aws_sdk_dynamodb::types::builders::UpdateBuilder;
use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use jiff::Timestamp;

use super::super::codec::{derived, key, n, s, timestamp};
use super::super::error::build_error;
use super::super::table::{Inserted, Verdict, put_if_absent, unless_held};
use super::super::transaction::{Roled, RoledOutcome};
use super::super::{PARTITION_KEY, Store, StoreError, keys};
use super::item::{BEACON, BEACON_FIXED, CLOSES_AT, encode_network};
use super::{FROZEN, STATUS, VOIDED, decode_draw, encode_draw};
use tally_domain::draw::{Draw, DrawStatus, Frozen};
use tally_domain::ids::DrawId;
use tally_domain::journal::Draft;
use tally_domain::winners::BeaconNetwork;

/// The attribute of a stored network that names it (`NetworkFields::name`).
const NETWORK_NAME: &str = "name";

/// What a change of the beacon found.
#[derive(Debug)]
pub enum BeaconChange {
    /// Recorded: the draw as it is now.
    Set(Draw),
    /// The draw no longer sells, has this beacon already, or its beacon is fixed: the
    /// draw as it is.
    Refused(Draw),
}

/// What a freeze found.
#[derive(Debug)]
pub enum Freeze {
    /// Written, or found frozen already: the draw as it is now.
    Frozen(Draw),
    /// The draw is not closed, or a void landed since the list was read: the draw as it is.
    Moved(Draw),
}

/// How a journalled write of the draw item ended.
enum Journaled {
    Committed,
    /// Its condition failed: the draw as it was, if there is one.
    Refused(Option<Box<Draw>>),
}

impl Store {
    /// Writes a new draw with the operator's journal `entry`, or returns the draw that has
    /// the id (and journals nothing). An existing draw with this draw's own permutation key
    /// is this call's own write, re-sent after a lost answer.
    pub async fn insert_draw(
        &self,
        draw: &Draw,
        entry: &Draft,
    ) -> Result<Inserted<Draw>, StoreError> {
        let put = put_if_absent(self.table(), encode_draw(draw)?, true)?;
        unless_held(|| async {
            // The draw enters the `list` index.
            match self.write_journaled(put.clone(), 1, entry).await? {
                Journaled::Refused(Some(existing)) if existing.key != draw.key => {
                    Ok(Inserted::Existing(*existing))
                }
                Journaled::Refused(Some(_)) | Journaled::Committed => Ok(Inserted::New),
                Journaled::Refused(None) => Err(StoreError::Contention { attempts: 1 }),
            }
        })
        .await
    }

    /// Declares (`Some`) or withdraws (`None`) the draw's beacon while the draw sells,
    /// with the operator's journal `entry`: the condition keeps a beacon from changing once
    /// the draw is closing, closed or past its `closes_at` by `now`, keeps one from being
    /// withdrawn or switched once the beacon is fixed (`fix_beacon`), and refuses a change
    /// to the beacon the draw has (by name), so that a repeat is journalled once. With
    /// `fix`, a beacon declared on a draw that has none is fixed by the same write. `None`
    /// when the draw does not exist.
    pub async fn set_beacon(
        &self,
        draw_id: &DrawId,
        beacon: Option<&BeaconNetwork>,
        fix: bool,
        now: Timestamp,
        entry: &Draft,
    ) -> Result<Option<BeaconChange>, StoreError> {
        let selling = "attribute_exists(#pk) AND #status = :open \
                       AND (attribute_not_exists(#closes_at) OR #closes_at > :now)";
        let update = draw_update(self.table(), draw_id)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#closes_at", CLOSES_AT)
            .expression_attribute_names("#beacon", BEACON)
            .expression_attribute_names("#fixed", BEACON_FIXED)
            .expression_attribute_values(":open", s(DrawStatus::Open.as_str()))
            .expression_attribute_values(":now", timestamp(now));
        // A draw without a beacon may still declare one: that only takes the winners out
        // of the reach of whoever reads the table.
        let update = match beacon {
            Some(beacon) if fix => update
                .update_expression("SET #beacon = :beacon, #fixed = :yes")
                .condition_expression(format!("{selling} AND attribute_not_exists(#beacon)"))
                .expression_attribute_values(":yes", AttributeValue::Bool(true))
                .expression_attribute_values(":beacon", encode_network(beacon)?),
            Some(beacon) => update
                .update_expression("SET #beacon = :beacon")
                .condition_expression(format!(
                    "{selling} AND (attribute_not_exists(#beacon) \
                     OR (attribute_not_exists(#fixed) AND #beacon.#name <> :name))"
                ))
                .expression_attribute_names("#name", NETWORK_NAME)
                .expression_attribute_values(":name", s(beacon.name()))
                .expression_attribute_values(":beacon", encode_network(beacon)?),
            None => update
                .update_expression("REMOVE #beacon")
                .condition_expression(format!(
                    "{selling} AND attribute_exists(#beacon) AND attribute_not_exists(#fixed)"
                )),
        };
        let write = transact_update(update)?;
        unless_held(|| async {
            Ok(match self.write_journaled(write.clone(), 0, entry).await? {
                Journaled::Committed => self.get_draw(draw_id).await?.map(BeaconChange::Set),
                Journaled::Refused(draw) => draw.map(|draw| BeaconChange::Refused(*draw)),
            })
        })
        .await
    }

    /// Writes `frozen` on a closed draw that is not frozen and has exactly `voided` voided
    /// tickets, the count its list was computed with, with the close's journal `entry`.
    /// `None` when the draw does not exist.
    pub async fn freeze_draw(
        &self,
        draw_id: &DrawId,
        frozen: &Frozen,
        voided: u64,
        entry: &Draft,
    ) -> Result<Option<Freeze>, StoreError> {
        let voided_as_read = if voided == 0 {
            "attribute_not_exists(#voided)"
        } else {
            "#voided = :voided"
        };
        let mut update = draw_update(self.table(), draw_id)
            .update_expression("SET #frozen = :frozen")
            .condition_expression(format!(
                "attribute_exists(#pk) AND attribute_not_exists(#frozen) \
                 AND #status = :closed AND {voided_as_read}"
            ))
            .expression_attribute_names("#frozen", FROZEN)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#voided", VOIDED)
            .expression_attribute_values(":frozen", derived(frozen)?)
            .expression_attribute_values(":closed", s(DrawStatus::Closed.as_str()));
        if voided > 0 {
            update = update.expression_attribute_values(":voided", n(voided));
        }
        let write = transact_update(update)?;
        unless_held(|| async {
            Ok(match self.write_journaled(write.clone(), 0, entry).await? {
                Journaled::Committed => self.get_draw(draw_id).await?.map(Freeze::Frozen),
                Journaled::Refused(draw) => draw.map(|draw| match draw.frozen {
                    Some(_) => Freeze::Frozen(*draw),
                    None => Freeze::Moved(*draw),
                }),
            })
        })
        .await
    }

    /// Sends `write` of the draw item with the journal `entry`; another write holding the
    /// draw is contention, which `unless_held` tries again.
    async fn write_journaled(
        &self,
        write: TransactWriteItem,
        index_updates: u64,
        entry: &Draft,
    ) -> Result<Journaled, StoreError> {
        let mut tx = Roled::with_capacity(1);
        tx.push((), write);
        tx.add_index_updates(index_updates);
        match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => Ok(Journaled::Committed),
            RoledOutcome::Cancelled(verdicts) => match verdicts.into_iter().next() {
                Some(((), Verdict::ConditionFailed(item))) => {
                    let draw = item.as_ref().map(decode_draw).transpose()?;
                    Ok(Journaled::Refused(draw.map(Box::new)))
                }
                _ => Err(StoreError::Contention { attempts: 1 }),
            },
            RoledOutcome::Busy => Err(StoreError::Contention { attempts: 1 }),
        }
    }
}

/// An update of the draw item (`#pk` names its key) that answers the item as it was
/// when its condition fails.
fn draw_update(table: &str, draw_id: &DrawId) -> UpdateBuilder {
    Update::builder()
        .table_name(table)
        .set_key(Some(key(keys::draw(draw_id))))
        .expression_attribute_names("#pk", PARTITION_KEY)
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
}

fn transact_update(update: UpdateBuilder) -> Result<TransactWriteItem, StoreError> {
    let update = update.build().map_err(build_error)?;
    Ok(TransactWriteItem::builder().update(update).build())
}
