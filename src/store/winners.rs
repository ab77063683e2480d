//! The winners: the draw item's record of them and one item per pick, written in one
//! transaction; a redraw is asked for on the draw item, then adds one pick and moves the
//! draw's pick count in another.

use aws_sdk_dynamodb::types::{ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update};
use jiff::Timestamp;

use super::codec::{Item, Reader, derived, key, n, parse_timestamp, s, timestamp};
use super::draws::{FROZEN, PENDING_REDRAW, PICKS, STATUS, WINNERS, decode_draw, encode_winners};
use super::error::build_error;
use super::purchases::decode_ticket;
use super::table::{Verdict, put_if_absent};
use super::transaction::{Roled, RoledOutcome};
use super::{PARTITION_KEY, Store, StoreError, keys, kind};
use tally_domain::draw::{Draw, DrawStatus, PendingRedraw, WinnersRecord};
use tally_domain::ids::{DrawId, PayerId, PaymentId};
use tally_domain::journal::Draft;
use tally_domain::purchase::Ticket;
use tally_domain::winners::RoundSignature;

/// One pick as stored: the ticket, who holds it, and for a redraw why it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickItem {
    pub pick: u64,
    pub prize: u32,
    pub ticket: u64,
    pub payment_id: PaymentId,
    pub payer_id: Option<PayerId>,
    /// Why the prize's previous winner was replaced; `None` for the first pick of a prize.
    pub reason: Option<String>,
    /// When a redraw was asked for.
    pub requested_at: Option<Timestamp>,
    /// A redraw's own round and its signature, when the draw has a beacon.
    pub beacon: Option<RoundSignature>,
    pub at: Timestamp,
}

/// How a write of winners ended.
#[derive(Debug)]
pub enum Recorded {
    Recorded,
    /// The draw's condition failed: the draw as it is now.
    Refused(Box<Draw>),
    /// Another transaction held an item, or DynamoDB throttled: try again.
    Contended,
}

pub(crate) fn encode_pick(draw_id: &DrawId, pick: &PickItem) -> Item {
    let mut item = key(keys::pick(draw_id, pick.pick));
    item.insert(kind::ATTRIBUTE.into(), s(kind::PICK));
    item.insert("draw_id".into(), s(draw_id.as_str()));
    item.insert("pick".into(), n(pick.pick));
    item.insert("prize".into(), n(pick.prize));
    item.insert("ticket".into(), n(pick.ticket));
    item.insert("payment_id".into(), s(pick.payment_id.as_str()));
    if let Some(payer) = &pick.payer_id {
        item.insert("payer_id".into(), s(payer.as_str()));
    }
    if let Some(reason) = &pick.reason {
        item.insert("reason".into(), s(reason));
    }
    if let Some(at) = pick.requested_at {
        item.insert("requested_at".into(), timestamp(at));
    }
    if let Some(beacon) = &pick.beacon {
        item.insert("beacon_round".into(), n(beacon.round));
        item.insert("beacon_signature".into(), s(&beacon.signature));
    }
    item.insert("at".into(), timestamp(pick.at));
    item
}

pub(crate) fn decode_pick(item: &Item) -> Result<PickItem, StoreError> {
    let r = Reader::new(item);
    Ok(PickItem {
        pick: r.num("pick")?,
        prize: r.num("prize")?,
        ticket: r.num("ticket")?,
        payment_id: r.parsed("payment_id", |v| PaymentId::parse(v).ok())?,
        payer_id: r.opt_str("payer_id")?.map(PayerId::stored),
        reason: r.opt_str("reason")?.map(str::to_owned),
        requested_at: r
            .opt_str("requested_at")?
            .map(|v| parse_timestamp(v).ok_or_else(|| r.corrupt("`requested_at`".into())))
            .transpose()?,
        beacon: match (r.opt_num("beacon_round")?, r.opt_str("beacon_signature")?) {
            (Some(round), Some(signature)) => Some(RoundSignature {
                round,
                signature: signature.to_owned(),
            }),
            _ => None,
        },
        at: r.parsed("at", parse_timestamp)?,
    })
}

/// What an item of a drawing's transaction stands for.
enum Role {
    /// The draw's conditional update.
    Draw,
    /// A new pick item, by its position in the draw's picks.
    Pick(u64),
}

impl Store {
    /// Records the winners once: the draw must be closed and frozen, without winners.
    pub async fn record_winners(
        &self,
        draw_id: &DrawId,
        record: &WinnersRecord,
        picks: &[PickItem],
        entry: &Draft,
    ) -> Result<Recorded, StoreError> {
        let update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .update_expression("SET #winners = :winners, #picks = :picks")
            .condition_expression(
                "attribute_exists(#pk) AND attribute_not_exists(#winners) \
                 AND attribute_exists(#frozen) AND #status = :closed",
            )
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#winners", WINNERS)
            .expression_attribute_names("#picks", PICKS)
            .expression_attribute_names("#frozen", FROZEN)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_values(":winners", encode_winners(record)?)
            .expression_attribute_values(":picks", n(picks.len()))
            .expression_attribute_values(":closed", s(DrawStatus::Closed.as_str()))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        self.transact_draw(draw_id, update.build().map_err(build_error)?, picks, entry)
            .await
    }

