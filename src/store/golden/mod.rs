//! The table layout is a contract: items written by an earlier version keep reading, and
//! a new version writes the same attributes. `tests/fixtures/items/` holds an item of
//! each kind as DynamoDB's attribute-value JSON, written once by the encoders and kept
//! as the reference: each test decodes its item, checks the values, and encodes those
//! values again to the very same item. Items that only updates write (stripes,
//! allowances, counters) are read only. The items of tickets are checked in `tickets.rs`,
//! those of orders in `orders.rs`.

mod orders;
mod tickets;

use aws_sdk_dynamodb::types::AttributeValue;
use jiff::{SignedDuration, Timestamp};

use super::StoreError;
use super::allowances::Allowance;
use super::bundles::encode_unfinished_marker;
use super::codec::{Item, derived};
use super::draws::{FROZEN, PENDING_REDRAW, WINNERS, decode_draw, encode_draw, encode_winners};
use super::holds::{decode_hold, encode_hold};
use super::instant::{decode_award, encode_award};
use super::issuers::{decode_issuer, encode_issuer};
use super::journal::{decode_entry, encode_entry};
use super::orders::{
    decode_counter, decode_move, decode_order, decode_range_low, decode_series, encode_move,
    encode_order, encode_range_low, encode_series,
};
use super::payers::PayerRecord;
use super::purchases::{decode_purchase, decode_ticket, encode_purchase, encode_ticket};
use super::stripes::{StripeState, TOP};
use super::winners::{PickItem, decode_pick, encode_pick};
use tally_domain::draw::{Draw, DrawConfig, DrawStatus, Frozen, PendingRedraw, WinnersRecord};
use tally_domain::hold::{Hold, HoldEnd};
use tally_domain::ids::{
    DrawId, ExternalRef, HoldId, IssuerId, PayerId, PaymentId, SeriesId, SourceId,
};
use tally_domain::instant::{InstantAward, InstantPrize, InstantWin, InstantWins};
use tally_domain::journal::{Action, Draft, Head, Operator};
use tally_domain::order::{Move, Order, OrderData, Reason, Void};
use tally_domain::permutation::PermutationKey;
use tally_domain::purchase::{Channel, Purchase, Ticket};
use tally_domain::schedule::Schedule;
use tally_domain::seed::DrawSeed;
use tally_domain::series::issuer::{Entry, Issuer};
use tally_domain::series::{
    AuthorisedRange, Calendar, NumberFormat, NumberRules, Period, RangeLow, Ranges, Reset, Series,
    SeriesDefinition, Timezone, ValidationCode,
};
use tally_domain::spend::{Currency, Money, Span};
use tally_domain::stripes::StripeCursors;
use tally_domain::winners::{BeaconNetwork, RoundSignature};
/// The stored item `name`.
fn stored(name: &str) -> Item {
    let path = format!(
        "{}/tests/fixtures/items/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let item: serde_dynamo::Item =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    item.into()
}

/// An item as attribute-value JSON, its names sorted.
fn json(item: &Item) -> String {
    fn sorted(value: serde_json::Value) -> serde_json::Value {
        match value {
            serde_json::Value::Object(map) => {
                let mut entries: Vec<_> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                serde_json::Value::Object(
                    entries.into_iter().map(|(k, v)| (k, sorted(v))).collect(),
                )
            }
            serde_json::Value::Array(values) => {
                serde_json::Value::Array(values.into_iter().map(sorted).collect())
            }
            other => other,
        }
    }
    let item = serde_dynamo::Item::from(item.clone());
    let value = serde_json::to_value(&item).expect("an item is JSON");
    serde_json::to_string_pretty(&sorted(value)).expect("JSON prints") + "\n"
}

/// What the encoder writes is the stored item, attribute for attribute.
fn assert_writes(name: &str, written: Item) {
    assert!(
        written == stored(name),
        "the {name} item's layout changed; the encoder now writes:\n{}",
        json(&written)
    );
}

fn at(second: i8) -> Timestamp {
    jiff::tz::Offset::UTC
        .to_timestamp(jiff::civil::date(2026, 11, 1).at(10, 0, second, 0))
        .unwrap()
        + SignedDuration::from_millis(125)
}

fn draw_id() -> DrawId {
    DrawId::parse("spring-raffle").unwrap()
}

fn payment(id: &str) -> PaymentId {
    PaymentId::parse(id).unwrap()
}

fn series_id() -> SeriesId {
    SeriesId::parse("INV").unwrap()
}

fn purchase() -> Purchase {
    Purchase {
        draw_id: draw_id(),
        payment_id: payment("pay-1"),
        quantity: 3,
        payer_id: Some(PayerId::stored("payer@example.com")),
        tickets: vec![17, 4, 250],
        chosen: true,
        channel: Channel::Postal,
        amount: None,
        fingerprint: "f1e2d3".into(),
        created_at: at(1),
        void: None,
        unfinished: None,
    }
}

/// The stored item `name` with the attribute at `path` (names, then list positions)
/// replaced by `value` reads as corrupt, for a reason that names the attribute.
fn assert_corrupt<T: std::fmt::Debug>(
    name: &str,
    path: &[&str],
    value: AttributeValue,
    decode: impl Fn(&Item) -> Result<T, StoreError>,
) {
    fn replace(item: &mut Item, path: &[&str], value: AttributeValue) {
        let (first, rest) = path.split_first().expect("a path");
        let mut at = item.get_mut(*first).expect("the attribute");
        for step in rest {
            at = match at {
                AttributeValue::M(map) => map.get_mut(*step).expect("the member"),
                AttributeValue::L(list) => &mut list[step.parse::<usize>().unwrap()],
                other => panic!("{other:?} holds nothing"),
            };
        }
        *at = value;
    }
    let mut item = stored(name);
    replace(&mut item, path, value);
    match decode(&item) {
        Err(StoreError::Corrupt { key, reason }) => {
            assert_eq!(Some(&AttributeValue::S(key)), item.get("pk"));
            let named =
                path.iter()
                    .fold(String::new(), |named, step| match step.parse::<usize>() {
                        Ok(_) => format!("{named}[{step}]"),
                        Err(_) if named.is_empty() => step.to_string(),
                        Err(_) => format!("{named}.{step}"),
                    });
            assert!(reason.contains(&format!("`{named}`")), "{reason}");
        }
        other => panic!("the {name} item read as {other:?}"),
    }
}

#[test]
fn a_journal_entry_reads_and_writes_as_stored() {
    let draft = Draft::new(
        at(9),
        &Operator::named("arn:aws:iam::123456789012:role/operator"),
        Action::PurchaseVoided,
        "draw/spring-raffle/purchase/pay-1".to_owned(),
        &serde_json::json!({"late": false, "reason": "refund", "status": "void", "tickets": 3}),
    );
    let (expected, _) = Head::EMPTY.next(draft);
    let decoded = decode_entry(&stored("journal_entry")).unwrap();
    assert_eq!(decoded, expected);
    assert_writes("journal_entry", encode_entry(&decoded));
}
