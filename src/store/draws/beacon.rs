//! Declaring the beacon while the draw sells, with a conditional write.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};
use jiff::Timestamp;

use super::super::codec::{key, s, timestamp};
use super::super::error::sdk_error;
use super::super::table::unless_held;
use super::super::{PARTITION_KEY, Store, StoreError, keys};
use super::item::{BEACON, CLOSES_AT, STATUS, decode_draw, encode_network};
use tally_domain::draw::{Draw, DrawStatus};
use tally_domain::ids::DrawId;
use tally_domain::winners::BeaconNetwork;

/// What a change of the beacon found.
#[derive(Debug)]
pub enum BeaconChange {
    /// Recorded: the draw as it is now.
    Set(Draw),
    /// The draw no longer sells: the draw as it is.
    Refused(Draw),
}

impl Store {
    /// Declares (`Some`) or withdraws (`None`) the draw's beacon while the draw sells:
    /// a conditional write, so a beacon never changes once the draw is closing, closed or
    /// past its `closes_at` by `now`. `None` when the draw does not exist.
    pub async fn set_beacon(
        &self,
        draw_id: &DrawId,
        beacon: Option<&BeaconNetwork>,
        now: Timestamp,
    ) -> Result<Option<BeaconChange>, StoreError> {
        unless_held(|| self.set_beacon_once(draw_id, beacon, now)).await
    }

    async fn set_beacon_once(
        &self,
        draw_id: &DrawId,
        beacon: Option<&BeaconNetwork>,
        now: Timestamp,
    ) -> Result<Option<BeaconChange>, StoreError> {
        self.write_meter().single_write(1);
        let mut request = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .condition_expression(
                "attribute_exists(#pk) AND #status = :open \
                 AND (attribute_not_exists(#closes_at) OR #closes_at > :now)",
            )
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#closes_at", CLOSES_AT)
            .expression_attribute_names("#beacon", BEACON)
            .expression_attribute_values(":open", s(DrawStatus::Open.as_str()))
            .expression_attribute_values(":now", timestamp(now))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        request = match beacon {
            Some(beacon) => request
                .update_expression("SET #beacon = :beacon")
                .expression_attribute_values(":beacon", encode_network(beacon)?),
            None => request.update_expression("REMOVE #beacon"),
        };
        match request.send().await {
            Ok(output) => output
                .attributes()
                .map(|item| decode_draw(item).map(BeaconChange::Set))
                .transpose(),
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => failed
                    .item()
                    .map(|item| decode_draw(item).map(BeaconChange::Refused))
                    .transpose(),
                _ => Err(sdk_error("UpdateItem", err)),
            },
        }
    }
}
