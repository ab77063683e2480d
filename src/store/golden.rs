//! The table layout is a contract: items written by an earlier version keep reading, and
//! a new version writes the same attributes. `tests/fixtures/items/` holds an item of
//! each kind as DynamoDB's attribute-value JSON, written once by the encoders and kept
//! as the reference: each test decodes its item, checks the values, and encodes those
//! values again to the very same item. Items that only updates write (stripes,
//! allowances, counters) are read only.

use aws_sdk_dynamodb::types::AttributeValue;
use jiff::{SignedDuration, Timestamp};

use super::StoreError;
use super::allowances::Allowance;
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
use tally_domain::stripes::StripeCounters;
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

#[test]
fn a_purchase_reads_and_writes_as_stored() {
    let decoded = decode_purchase(&stored("purchase")).unwrap();
    assert_eq!(decoded, purchase());
    assert_writes("purchase", encode_purchase(&decoded, 2));
}

#[test]
fn a_ticket_reads_and_writes_as_stored() {
    let decoded = decode_ticket(&stored("ticket")).unwrap();
    let expected = Ticket {
        draw_id: draw_id(),
        number: 17,
        payment_id: payment("pay-1"),
        payer_id: Some(PayerId::stored("payer@example.com")),
        voided: false,
    };
    assert_eq!(decoded, expected);
    assert_writes("ticket", encode_ticket(&purchase(), 17));
}

#[test]
fn a_hold_reads_and_writes_as_stored() {
    let decoded = decode_hold(&stored("hold")).unwrap();
    assert_eq!(decoded, hold());
    assert_writes("hold", encode_hold(&decoded));
}

fn hold() -> Hold {
    Hold {
        draw_id: draw_id(),
        hold_id: HoldId::parse("hold-1").unwrap(),
        payer_id: PayerId::stored("payer@example.com"),
        tickets: vec![8, 9],
        chosen: true,
        fingerprint: "a1b2c3".into(),
        created_at: at(2),
        expires_at: at(2) + SignedDuration::from_secs(600),
        end: HoldEnd::Open,
    }
}

#[test]
fn an_award_reads_and_writes_as_stored() {
    let (draw, decoded) = decode_award(&stored("award")).unwrap();
    assert_eq!((&draw, &decoded), (&draw_id(), &award()));
    assert_writes("award", encode_award(&draw, &decoded, 4).unwrap());
}

fn award() -> InstantAward {
    InstantAward {
        payment_id: payment("pay-1"),
        payer_id: Some(PayerId::stored("payer@example.com")),
        wins: vec![
            InstantWin {
                ticket: 4,
                prize: "mug".into(),
            },
            InstantWin {
                ticket: 250,
                prize: "hat".into(),
            },
        ],
        awarded_at: at(1),
        voided: false,
    }
}

#[test]
fn a_pick_reads_and_writes_as_stored() {
    let decoded = decode_pick(&stored("pick")).unwrap();
    assert_eq!(decoded, pick());
    assert_writes("pick", encode_pick(&draw_id(), &decoded));
}

fn pick() -> PickItem {
    PickItem {
        pick: 3,
        prize: 1,
        ticket: 250,
        payment_id: payment("pay-1"),
        payer_id: Some(PayerId::stored("payer@example.com")),
        reason: Some("the winner could not be reached".into()),
        requested_at: Some(at(5)),
        beacon: Some(RoundSignature {
            round: 1_234_567,
            signature: "ab12".into(),
        }),
        at: at(6),
    }
}

