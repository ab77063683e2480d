//! Purchase and ticket items: what a purchase record and a ticket store, and how they
//! read back.

use aws_sdk_dynamodb::types::AttributeValue;

use super::super::bundles::decode_unfinished;
use super::super::codec::{Item, Reader, key, n, parse_timestamp, s, timestamp};
use super::super::{StoreError, keys, kind};
use tally_domain::ids::{DrawId, PayerId, PaymentId};
use tally_domain::purchase::{Channel, Purchase, Ticket, Void};
use tally_domain::spend::{Currency, Money};

/// A voided purchase or ticket says so.
pub(crate) const STATUS: &str = "status";
pub(crate) const VOID: &str = "void";
pub(crate) const VOID_REASON: &str = "void_reason";
pub(crate) const VOIDED_AT: &str = "voided_at";
/// Whether the void came after the draw's freeze; voids stored before it was kept have
/// none.
pub(crate) const VOIDED_AFTER_FREEZE: &str = "voided_after_freeze";
/// A purchase of numbers the buyer chose says so.
const CHOSEN: &str = "chosen";
/// A purchase that came in by another channel than online says which.
const CHANNEL: &str = "channel";
/// What a purchase of a priced draw was charged, in minor units of `currency`.
const AMOUNT: &str = "amount";
const CURRENCY: &str = "currency";

/// A new purchase record, listed in the index partitions of its payer and of its first
/// stripe.
pub(crate) fn encode_purchase(purchase: &Purchase, first_stripe: u32) -> Item {
    let mut item = key(keys::purchase(&purchase.draw_id, &purchase.payment_id));
    item.insert(kind::ATTRIBUTE.into(), s(kind::PURCHASE));
    item.insert("draw_id".into(), s(purchase.draw_id.as_str()));
    item.insert("payment_id".into(), s(purchase.payment_id.as_str()));
    item.insert("quantity".into(), n(purchase.quantity));
    let created_at = timestamp(purchase.created_at);
    let newest_first = keys::newest_first(
        created_at.as_s().map_or("", String::as_str),
        purchase.payment_id.as_str(),
    );
    if let Some(payer) = &purchase.payer_id {
        item.insert("payer_id".into(), s(payer.as_str()));
        item.insert(
            keys::PAYER_PK.into(),
            s(keys::payer(&purchase.draw_id, payer)),
        );
        item.insert(keys::PAYER_SK.into(), s(&newest_first));
    }
    item.insert(
        keys::LIST_PK.into(),
        s(keys::draw_purchases(&purchase.draw_id, first_stripe)),
    );
    item.insert(keys::LIST_SK.into(), s(newest_first));
    item.insert(
        "tickets".into(),
        AttributeValue::L(purchase.tickets.iter().map(n).collect()),
    );
    if purchase.chosen {
        item.insert(CHOSEN.into(), AttributeValue::Bool(true));
    }
    // Absent for the default, online.
    if purchase.channel != Channel::Online {
        item.insert(CHANNEL.into(), s(purchase.channel.as_str()));
    }
    if let Some(amount) = purchase.amount {
        item.insert(AMOUNT.into(), n(amount.minor));
        item.insert(CURRENCY.into(), s(amount.currency.as_str()));
    }
    item.insert("fingerprint".into(), s(&purchase.fingerprint));
    item.insert("created_at".into(), created_at);
    item
}

pub(crate) fn decode_purchase(item: &Item) -> Result<Purchase, StoreError> {
    let r = Reader::new(item);
    let void = match r.opt_str(STATUS)? {
        Some(VOID) => Some(Void {
            reason: r.str(VOID_REASON)?.to_owned(),
            at: r.parsed(VOIDED_AT, parse_timestamp)?,
            after_freeze: r.opt_derived(VOIDED_AFTER_FREEZE)?,
        }),
        _ => None,
    };
    Ok(Purchase {
        draw_id: r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        payment_id: r.parsed("payment_id", |v| PaymentId::parse(v).ok())?,
        quantity: r.num("quantity")?,
        payer_id: r.opt_str("payer_id")?.map(PayerId::stored),
        tickets: r.num_list("tickets")?,
        chosen: r.flag(CHOSEN),
        channel: match r.opt_str(CHANNEL)? {
            Some(channel) => Channel::parse(channel).ok_or_else(|| StoreError::Corrupt {
                key: r.str(super::super::PARTITION_KEY).unwrap_or("?").to_owned(),
                reason: format!("unknown channel `{channel}`"),
            })?,
            None => Channel::Online,
        },
        amount: match r.opt_num(AMOUNT)? {
            Some(minor) => Some(Money {
                minor,
                currency: r.parsed(CURRENCY, |v| Currency::parse(v).ok())?,
            }),
            None => None,
        },
        fingerprint: r.str("fingerprint")?.to_owned(),
        created_at: r.parsed("created_at", parse_timestamp)?,
        void,
        unfinished: decode_unfinished(&r)?,
    })
}

pub(crate) fn encode_ticket(purchase: &Purchase, number: u64) -> Item {
    let mut item = key(keys::ticket(&purchase.draw_id, number));
    item.insert(kind::ATTRIBUTE.into(), s(kind::TICKET));
    item.insert("draw_id".into(), s(purchase.draw_id.as_str()));
    item.insert("number".into(), n(number));
    item.insert("payment_id".into(), s(purchase.payment_id.as_str()));
    if let Some(payer) = &purchase.payer_id {
        item.insert("payer_id".into(), s(payer.as_str()));
    }
    item
}

pub(crate) fn decode_ticket(item: &Item) -> Result<Ticket, StoreError> {
    let r = Reader::new(item);
    Ok(Ticket {
        draw_id: r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        number: r.num("number")?,
        payment_id: r.parsed("payment_id", |v| PaymentId::parse(v).ok())?,
        payer_id: r.opt_str("payer_id")?.map(PayerId::stored),
        voided: r.opt_str(STATUS)? == Some(VOID),
    })
}
