//! The void transaction: a purchase and its tickets become void all at once, the draw
//! counts them, and a capped draw gives the payer's allowance back. Before the draw's
//! freeze the tickets leave the eligible list; after it they are recorded as late voids
//! and the list stays as frozen.

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::allowances::HELD;
use super::bundles::{set_void_unfinished, split_tickets, void_ticket};
use super::codec::{key, n, s, timestamp};
use super::draws::{FROZEN, LATE_VOIDED, POSTAL_VOIDED, VOIDED, VOIDING};
use super::error::build_error;
use super::journal::JOURNAL_ITEMS;
use super::payers::SpendReturn;
use super::purchases::{
    STATUS, VOID, VOID_REASON, VOIDED_AFTER_FREEZE, VOIDED_AT, decode_purchase,
};
use super::table::Verdict;
use super::transaction::{Roled, RoledOutcome};
use super::{PARTITION_KEY, Store, StoreError, keys};
use tally_domain::journal::Draft;
use tally_domain::purchase::{Channel, Purchase, Void};

/// How a void transaction ended.
#[derive(Debug)]
pub enum VoidOutcome {
    /// This call voided it: the purchase as it is now.
    Voided(Purchase),
    /// It was void already: the purchase as it is.
    AlreadyVoid(Purchase),
    NotFound,
    /// The draw was frozen meanwhile (or, for a late void, is not frozen): read it again.
    FreezeMoved,
    /// Another transaction held one of the items, or DynamoDB throttled: try again.
    Contended,
    /// The payer's count of a window the purchase was spent in moved on to a later
    /// window: void again without giving back to it.
    WindowPassed,
}

/// What an item of a void transaction stands for.
enum Role {
    Purchase,
    Draw,
    Ticket(u64),
    Allowance,
    /// The payer's item across draws, given the amount back.
    Payer,
    /// The award item keyed by this winning number.
    Award(u64),
}