fn draw() -> Draw {
    Draw {
        draw_id: draw_id(),
        name: Some("Spring raffle".into()),
        config: DrawConfig::new(1000, Some(10), Some(8))
            .and_then(|c| c.with_max_per_payer(Some(20)))
            .and_then(|c| c.with_hold_seconds(Some(300)))
            .and_then(|c| c.with_max_held_per_payer(Some(10)))
            .and_then(|c| c.with_max_held_percent(Some(50)))
            .unwrap()
            .with_instant_wins(true),
        schedule: Schedule::new(Some(at(0)), Some(at(30))).unwrap(),
        beacon: Some(BeaconNetwork::quicknet()),
        created_beacon: Some("quicknet".into()),
        key: PermutationKey::from_bytes(&[7; 16]).unwrap(),
        seed: DrawSeed::from_bytes(&[9; 32]).unwrap(),
        instant_wins: Some(InstantWins::stored(
            vec![
                InstantPrize {
                    prize: "mug".into(),
                    count: 5,
                },
                InstantPrize {
                    prize: "hat".into(),
                    count: 2,
                },
            ],
            "5eed".into(),
        )),
        status: DrawStatus::Open,
        voided: 0,
        late_voided: 0,
        voiding: Vec::new(),
        frozen: None,
        postal_voided: 0,
        winners: None,
        pending_redraw: None,
        sold_out_at: None,
        created_at: at(0),
    }
}
fn frozen() -> Frozen {
    Frozen {
        eligible_count: 996,
        eligible_digest: "d1d2".into(),
        frozen_at: at(31),
        beacon_round: Some(1_234_500),
    }
}

fn winners() -> WinnersRecord {
    WinnersRecord {
        prizes: 3,
        beacon: Some(RoundSignature {
            round: 1_234_510,
            signature: "cd34".into(),
        }),
        eligible_count: 996,
        eligible_digest: "d1d2".into(),
        picks: 4,
        drawn_at: at(32),
    }
}

fn pending() -> PendingRedraw {
    PendingRedraw {
        prize: 2,
        pick: 5,
        reason: "the winner declined".into(),
        requested_at: at(33),
        beacon_round: 1_234_520,
    }
}

#[test]
fn a_draw_reads_and_writes_as_stored() {
    let decoded = decode_draw(&stored("draw")).unwrap();
    assert_eq!(decoded.draw_id, draw_id());
    assert_eq!(decoded.name.as_deref(), Some("Spring raffle"));
    assert_eq!(decoded.config.total_tickets(), 1000);
    assert_eq!(decoded.config.max_per_payer(), Some(20));
    assert_eq!(decoded.config.hold_seconds(), 300);
    assert_eq!(decoded.schedule.closes_at(), Some(at(30)));
    assert_eq!(decoded.key.as_bytes(), &[7; 16]);
    assert_eq!(decoded.seed.as_bytes().as_slice(), &[9; 32]);
    assert_eq!(decoded.beacon.as_ref().map(|b| b.name()), Some("quicknet"));
    let instant = decoded.instant_wins.as_ref().expect("instant wins");
    assert_eq!(instant.prizes().len(), 2);
    assert_eq!(decoded.created_at, at(0));
    assert_writes("draw", encode_draw(&decoded).unwrap());
    assert_writes("draw", encode_draw(&draw()).unwrap());
}

