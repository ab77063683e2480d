//! Declaring the beacon while the draw sells, with a conditional write journalled in
//! its own transaction.

use aws_sdk_dynamodb::types::{ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update};
use jiff::Timestamp;

use super::super::codec::{key, s, timestamp};
use super::super::error::build_error;
use super::super::table::{Verdict, unless_held};
use super::super::transaction::{Roled, RoledOutcome};
use super::super::{PARTITION_KEY, Store, StoreError, keys};
use super::item::{BEACON, CLOSES_AT, STATUS, decode_draw, encode_network};
use tally_domain::draw::{Draw, DrawStatus};
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
    /// The draw no longer sells, or has this beacon already: the draw as it is.
    Refused(Draw),
}

impl Store {
    /// Declares (`Some`) or withdraws (`None`) the draw's beacon while the draw sells,
    /// with the operator's journal `entry` in the same transaction: the draw's condition
    /// keeps a beacon from changing once the draw is closing, closed or past its
    /// `closes_at` by `now`, and refuses a change to the beacon the draw has (by name), so
    /// that a repeat is journalled once. `None` when the draw does not exist.
    pub async fn set_beacon(
        &self,
        draw_id: &DrawId,
        beacon: Option<&BeaconNetwork>,
        now: Timestamp,
        entry: &Draft,
    ) -> Result<Option<BeaconChange>, StoreError> {
        unless_held(|| self.set_beacon_once(draw_id, beacon, now, entry)).await
    }

    async fn set_beacon_once(
        &self,
        draw_id: &DrawId,
        beacon: Option<&BeaconNetwork>,
        now: Timestamp,
        entry: &Draft,
    ) -> Result<Option<BeaconChange>, StoreError> {
        let selling = "attribute_exists(#pk) AND #status = :open \
                       AND (attribute_not_exists(#closes_at) OR #closes_at > :now)";
        let mut update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#closes_at", CLOSES_AT)
            .expression_attribute_names("#beacon", BEACON)
            .expression_attribute_values(":open", s(DrawStatus::Open.as_str()))
            .expression_attribute_values(":now", timestamp(now))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        update = match beacon {
            Some(beacon) => update
                .update_expression("SET #beacon = :beacon")
                .condition_expression(format!(
                    "{selling} AND (attribute_not_exists(#beacon) OR #beacon.#name <> :name)"
                ))
                .expression_attribute_names("#name", NETWORK_NAME)
                .expression_attribute_values(":name", s(beacon.name()))
                .expression_attribute_values(":beacon", encode_network(beacon)?),
            None => update
                .update_expression("REMOVE #beacon")
                .condition_expression(format!("{selling} AND attribute_exists(#beacon)")),
        };
        let mut tx = Roled::with_capacity(1);
        tx.push(
            (),
            TransactWriteItem::builder()
                .update(update.build().map_err(build_error)?)
                .build(),
        );
        match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => Ok(self.get_draw(draw_id).await?.map(BeaconChange::Set)),
            RoledOutcome::Busy => Err(StoreError::Contention { attempts: 1 }),
            RoledOutcome::Cancelled(verdicts) => match verdicts.into_iter().next() {
                Some(((), Verdict::ConditionFailed(item))) => item
                    .as_ref()
                    .map(|item| decode_draw(item).map(BeaconChange::Refused))
                    .transpose(),
                _ => Err(StoreError::Contention { attempts: 1 }),
            },
        }
    }
}