impl Store {
    /// Voids `purchase` (as read) as `void` says (its reason and time). `capped`: the draw has a `max_per_payer`,
    /// so the payer's allowance gets the tickets back. `late`: the draw is frozen, so the
    /// void is counted and indexed as a late one, and the purchase says it came after the
    /// freeze; the draw's condition checks it.
    /// `award`: the smallest instant-winning number of the purchase, whose award item
    /// (`store::instant`) becomes void with it. `back`: the amount the payer's spend
    /// counts get back, exactly once, since the void commits once. `entry`: the void's
    /// journal entry, written in the same transaction.
    pub async fn void_purchase(
        &self,
        purchase: &Purchase,
        void: &Void,
        (capped, late): (bool, bool),
        award: Option<u64>,
        back: Option<&SpendReturn>,
        entry: &Draft,
    ) -> Result<VoidOutcome, StoreError> {
        let Void { reason, at, .. } = void;
        let at = *at;
        let draw_id = &purchase.draw_id;
        let quantity = u64::from(purchase.quantity);
        let update = |pk: String| {
            Update::builder()
                .table_name(self.table())
                .set_key(Some(key(pk)))
        };
        let others = 2
            + JOURNAL_ITEMS
            + usize::from(capped)
            + usize::from(award.is_some())
            + usize::from(back.is_some());
        let (inline, rest) = split_tickets(&purchase.tickets, others);
        let bundle = !rest.is_empty();
        // A postal purchase voided before the freeze also leaves the postal entries; after
        // it, the frozen list (and its count by channel) stays as it was. A bundle whose
        // marks do not all fit is named on the draw until they are written.
        let mut adds = vec!["#voided :q"];
        let mut draw_update = update(keys::draw(draw_id))
            .condition_expression(if late {
                "attribute_exists(#pk) AND attribute_exists(#frozen)"
            } else {
                "attribute_exists(#pk) AND attribute_not_exists(#frozen)"
            })
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#voided", if late { LATE_VOIDED } else { VOIDED })
            .expression_attribute_names("#frozen", FROZEN)
            .expression_attribute_values(":q", n(quantity));
        if purchase.channel == Channel::Postal && !late {
            adds.push("#postal_voided :q");
            draw_update = draw_update.expression_attribute_names("#postal_voided", POSTAL_VOIDED);
        }
        if bundle {
            adds.push("#voiding :payment");
            draw_update = draw_update
                .expression_attribute_names("#voiding", VOIDING)
                .expression_attribute_values(
                    ":payment",
                    AttributeValue::Ss(vec![purchase.payment_id.as_str().to_owned()]),
                );
        }
        let draw_update = draw_update.update_expression(format!("ADD {}", adds.join(", ")));
        // The purchase says on which side of the freeze it was voided, which the draw's
        // condition in the same transaction checks.
        let set_void =
            "SET #status = :void, #reason = :reason, #at = :at, #after_freeze = :after_freeze";
        let mut purchase_update = update(keys::purchase(draw_id, &purchase.payment_id))
            .update_expression(set_void)
            .condition_expression("attribute_exists(#pk) AND attribute_not_exists(#status)")
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#reason", VOID_REASON)
            .expression_attribute_names("#at", VOIDED_AT)
            .expression_attribute_names("#after_freeze", VOIDED_AFTER_FREEZE)
            .expression_attribute_values(":void", s(VOID))
            .expression_attribute_values(":reason", s(reason))
            .expression_attribute_values(":at", timestamp(at))
            .expression_attribute_values(":after_freeze", AttributeValue::Bool(late))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        if bundle {
            purchase_update = set_void_unfinished(purchase_update, set_void, late);
        }
        let mut updates = vec![(Role::Purchase, purchase_update), (Role::Draw, draw_update)];
        if let (true, Some(payer)) = (capped, &purchase.payer_id) {
            updates.push((
                Role::Allowance,
                update(keys::payer(draw_id, payer))
                    .update_expression("ADD #held :back")
                    .condition_expression("attribute_exists(#pk)")
                    .expression_attribute_names("#pk", PARTITION_KEY)
                    .expression_attribute_names("#held", HELD)
                    .expression_attribute_values(":back", n(-(quantity as i64))),
            ));
        }
        let mut tx = Roled::with_capacity(updates.len() + inline.len());
        for (role, update) in updates {
            let update = update.build().map_err(build_error)?;
            tx.push(role, TransactWriteItem::builder().update(update).build());
        }
        for &number in inline {
            let update = void_ticket(self.table(), purchase, number, late)?;
            tx.push(
                Role::Ticket(number),
                TransactWriteItem::builder().update(update).build(),
            );
        }
        if let Some(first) = award {
            tx.push(
                Role::Award(first),
                self.void_award(draw_id, &purchase.payment_id, first, at)?,
            );
        }
        if let Some(back) = back {
            tx.push(Role::Payer, self.spend_return(back)?);
        }
        let verdicts = match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => {
                // Each voided ticket enters the `list` index.
                self.write_meter().index_write(inline.len() as u64);
                if bundle {
                    self.finish_void(purchase, rest, late).await?;
                }
                let mut voided = purchase.clone();
                voided.void = Some(void.clone());
                return Ok(VoidOutcome::Voided(voided));
            }
            RoledOutcome::Busy => return Ok(VoidOutcome::Contended),
            RoledOutcome::Cancelled(verdicts) => verdicts,
        };
        let mut contended = false;
        for (role, verdict) in verdicts {
            match (role, verdict) {
                (_, Verdict::Passed) => {}
                (_, Verdict::Conflict | Verdict::Throttled) => contended = true,
                (Role::Purchase, Verdict::ConditionFailed(Some(item))) => {
                    let existing = decode_purchase(&item)?;
                    return Ok(match existing.void {
                        Some(_) => VoidOutcome::AlreadyVoid(existing),
                        // Unreachable: the record exists and is not void, so its condition held.
                        None => VoidOutcome::Contended,
                    });
                }
                (Role::Purchase, Verdict::ConditionFailed(None)) => {
                    return Ok(VoidOutcome::NotFound);
                }
                (Role::Draw, Verdict::ConditionFailed(_)) => return Ok(VoidOutcome::FreezeMoved),
                (Role::Ticket(number), Verdict::ConditionFailed(_)) => {
                    return Err(StoreError::Invariant(format!(
                        "ticket {number} of {draw_id} is not held by {}",
                        purchase.payment_id
                    )));
                }
                (Role::Allowance, Verdict::ConditionFailed(_)) => {
                    return Err(StoreError::Invariant(format!(
                        "the allowance of {}'s payer in {draw_id} is missing",
                        purchase.payment_id
                    )));
                }
                (Role::Payer, Verdict::ConditionFailed(_)) => return Ok(VoidOutcome::WindowPassed),
                (Role::Award(number), Verdict::ConditionFailed(_)) => {
                    return Err(StoreError::Invariant(format!(
                        "the instant award of ticket {number} in {draw_id} is not {}'s",
                        purchase.payment_id
                    )));
                }
            }
        }
        debug_assert!(contended);
        Ok(VoidOutcome::Contended)
    }
}
