use super::*;

#[test]
fn the_limits_page_gives_each_reason_its_own_length() {
    let page = include_str!("../../../../docs/limits.md");
    let order = format!("counter move (order routes) | 1 to {MAX_REASON_CHARS} characters");
    let ticket = format!(
        "redraw (ticket routes) | 1 to {} characters",
        crate::purchase::MAX_REASON_LEN
    );
    assert!(page.contains(&order), "{order}");
    assert!(page.contains(&ticket), "{ticket}");
}

fn data(raw: &str) -> OrderData {
    OrderData::parse(Some(raw)).unwrap()
}

#[test]
fn data_must_be_a_bounded_object_with_each_key_once() {
    assert_eq!(OrderData::parse(None), Ok(OrderData::empty()));
    assert!(OrderData::parse(Some(r#"{"a": 1}"#)).is_ok());
    assert_eq!(
        OrderData::parse(Some("[1]")),
        Err(OrderDataError::NotAnObject(NotAnObject::Array))
    );
    // What PHP's json_encode([]) sends: the refusal says what to send instead.
    let php = OrderData::parse(Some("[ ]")).unwrap_err();
    assert_eq!(php, OrderDataError::NotAnObject(NotAnObject::EmptyArray));
    assert!(php.to_string().contains("stdClass"), "{php}");
    assert_eq!(
        OrderData::parse(Some("\"x\"")),
        Err(OrderDataError::NotAnObject(NotAnObject::Scalar))
    );
    let big = format!(r#"{{"x": "{}"}}"#, "y".repeat(MAX_DATA_BYTES));
    assert_eq!(OrderData::parse(Some(&big)), Err(OrderDataError::TooLarge));
    assert_eq!(
        OrderData::parse(Some(r#"{"a": {"b": 1, "b": 2}}"#)),
        Err(OrderDataError::DuplicateKey("b".into()))
    );
    // A long key is shown back as an excerpt, whatever its length.
    let key = "k".repeat(8_000);
    let twice = format!(r#"{{"{key}": 1, "{key}": 2}}"#);
    let refused = OrderData::parse(Some(&twice)).unwrap_err().to_string();
    assert!(refused.len() < 100, "{refused}");
}

/// `{"k": ` then `depth - 1` levels of arrays and objects, alternating, around `leaf`.
fn nested(depth: usize, leaf: &str) -> String {
    let inner = depth - 1;
    let open: String = (0..inner)
        .map(|i| if i % 2 == 0 { "[" } else { "{\"a\":" })
        .collect();
    let close: String = (0..inner)
        .rev()
        .map(|i| if i % 2 == 0 { "]" } else { "}" })
        .collect();
    format!(r#"{{"k": {open}{leaf}{close}}}"#)
}

#[test]
fn data_nested_past_the_limit_is_refused_at_every_depth_without_recursing() {
    for depth in 1..=200 {
        let text = nested(depth, "1");
        let parsed = OrderData::parse(Some(&text));
        if depth <= MAX_DATA_DEPTH {
            assert!(parsed.is_ok(), "depth {depth}: {parsed:?}");
        } else {
            assert_eq!(parsed, Err(OrderDataError::TooDeep), "depth {depth}");
        }
    }
    // What 16 KiB allow (8,000 levels) and what took a process down (560 levels).
    let deepest = format!(r#"{{"k": {}{}}}"#, "[".repeat(8_000), "]".repeat(8_000));
    assert_eq!(
        OrderData::parse(Some(&deepest)),
        Err(OrderDataError::TooDeep)
    );
    assert_eq!(
        OrderData::parse(Some(&nested(560, "1"))),
        Err(OrderDataError::TooDeep)
    );
    // Brackets and escaped quotes inside strings are text, not levels.
    let text = format!(r#"{{"k": "{}\"{}"}}"#, "[".repeat(100), "{".repeat(100));
    assert!(OrderData::parse(Some(&text)).is_ok());
    // Unbalanced brackets are malformed whatever their count.
    assert!(matches!(
        OrderData::parse(Some(&format!(r#"{{"k": {}"#, "[".repeat(20)))),
        Err(OrderDataError::Malformed(_))
    ));
}

#[test]
fn data_keeps_numbers_exactly_as_sent() {
    let big = data(r#"{"n": 123456789012345678901234567890, "x": 1.0}"#);
    assert_eq!(
        big.as_raw(),
        r#"{"n": 123456789012345678901234567890, "x": 1.0}"#
    );
    assert_eq!(
        big.canonical(),
        r#"{"n":123456789012345678901234567890,"x":1.0}"#
    );
    assert_eq!(
        big.to_raw_value().get(),
        r#"{"n": 123456789012345678901234567890, "x": 1.0}"#
    );
}

#[test]
fn canonical_data_ignores_key_order_and_whitespace_but_not_values() {
    let a = data(r#"{"a": 1, "b": {"d": [1, "\u0041"], "c": null}}"#);
    let b = data(r#"{ "b": {"c": null, "d": [1, "A"]}, "a": 1 }"#);
    assert_eq!(a.canonical(), b.canonical());
    assert_eq!(a.canonical(), r#"{"a":1,"b":{"c":null,"d":[1,"A"]}}"#);
    assert_ne!(
        data(r#"{"a": 1}"#).canonical(),
        data(r#"{"a": 1.0}"#).canonical()
    );
}

#[test]
fn fingerprint_ignores_key_order_but_not_values_or_series() {
    let order = |raw: &str| NewOrder {
        external_ref: ExternalRef::parse("r").unwrap(),
        data: data(raw),
        corrects: None,
    };
    let s = SeriesId::parse("S").unwrap();
    let t = SeriesId::parse("T").unwrap();
    let a = r#"{"a":1,"b":2}"#;
    let b = r#"{"b":2,"a":1}"#;
    assert_eq!(order(a).fingerprint(&s), order(b).fingerprint(&s));
    assert_ne!(
        order(a).fingerprint(&s),
        order(r#"{"a": 2, "b": 2}"#).fingerprint(&s)
    );
    assert_ne!(order(a).fingerprint(&s), order(a).fingerprint(&t));
    let credit = NewOrder {
        corrects: Some("F1".into()),
        ..order(a)
    };
    assert_ne!(credit.fingerprint(&s), order(a).fingerprint(&s));
    assert!(is_number_text("INV/2026-27/0001") && !is_number_text("A B"));
}
