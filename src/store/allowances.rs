//! A payer's allowance in a capped draw: the tickets the payer holds, moved inside the
//! purchase transaction under the cap and given back by a void.

use aws_sdk_dynamodb::types::{ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update};

use super::codec::{Reader, key, n, s};
use super::error::build_error;
use super::{Store, StoreError, keys};
use crate::domain::ids::{DrawId, PayerId};
use crate::domain::purchase::Purchase;

/// Tickets a payer holds in a capped draw, on the payer's allowance item.
pub(crate) const HELD: &str = "held";

/// A capped draw's limit for the payer of a purchase.
#[derive(Debug, Clone, Copy)]
pub struct PayerCap {
    pub max_per_payer: u64,
}

impl Store {
    /// Moves `quantity` into the payer's allowance if it stays within the cap. A purchase
    /// larger than the cap never gets here.
    pub(crate) fn take_allowance(
        &self,
        purchase: &Purchase,
        cap: PayerCap,
    ) -> Result<TransactWriteItem, StoreError> {
        let payer = purchase.payer_id.as_ref().ok_or_else(|| {
            StoreError::Invariant("a capped draw sold to a purchase without payer".into())
        })?;
        let room = cap
            .max_per_payer
            .saturating_sub(u64::from(purchase.quantity));
        let update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::payer(&purchase.draw_id, payer))))
            .update_expression(
                "SET #held = if_not_exists(#held, :zero) + :q, #kind = :kind, #payer = :payer",
            )
            .condition_expression("attribute_not_exists(#held) OR #held <= :room")
            .expression_attribute_names("#held", HELD)
            .expression_attribute_names("#kind", "kind")
            .expression_attribute_names("#payer", "payer_id")
            .expression_attribute_values(":payer", s(payer.as_str()))
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":q", n(purchase.quantity))
            .expression_attribute_values(":room", n(room))
            .expression_attribute_values(":kind", s("allowance"))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
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
