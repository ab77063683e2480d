//! A payer's allowance in a draw: the numbers the payer's live holds take (every draw),
//! and in a capped draw the tickets the payer holds, bought or held. Both move inside the
//! purchase or hold transaction under their caps and are given back by a void, a release
//! or a conversion. Each live hold is also named on the allowance with its deadline and
//! quantity, so that a hold whose deadline passed can be given back by whoever meets a cap.

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::codec::{Item, Reader, key, n, s};

use super::error::{build_error, done_unless_failed};
use super::{Store, StoreError, keys, kind};
use tally_domain::ids::{DrawId, HoldId, PayerId};

/// Tickets a payer holds in a capped draw, bought or in live holds.
pub(crate) const HELD: &str = "held";
/// Numbers the payer's holds take, until each is converted, released or given back as
/// ended.
const HOLDING: &str = "holding";
/// A hold counted in the allowance: `hold_<hold id>` = [deadline in Unix ms, quantity].
const HOLD_PREFIX: &str = "hold_";
/// Ended holds one write gives back: each names an attribute and a condition of its own,
/// about 20 bytes of the 4 KB a condition expression may take.
const GIVE_BACK_MOST: usize = 100;

/// A capped draw's limit for the payer of a purchase.
#[derive(Debug, Clone, Copy)]
pub struct PayerCap {
    pub max_per_payer: u64,
}

/// The limits a new hold's allowance is checked against.
#[derive(Debug, Clone, Copy)]
pub struct HoldCaps {
    /// The most numbers the payer's live holds may take.
    pub max_held_per_payer: u64,
    /// In a capped draw, the most tickets the payer may hold, bought or held.
    pub max_per_payer: Option<u64>,
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

/// A payer's allowance as a cancelled transaction returned it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowance {
    /// Tickets held in a capped draw, bought or in live holds.
    pub held: u64,
    /// Numbers in the payer's counted holds.
    pub holding: u64,
    /// The holds it counts.
    pub holds: Vec<CountedHold>,
}

impl Allowance {
    pub(crate) fn decode(item: &Item) -> Result<Self, StoreError> {
        let reader = Reader::new(item);
        Ok(Self {
            held: reader.opt_num(HELD)?.unwrap_or(0),
            holding: reader.opt_num(HOLDING)?.unwrap_or(0),
            holds: counted_holds(item),
        })
    }

    /// Whether a counted hold's deadline passed by `now` (Unix ms): it can be given back.
    pub fn has_ended(&self, now: i64) -> bool {
        self.holds.iter().any(|h| h.end <= now)
    }
}

/// How a counted hold ends on the allowance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountedEnd {
    /// Paid for: its numbers leave the payer's holds; in a capped draw they stay held,
    /// as bought.
    Converted,
    /// Given back: its numbers leave the payer's holds, and in a capped draw the tickets
    /// the payer holds.
    Released { capped: bool },
}

/// The holds an allowance item counts.
fn counted_holds(item: &Item) -> Vec<CountedHold> {
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

/// An allowance update: the item's key, kind and payer, with what the caller adds.
fn allowance_update(store: &Store, draw_id: &DrawId, payer: &PayerId) -> AllowanceUpdate {
    AllowanceUpdate {
        update: Update::builder()
            .table_name(store.table())
            .set_key(Some(key(keys::payer(draw_id, payer))))
            .expression_attribute_names("#kind", kind::ATTRIBUTE)
            .expression_attribute_names("#payer", "payer_id")
            .expression_attribute_values(":payer", s(payer.as_str()))
            .expression_attribute_values(":kind", s(kind::ALLOWANCE))
            .expression_attribute_values(":zero", n(0))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld),
        sets: vec!["#kind = :kind".to_owned(), "#payer = :payer".to_owned()],
        conditions: Vec::new(),
    }
}

struct AllowanceUpdate {
    update: aws_sdk_dynamodb::types::builders::UpdateBuilder,
    sets: Vec<String>,
    conditions: Vec<String>,
}