    /// Asks for a redraw: the draw keeps it until its pick is recorded, if it has made
    /// exactly the picks before it and no other redraw waits.
    pub async fn request_redraw(
        &self,
        draw_id: &DrawId,
        pending: &PendingRedraw,
        entry: &Draft,
    ) -> Result<Recorded, StoreError> {
        let update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .update_expression("SET #pending = :pending")
            .condition_expression(
                "attribute_exists(#winners) AND attribute_not_exists(#pending) \
                 AND #picks = :before",
            )
            .expression_attribute_names("#winners", WINNERS)
            .expression_attribute_names("#pending", PENDING_REDRAW)
            .expression_attribute_names("#picks", PICKS)
            .expression_attribute_values(":pending", derived(pending)?)
            .expression_attribute_values(":before", n(pending.pick - 1))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(build_error)?;
        self.transact_draw(draw_id, update, &[], entry).await
    }

    /// Records pick `pick.pick` of a redraw, if the draw has made exactly the picks before
    /// it; `pending`: the pick resolves the redraw the draw waits for, which it clears.
    pub async fn record_redraw(
        &self,
        draw_id: &DrawId,
        pick: &PickItem,
        pending: bool,
        entry: &Draft,
    ) -> Result<Recorded, StoreError> {
        let mut update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .expression_attribute_names("#winners", WINNERS)
            .expression_attribute_names("#picks", PICKS)
            .expression_attribute_names("#pending", PENDING_REDRAW)
            .expression_attribute_values(":next", n(pick.pick))
            .expression_attribute_values(":before", n(pick.pick - 1))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        update = if pending {
            update
                .update_expression("SET #picks = :next REMOVE #pending")
                .condition_expression(
                    "attribute_exists(#winners) AND #picks = :before AND #pending.#pick = :next",
                )
                .expression_attribute_names("#pick", "pick")
        } else {
            update
                .update_expression("SET #picks = :next")
                .condition_expression(
                    "attribute_exists(#winners) AND #picks = :before \
                     AND attribute_not_exists(#pending)",
                )
        };
        let update = update.build().map_err(build_error)?;
        self.transact_draw(draw_id, update, std::slice::from_ref(pick), entry)
            .await
    }

    /// Sends the draw's conditional update and the new items of `picks` as one
    /// transaction, with the journal's `entry`.
    async fn transact_draw(
        &self,
        draw_id: &DrawId,
        update: Update,
        picks: &[PickItem],
        entry: &Draft,
    ) -> Result<Recorded, StoreError> {
        let mut tx = Roled::with_capacity(1 + picks.len());
        tx.push(
            Role::Draw,
            TransactWriteItem::builder().update(update).build(),
        );
        for pick in picks {
            let item = put_if_absent(self.table(), encode_pick(draw_id, pick), false)?;
            tx.push(Role::Pick(pick.pick), item);
        }
        let verdicts = match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => return Ok(Recorded::Recorded),
            RoledOutcome::Busy => return Ok(Recorded::Contended),
            RoledOutcome::Cancelled(verdicts) => verdicts,
        };
        let mut contended = false;
        for (role, verdict) in verdicts {
            match (role, verdict) {
                (_, Verdict::Passed) => {}
                (_, Verdict::Conflict | Verdict::Throttled) => contended = true,
                (Role::Draw, Verdict::ConditionFailed(Some(item))) => {
                    return Ok(Recorded::Refused(Box::new(decode_draw(&item)?)));
                }
                (Role::Draw, Verdict::ConditionFailed(None)) => {
                    return Err(StoreError::Invariant(format!(
                        "draw {draw_id} refused a pick but was not returned"
                    )));
                }
                (Role::Pick(pick), Verdict::ConditionFailed(_)) => {
                    return Err(StoreError::Invariant(format!(
                        "pick {pick} of {draw_id} exists while the draw's count says it does not"
                    )));
                }
            }
        }
        debug_assert!(contended);
        Ok(Recorded::Contended)
    }

    /// Picks 1..=`count`, in order.
    pub async fn get_picks(
        &self,
        draw_id: &DrawId,
        count: u64,
    ) -> Result<Vec<PickItem>, StoreError> {
        let keys = (1..=count).map(|k| key(keys::pick(draw_id, k))).collect();
        let mut picks = self
            .batch_get(keys)
            .await?
            .iter()
            .map(decode_pick)
            .collect::<Result<Vec<_>, _>>()?;
        picks.sort_by_key(|p| p.pick);
        if picks.len() as u64 != count {
            return Err(StoreError::Invariant(format!(
                "draw {draw_id} counts {count} picks, {} are stored",
                picks.len()
            )));
        }
        Ok(picks)
    }

    /// The ticket items of `numbers` that exist.
    pub async fn get_tickets(
        &self,
        draw_id: &DrawId,
        numbers: &[u64],
    ) -> Result<Vec<Ticket>, StoreError> {
        let keys = numbers
            .iter()
            .map(|&t| key(keys::ticket(draw_id, t)))
            .collect();
        self.batch_get(keys)
            .await?
            .iter()
            .map(decode_ticket)
            .collect()
    }
}
