//! A payer's allowance in a capped draw: the tickets the payer holds, moved inside the
//! purchase or hold transaction under the cap and given back by a void or a release.
//! Each live hold is also named on the allowance with its deadline and quantity, so that
//! a hold whose deadline passed can be given back by whoever meets it at the cap.

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::codec::{Item, Reader, key, n, s};

use super::error::{build_error, done_unless_failed};
use super::{Store, StoreError, keys};
use tally_domain::ids::{DrawId, HoldId, PayerId};

/// Tickets a payer holds in a capped draw, on the payer's allowance item.
pub(crate) const HELD: &str = "held";
/// A hold counted in the allowance: `hold_<hold id>` = [deadline in Unix ms, quantity].
const HOLD_PREFIX: &str = "hold_";

/// A capped draw's limit for the payer of a purchase.
#[derive(Debug, Clone, Copy)]
pub struct PayerCap {
    pub max_per_payer: u64,
}

/// A hold counted in a payer's allowance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountedHold {
    /// The attribute that names it on the allowance.
    attribute: String,
    /// Its deadline, Unix ms.
    pub end: i64,
    pub quantity: u64,
}

/// The holds an allowance item counts.
pub(crate) fn counted_holds(item: &Item) -> Vec<CountedHold> {
    item.iter()
        .filter(|(name, _)| name.starts_with(HOLD_PREFIX))
        .filter_map(|(name, value)| {
            let list = value.as_l().ok()?;
            let number = |i: usize| list.get(i)?.as_n().ok()?.parse::<i64>().ok();
            Some(CountedHold {
                attribute: name.clone(),
                end: number(0)?,
                quantity: u64::try_from(number(1)?).ok()?,
            })
        })
        .collect()
}

fn hold_attribute(hold_id: &HoldId) -> String {
    format!("{HOLD_PREFIX}{hold_id}")
}

impl Store {
    /// Moves `quantity` into the payer's allowance if it stays within the cap; a hold
    /// (its id and deadline) is named on the allowance too. A purchase larger than the
    /// cap never gets here.
    pub(crate) fn take_allowance(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        quantity: u64,
        cap: PayerCap,
        hold: Option<(&HoldId, i64)>,
    ) -> Result<TransactWriteItem, StoreError> {
        let room = cap.max_per_payer.saturating_sub(quantity);
        let mut expression =
            "SET #held = if_not_exists(#held, :zero) + :q, #kind = :kind, #payer = :payer"
                .to_owned();
        let mut update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::payer(draw_id, payer))))
            .condition_expression("attribute_not_exists(#held) OR #held <= :room")
            .expression_attribute_names("#held", HELD)
            .expression_attribute_names("#kind", "kind")
            .expression_attribute_names("#payer", "payer_id")
            .expression_attribute_values(":payer", s(payer.as_str()))
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":q", n(quantity))
            .expression_attribute_values(":room", n(room))
            .expression_attribute_values(":kind", s("allowance"))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        if let Some((hold_id, end)) = hold {
            expression.push_str(", #hold = :hold");
            update = update
                .expression_attribute_names("#hold", hold_attribute(hold_id))
                .expression_attribute_values(":hold", AttributeValue::L(vec![n(end), n(quantity)]));
        }
        let update = update
            .update_expression(expression)
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Gives back a hold's tickets to the payer's allowance, on the condition that it is
    /// still counted there (a converted or given-back hold is not); with `convert`, the
    /// tickets stay counted, as bought, and only the hold's name goes.
    pub(crate) fn end_counted_hold(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        hold_id: &HoldId,
        quantity: u64,
        convert: bool,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::payer(draw_id, payer))))
            .condition_expression("attribute_exists(#hold)")
            .expression_attribute_names("#hold", hold_attribute(hold_id));
        update = if convert {
            update.update_expression("REMOVE #hold")
        } else {
            update
                .update_expression("REMOVE #hold ADD #held :minus")
                .expression_attribute_names("#held", HELD)
                .expression_attribute_values(":minus", n(-(quantity as i64)))
        };
        Ok(TransactWriteItem::builder()
            .update(update.build().map_err(build_error)?)
            .build())
    }

    /// Gives back, in one write, the holds of an allowance whose deadline passed by `now`
    /// (the writer's clock, Unix ms), each on the condition that it is still counted with
    /// that deadline.
    pub async fn give_back_ended_holds(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        holds: &[CountedHold],
        now: i64,
    ) -> Result<(), StoreError> {
        let ended: Vec<&CountedHold> = holds.iter().filter(|h| h.end <= now).collect();
        if ended.is_empty() {
            return Ok(());
        }
        self.write_meter().single_write(1);
        let mut update = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::payer(draw_id, payer))))
            .expression_attribute_names("#held", HELD)
            .expression_attribute_values(":now", n(now));
        let mut conditions = Vec::new();
        let mut removes = Vec::new();
        let mut given = 0u64;
        for (i, hold) in ended.iter().enumerate() {
            let name = format!("#h{i}");
            update = update.expression_attribute_names(&name, &hold.attribute);
            conditions.push(format!("{name}[0] <= :now"));
            removes.push(name);
            given += hold.quantity;
        }
        let result = update
            .update_expression(format!("REMOVE {} ADD #held :minus", removes.join(", ")))
            .expression_attribute_values(":minus", n(-(given as i64)))
            .condition_expression(conditions.join(" AND "))
            .send()
            .await;
        // A failed condition: another writer gave them back first, or a hold was
        // converted meanwhile; the caller plans again from what the table says.
        done_unless_failed(result)
    }

    /// Tickets the payer holds in a capped draw (voided ones given back).
    pub async fn payer_held(&self, draw_id: &DrawId, payer: &PayerId) -> Result<u64, StoreError> {
        Ok(self
            .get_consistent(keys::payer(draw_id, payer))
            .await?
            .map(|item| Reader::new(&item).opt_num(HELD))
            .transpose()?
            .flatten()
            .unwrap_or(0))
    }
}
