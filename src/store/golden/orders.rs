//! The stored items of series, issuers, orders, moves, range notices and counters.

use super::*;

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