#[test]
fn a_corrupt_hold_time_makes_the_draw_corrupt_like_any_other_attribute() {
    for value in [
        AttributeValue::N("soon".into()),
        AttributeValue::S("120".into()),
    ] {
        let mut item = stored("draw");
        item.insert("hold_seconds".into(), value);
        assert!(matches!(
            decode_draw(&item),
            Err(StoreError::Corrupt { .. })
        ));
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
fn a_wrong_typed_winners_record_makes_the_draw_corrupt() {
    let number_as_text = AttributeValue::S("3".into());
    assert_corrupt(
        "draw_drawn",
        &[WINNERS, "prizes"],
        number_as_text,
        decode_draw,
    );
    let bad_time = AttributeValue::S("yesterday".into());
    assert_corrupt("draw_drawn", &[WINNERS, "drawn_at"], bad_time, decode_draw);
}

#[test]
fn a_wrong_typed_format_or_range_makes_the_series_corrupt() {
    let flag = AttributeValue::Bool(true);
    assert_corrupt("series", &["formats", "0", "version"], flag, decode_series);
    let text = AttributeValue::S("999999".into());
    assert_corrupt("series", &["ranges", "0", "to"], text, decode_series);
    let list = AttributeValue::L(Vec::new());
    assert_corrupt(
        "series",
        &["ranges", "0", "valid_until"],
        list,
        decode_series,
    );
}

#[test]
fn a_drawn_draw_reads_what_its_updates_wrote() {
    let item = stored("draw_drawn");
    let decoded = decode_draw(&item).unwrap();
    assert_eq!(decoded.status, DrawStatus::Closed);
    assert_eq!(decoded.frozen, Some(frozen()));
    assert_eq!(decoded.winners, Some(winners()));
    assert_eq!(decoded.pending_redraw, Some(pending()));
    assert_eq!(
        (decoded.voided, decoded.late_voided, decoded.postal_voided),
        (3, 1, 2)
    );
    assert_eq!(decoded.voiding, vec![payment("pay-9")]);
    assert_eq!(decoded.sold_out_at, Some(at(20)));
    // What the updates write, written again from the values read.
    assert_eq!(item[FROZEN], derived(&frozen()).unwrap());
    // A draw without a beacon stores no round at all.
    let unbeaconed = derived(&Frozen {
        beacon_round: None,
        ..frozen()
    });
    assert!(
        !unbeaconed
            .unwrap()
            .as_m()
            .unwrap()
            .contains_key("beacon_round")
    );
    assert_eq!(item[WINNERS], encode_winners(&winners()).unwrap());
    assert_eq!(item[PENDING_REDRAW], derived(&pending()).unwrap());
}

fn series() -> Series {
    let range = AuthorisedRange::new(1, 999_999, "AUTH-2026-1", Some(at(40))).unwrap();
    let definition = SeriesDefinition::new("INV-{yyyy}-{seq:6}", Reset::Yearly, true, 1)
        .unwrap()
        .with_calendar(Calendar::new(Timezone::parse("Europe/Kyiv").unwrap(), 4).unwrap())
        .with_rules(NumberRules::new(Some(20), None).unwrap())
        .with_ranges(Ranges::new(vec![range]).unwrap(), 15)
        .unwrap()
        .crediting(Some(SeriesId::parse("CN").unwrap()))
        .issued_by(IssuerId::parse("acme").unwrap());
    let mut series = Series::new(series_id(), definition, at(0));
    series.revision = 2;
    series.numbered = true;
    series
}

#[test]
fn a_series_reads_and_writes_as_stored() {
    let decoded = decode_series(&stored("series")).unwrap();
    assert_eq!(decoded, series());
    assert_writes("series", encode_series(&decoded).unwrap());
}

#[test]
fn an_issuer_reads_and_writes_as_stored() {
    let decoded = decode_issuer(&issuer().issuer, &stored("issuer")).unwrap();
    assert_eq!(decoded, issuer());
    assert_writes("issuer", encode_issuer(&decoded).unwrap());
}

fn issuer() -> Issuer {
    let mut expected = Issuer::new(IssuerId::parse("acme").unwrap());
    expected.version = 3;
    expected.series.insert(
        SeriesId::parse("FT").unwrap(),
        Entry {
            formats: vec![NumberFormat::parse("{code}-{seq:1}").unwrap()],
            code: Some(ValidationCode::parse("CSDF7T5H").unwrap()),
        },
    );
    expected.series.insert(
        series_id(),
        Entry {
            formats: vec![NumberFormat::parse("INV-{yyyy}-{seq:6}").unwrap()],
            code: None,
        },
    );
    expected
}

fn order() -> Order {
    Order {
        order_number: "INV-2026-000042".into(),
        series: series_id(),
        source: SourceId::parse("shop").unwrap(),
        external_ref: ExternalRef::parse("cart-9").unwrap(),
        data: OrderData::parse(Some(r#"{"total":"12.50"}"#)).unwrap(),
        fingerprint: "0a0b0c".into(),
        period: "2026".into(),
        counter: 42,
        created_at: at(3),
        hash: Some("c0ffee".into()),
        void: Some(Void {
            reason: Reason::parse("entered twice").unwrap(),
            at: at(4),
        }),
        corrects: None,
        credit_notes: vec!["CN-2026-000001".into()],
    }
}

#[test]
fn an_order_reads_and_writes_as_stored_under_both_keys() {
    let number = stored("order");
    assert_eq!(decode_order(&number).unwrap(), order());
    let pk = "ORDER#INV#2026#42".to_owned();
    let period_key = "SERIES#INV#PERIOD#2026".to_owned();
    assert_writes("order", encode_order(pk, &order(), Some(period_key)));
    let by_ref = decode_order(&stored("order_ref")).unwrap();
    // The reference item keeps no credit notes: the number item lists them.
    let expected = Order {
        credit_notes: Vec::new(),
        ..order()
    };
    assert_eq!(by_ref, expected);
    assert_writes(
        "order_ref",
        encode_order("SOURCE#shop#REF#cart-9".into(), &by_ref, None),
    );
}

#[test]
fn a_move_reads_and_writes_as_stored() {
    let decoded = decode_move(&stored("move")).unwrap();
    assert_eq!(decoded, moved());
    assert_writes("move", encode_move(&series_id(), &period(), &decoded));
}

fn period() -> Period {
    Period::parse(Reset::Yearly, "2026").unwrap()
}

fn moved() -> Move {
    Move {
        series: series_id(),
        from: 43,
        to: 99,
        reason: Reason::parse("paper numbers used").unwrap(),
        at: at(7),
        hash: Some("beef".into()),
    }
}

#[test]
fn a_range_low_reads_and_writes_as_stored() {
    let decoded = decode_range_low(&stored("range_low")).unwrap();
    assert_eq!(decoded, range_low());
    assert_writes("range_low", encode_range_low(&decoded));
}

fn range_low() -> RangeLow {
    RangeLow {
        series: series_id(),
        range: AuthorisedRange::new(1, 999_999, "AUTH-2026-1", Some(at(40))).unwrap(),
        percent: 15,
        threshold: 850_000,
        at: at(8),
    }
}

#[test]
fn a_stripe_reads_as_stored() {
    let state = StripeState::decode(&stored("stripe")).unwrap();
    assert_eq!(state.counters, StripeCounters { bottom: 12, top: 3 });
    assert!(state.closed);
    assert_eq!(state.chosen, [40, 41].into());
    assert_eq!(state.held, [(50, 1_793_527_200_125)].into());
    assert_eq!(state.postal, 2);
    assert_eq!(state.sold(100), 17);
    let mut bottom_only = stored("stripe");
    bottom_only.remove(TOP);
    let state = StripeState::decode(&bottom_only).unwrap();
    assert_eq!(state.counters, StripeCounters { bottom: 12, top: 0 });
}

#[test]
fn an_allowance_reads_as_stored() {
    let allowance = Allowance::decode(&stored("allowance")).unwrap();
    assert_eq!((allowance.held, allowance.holding), (7, 2));
    assert_eq!(allowance.holds.len(), 1);
    assert_eq!(
        (allowance.holds[0].end, allowance.holds[0].quantity),
        (1_793_527_200_125, 2)
    );
}

#[test]
fn a_counter_reads_as_stored() {
    let counter = decode_counter(&stored("counter")).unwrap();
    assert_eq!(counter.last, Some(42));
    assert_eq!(counter.head.as_deref(), Some("c0ffee"));
    assert_eq!(counter.format_version, Some(1));
    let lease = counter.pending.expect("a lease");
    assert_eq!(
        (lease.owner.as_str(), lease.until),
        ("writer-7", 1_793_527_200_125)
    );
    assert_eq!(counter.moved_to, Some(99));
    assert_eq!(counter.turns, Some(1_793_527_201_000));
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

#[test]
fn a_priced_purchase_reads_and_writes_as_stored() {
    let priced = Purchase {
        channel: Channel::Online,
        amount: Some(Money {
            minor: 750,
            currency: Currency::parse("GBP").unwrap(),
        }),
        ..purchase()
    };
    let decoded = decode_purchase(&stored("purchase_priced")).unwrap();
    assert_eq!(decoded, priced);
    assert_writes("purchase_priced", encode_purchase(&decoded, 2));
    // A purchase stored before prices reads without an amount.
    assert_eq!(decode_purchase(&stored("purchase")).unwrap().amount, None);
}

#[test]
fn a_payer_item_reads_as_stored() {
    let payer = PayerRecord::decode(&stored("payer")).unwrap();
    let gbp = Currency::parse("GBP").unwrap();
    assert_eq!(payer.version, 3);
    assert_eq!(
        payer
            .limits
            .limit(&Default::default(), gbp, Span::Day, at(0)),
        Some(5_000)
    );
    assert_eq!(payer.exclusion.map(|e| e.until), Some(Some(at(30))));
    let day = &payer.spent[&(gbp, Span::Day)];
    assert_eq!((day.window.as_str(), day.amount), ("2026-11-01", 1_250));
}