impl AllowanceUpdate {
    /// Adds `quantity` to the counter `name`, on the condition that it stays within `most`.
    fn count_within(mut self, placeholder: &str, name: &str, quantity: u64, most: u64) -> Self {
        let (q, room) = (
            format!(":{}_q", &placeholder[1..]),
            format!(":{}_room", &placeholder[1..]),
        );
        self.update = self
            .update
            .expression_attribute_names(placeholder, name)
            .expression_attribute_values(&q, n(quantity))
            .expression_attribute_values(&room, n(most.saturating_sub(quantity)));
        self.sets.push(format!(
            "{placeholder} = if_not_exists({placeholder}, :zero) + {q}"
        ));
        self.conditions.push(format!(
            "(attribute_not_exists({placeholder}) OR {placeholder} <= {room})"
        ));
        self
    }

    fn build(self) -> Result<TransactWriteItem, StoreError> {
        let update = self
            .update
            .update_expression(format!("SET {}", self.sets.join(", ")))
            .condition_expression(self.conditions.join(" AND "))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}

impl Store {
    /// Moves a purchase's `quantity` into the payer's allowance if it stays within the
    /// cap. A purchase larger than the cap never gets here.
    pub(crate) fn take_allowance(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        quantity: u64,
        cap: PayerCap,
    ) -> Result<TransactWriteItem, StoreError> {
        allowance_update(self, draw_id, payer)
            .count_within("#held", HELD, quantity, cap.max_per_payer)
            .build()
    }

    /// Counts a new hold of `quantity` numbers until `end` (Unix ms) in the payer's
    /// allowance, named by its id, if the payer's holds stay within `max_held_per_payer`
    /// and, in a capped draw, the payer's tickets within `max_per_payer`.
    pub(crate) fn take_hold_allowance(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        (hold_id, end): (&HoldId, i64),
        quantity: u64,
        caps: HoldCaps,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut update = allowance_update(self, draw_id, payer).count_within(
            "#holding",
            HOLDING,
            quantity,
            caps.max_held_per_payer,
        );
        if let Some(max_per_payer) = caps.max_per_payer {
            update = update.count_within("#held", HELD, quantity, max_per_payer);
        }
        update.update = update
            .update
            .expression_attribute_names("#hold", hold_attribute(hold_id))
            .expression_attribute_values(":hold", AttributeValue::L(vec![n(end), n(quantity)]));
        update.sets.push("#hold = :hold".to_owned());
        update.build()
    }

    /// Ends a hold's count on the payer's allowance (`ended` says how), on the condition
    /// that it is still counted there (a converted or given-back hold is not).
    pub(crate) fn end_counted_hold(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        hold_id: &HoldId,
        quantity: u64,
        ended: CountedEnd,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::payer(draw_id, payer))))
            .condition_expression("attribute_exists(#hold)")
            .expression_attribute_names("#hold", hold_attribute(hold_id))
            .expression_attribute_names("#holding", HOLDING)
            .expression_attribute_values(":minus", n(-(quantity as i64)))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        update = match ended {
            CountedEnd::Released { capped: true } => update
                .update_expression("REMOVE #hold ADD #holding :minus, #held :minus")
                .expression_attribute_names("#held", HELD),
            CountedEnd::Released { capped: false } | CountedEnd::Converted => {
                update.update_expression("REMOVE #hold ADD #holding :minus")
            }
        };
        Ok(TransactWriteItem::builder()
            .update(update.build().map_err(build_error)?)
            .build())
    }

    /// Gives back, in one write, the holds of an allowance whose deadline passed by `now`
    /// (the writer's clock, Unix ms; at most `GIVE_BACK_MOST`, the earliest first), each on
    /// the condition that it is still counted with that deadline; in a capped draw their
    /// tickets leave the payer's too.
    pub async fn give_back_ended_holds(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        holds: &[CountedHold],
        now: i64,
        capped: bool,
    ) -> Result<(), StoreError> {
        let mut ended: Vec<&CountedHold> = holds.iter().filter(|h| h.end <= now).collect();
        if ended.is_empty() {
            return Ok(());
        }
        ended.sort_by_key(|h| h.end);
        ended.truncate(GIVE_BACK_MOST);
        self.write_meter().single_write(1);
        let mut update = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::payer(draw_id, payer))))
            .expression_attribute_names("#holding", HOLDING)
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
        let adds = if capped {
            update = update.expression_attribute_names("#held", HELD);
            "#holding :minus, #held :minus"
        } else {
            "#holding :minus"
        };
        let result = update
            .update_expression(format!("REMOVE {} ADD {adds}", removes.join(", ")))
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
