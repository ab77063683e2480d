//! Freezing the eligible list of a closed draw: its digest, count, time and beacon round
//! are written once, if no void landed since the list was computed.

use aws_sdk_dynamodb::types::{ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update};

use super::super::codec::{derived, key, n, s};
use super::super::error::build_error;
use super::super::table::{Verdict, unless_held};
use super::super::transaction::{Roled, RoledOutcome};
use super::super::{PARTITION_KEY, Store, StoreError, keys};
use super::{FROZEN, STATUS, VOIDED, decode_draw};
use tally_domain::draw::{Draw, DrawStatus, Frozen};
use tally_domain::ids::DrawId;
use tally_domain::journal::Draft;

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
    /// tickets, the count its list was computed with, with the close's journal entry `entry`.
    /// `None` when the draw does not exist.
    pub async fn freeze_draw(
        &self,
        draw_id: &DrawId,
        frozen: &Frozen,
        voided: u64,
        entry: &Draft,
    ) -> Result<Option<Freeze>, StoreError> {
        unless_held(|| self.freeze_once(draw_id, frozen, voided, entry)).await
    }

    async fn freeze_once(
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
        let mut update = Update::builder()
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
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        if voided > 0 {
            update = update.expression_attribute_values(":voided", n(voided));
        }
        let mut tx = Roled::with_capacity(1);
        tx.push(
            (),
            TransactWriteItem::builder()
                .update(update.build().map_err(build_error)?)
                .build(),
        );
        let verdict = match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => {
                return Ok(self.get_draw(draw_id).await?.map(Freeze::Frozen));
            }
            RoledOutcome::Busy => Verdict::Conflict,
            RoledOutcome::Cancelled(mut verdicts) => verdicts
                .pop()
                .map_or(Verdict::Conflict, |(_, verdict)| verdict),
        };
        match verdict {
            Verdict::ConditionFailed(Some(item)) => {
                let draw = decode_draw(&item)?;
                Ok(Some(match draw.frozen {
                    Some(_) => Freeze::Frozen(draw),
                    None => Freeze::Moved(draw),
                }))
            }
            Verdict::ConditionFailed(None) => Ok(None),
            // Another write held the draw: `unless_held` tries again.
            Verdict::Passed | Verdict::Conflict | Verdict::Throttled => {
                Err(StoreError::Contention { attempts: 1 })
            }
        }
    }
}
