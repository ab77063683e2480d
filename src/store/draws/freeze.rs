//! Freezing the eligible list of a closed draw: its digest, count, time and beacon round
//! are written once, if no void landed since the list was computed.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{ReturnValue, ReturnValuesOnConditionCheckFailure};

use super::super::codec::{derived, key, n, s};
use super::super::error::sdk_error;
use super::super::table::unless_held;
use super::super::{PARTITION_KEY, Store, StoreError, keys};
use super::{FROZEN, STATUS, VOIDED, decode_draw};
use tally_domain::draw::{Draw, DrawStatus, Frozen};
use tally_domain::ids::DrawId;

/// What a freeze found.
#[derive(Debug)]
pub enum Freeze {
    /// Written, or found frozen already: the draw as it is now.
    Frozen(Draw),
    /// The draw is not closed, or a void landed since the list was read: the draw as it is.
    Moved(Draw),
}

impl Store {
    /// Writes `frozen` on a closed draw that is not frozen and has exactly `voided` voided
    /// tickets, the count its list was computed with. `None` when the draw does not exist.
    pub async fn freeze_draw(
        &self,
        draw_id: &DrawId,
        frozen: &Frozen,
        voided: u64,
    ) -> Result<Option<Freeze>, StoreError> {
        unless_held(|| self.freeze_once(draw_id, frozen, voided)).await
    }

    async fn freeze_once(
        &self,
        draw_id: &DrawId,
        frozen: &Frozen,
        voided: u64,
    ) -> Result<Option<Freeze>, StoreError> {
        self.write_meter().single_write(1);
        let voided_as_read = if voided == 0 {
            "attribute_not_exists(#voided)"
        } else {
            "#voided = :voided"
        };
        let mut request = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .update_expression("SET #frozen = :frozen")
            .condition_expression(format!(
                "attribute_exists(#pk) AND attribute_not_exists(#frozen) \
                 AND #status = :closed AND {voided_as_read}"
            ))
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#frozen", FROZEN)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#voided", VOIDED)
            .expression_attribute_values(":frozen", derived(frozen)?)
            .expression_attribute_values(":closed", s(DrawStatus::Closed.as_str()))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        if voided > 0 {
            request = request.expression_attribute_values(":voided", n(voided));
        }
        match request.send().await {
            Ok(output) => output
                .attributes()
                .map(|item| decode_draw(item).map(Freeze::Frozen))
                .transpose(),
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => failed
                    .item()
                    .map(|item| {
                        decode_draw(item).map(|draw| match draw.frozen {
                            Some(_) => Freeze::Frozen(draw),
                            None => Freeze::Moved(draw),
                        })
                    })
                    .transpose(),
                _ => Err(sdk_error("UpdateItem", err)),
            },
        }
    }
}
