//! Instant-win awards: one item per transaction that sells winning numbers, written in
//! that very transaction, so a prize is recorded exactly when its number is sold. It is
//! keyed by the smallest winning number it records and written only if absent, so no
//! number is awarded twice even if a bug let its ticket item be written twice; it enters
//! the `list` index partition of the draw's awards, and the stream publishes it as
//! `Instant Win Awarded` events.
//!
//! Every way of selling numbers calls [`Store::award_write`] with the winning tickets of
//! one transaction (a lucky dip, chosen numbers, a converted hold) and adds the item it
//! returns; [`AwardWrite::taken_number`] says how to read its cancellation reason. In a
//! draw with instant wins every purchase transaction carries that item, winning or not,
//! so its shape never tells a winning number from a losing one; the draw keeps one item
//! of each purchase transaction for it (`DrawConfig::purchase_budget`).

use aws_sdk_dynamodb::types::{ConditionCheck, TransactWriteItem, Update};
use jiff::Timestamp;

use super::codec::{Item, Reader, derived, key, parse_timestamp, s, timestamp};
use super::error::build_error;
use super::lists::After;
use super::purchases::{STATUS, VOID, VOIDED_AT};
use super::table::put_if_absent;
use super::{Store, StoreError, keys, kind};
use tally_domain::ids::{DrawId, PayerId, PaymentId};
use tally_domain::instant::{InstantAward, InstantWin};
use tally_domain::purchase::Purchase;

const WINS: &str = "wins";
const AWARDED_AT: &str = "awarded_at";

/// The award item of one transaction in a draw with instant wins, and how to read its
/// verdict.
pub(crate) struct AwardWrite {
    pub(crate) item: TransactWriteItem,
    /// The smallest winning number: the item's key.
    first: u64,
}

impl AwardWrite {
    /// How to read the item's cancellation reason: a conflict or throttling as for any
    /// item; a failed condition means an award keyed by this number exists, so its ticket
    /// is sold, the same as a ticket item that exists: this number.
    pub(crate) fn taken_number(&self) -> u64 {
        self.first
    }
}

pub(crate) fn encode_award(
    draw_id: &DrawId,
    award: &InstantAward,
    first: u64,
) -> Result<Item, StoreError> {
    let mut item = key(keys::instant_award(draw_id, first));
    item.insert(kind::ATTRIBUTE.into(), s(kind::INSTANT_WIN));
    item.insert("draw_id".into(), s(draw_id.as_str()));
    item.insert("payment_id".into(), s(award.payment_id.as_str()));
    if let Some(payer) = &award.payer_id {
        item.insert("payer_id".into(), s(payer.as_str()));
    }
    item.insert(WINS.into(), derived(&award.wins)?);
    item.insert(AWARDED_AT.into(), timestamp(award.awarded_at));
    item.insert(keys::LIST_PK.into(), s(keys::draw_instant_awards(draw_id)));
    item.insert(keys::LIST_SK.into(), s(keys::ticket_sort(first)));
    Ok(item)
}

pub(crate) fn decode_award(item: &Item) -> Result<(DrawId, InstantAward), StoreError> {
    let r = Reader::new(item);
    let wins = r.opt_derived(WINS)?.unwrap_or_default();
    Ok((
        r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        InstantAward {
            payment_id: r.parsed("payment_id", |v| PaymentId::parse(v).ok())?,
            payer_id: r.opt_str("payer_id")?.map(PayerId::stored),
            wins,
            awarded_at: r.parsed(AWARDED_AT, parse_timestamp)?,
            voided: r.opt_str(STATUS)? == Some(VOID),
        },
    ))
}

impl Store {
    /// The award item of one transaction that sells `purchase`'s tickets in a draw with
    /// instant wins (`wins`, ascending; `None` in a draw without), whatever they win. With
    /// wins, the award, keyed by the smallest winning number, written only if absent;
    /// without, a check that no award is keyed by the smallest ticket, which writes
    /// nothing. Either way the transaction holds one item more, at the same kind of key,
    /// under the same condition: a transaction refused for another reason (a payer at the
    /// cap) asks DynamoDB the same of a winning number as of a losing one.
    pub(crate) fn award_write(
        &self,
        purchase: &Purchase,
        wins: Option<&[InstantWin]>,
    ) -> Result<Option<AwardWrite>, StoreError> {
        let Some(wins) = wins else {
            return Ok(None);
        };
        let draw_id = &purchase.draw_id;
        let Some(first) = wins.first().map(|w| w.ticket) else {
            let first = purchase.tickets.iter().copied().min().unwrap_or(0);
            let check = ConditionCheck::builder()
                .table_name(self.table())
                .set_key(Some(key(keys::instant_award(draw_id, first))))
                .condition_expression("attribute_not_exists(#pk)")
                .expression_attribute_names("#pk", super::PARTITION_KEY)
                .build()
                .map_err(build_error)?;
            return Ok(Some(AwardWrite {
                item: TransactWriteItem::builder().condition_check(check).build(),
                first,
            }));
        };
        let award = InstantAward::of(purchase, wins);
        Ok(Some(AwardWrite {
            item: put_if_absent(self.table(), encode_award(draw_id, &award, first)?, false)?,
            first,
        }))
    }

    /// The update that voids the award of `payment_id` keyed by `first`, for the void's
    /// transaction.
    pub(crate) fn void_award(
        &self,
        draw_id: &DrawId,
        payment_id: &PaymentId,
        first: u64,
        at: Timestamp,
    ) -> Result<TransactWriteItem, StoreError> {
        let update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::instant_award(draw_id, first))))
            .update_expression("SET #status = :void, #at = :at")
            .condition_expression("#payment = :payment")
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#at", VOIDED_AT)
            .expression_attribute_names("#payment", "payment_id")
            .expression_attribute_values(":void", s(VOID))
            .expression_attribute_values(":at", timestamp(at))
            .expression_attribute_values(":payment", s(payment_id.as_str()))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Every award of a draw, by smallest winning number, as the index has them (an
    /// award just committed may be missing for a moment). A draw has at most
    /// `MAX_INSTANT_PRIZES` awards.
    pub async fn instant_awards(&self, draw_id: &DrawId) -> Result<Vec<InstantAward>, StoreError> {
        let mut awards = Vec::new();
        let mut after: Option<After> = None;
        loop {
            let page = self.instant_award_page(draw_id, after.as_ref()).await?;
            awards.extend(page.items);
            match page.next {
                Some(next) => after = Some(next),
                None => return Ok(awards),
            }
        }
    }
}
