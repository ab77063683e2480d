use super::*;
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "the tests read a few of the values")]
struct Body {
    quantity: u32,
    total: Option<u64>,
    name: Option<String>,
    flag: Option<bool>,
    #[serde(default, deserialize_with = "optional_rfc3339")]
    closes_at: Option<Timestamp>,
    numbers: Option<Vec<u32>>,
    reset: Option<Reset>,
    tier: Option<Tier>,
    data: Option<Box<RawValue>>,
    any: Option<serde_json::Value>,
    prize: Option<Prize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "the tests read the errors, never the values")]
struct Prize {
    rank: u32,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reset {
    Never,
    Yearly,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Tier {
    Gold,
    Silver,
    Bronze,
}

/// Bodies, the top-level field their code names (`-`: none) and what their misfit
/// says (`{rfc}`: [`RFC3339_EXPECTED`]).
const MISFITS: &str = r#"
    {"quantity": 4294967296} | quantity | `quantity` must be a whole number of at most 4294967295, not 4294967296
    {"quantity": -1} | quantity | `quantity` must be a whole number of 0 or more, not -1
    {"quantity": 1, "total": 18446744073709551616} | total | `total` must be a whole number of at most 18446744073709551615, not 1.8446744073709552e+19
    {"quantity": 1.5} | quantity | `quantity` must be a whole number, not 1.5
    {"quantity": "3"} | quantity | `quantity` must be a whole number, not "3"
    {"quantity": null} | quantity | `quantity` must be a whole number, not null
    {"quantity": 1, "name": 5} | name | `name` must be a string, not 5
    {"quantity": 1, "flag": "yes"} | flag | `flag` must be true or false, not "yes"
    {"quantity": 1, "numbers": {}} | numbers | `numbers` must be an array, not an object
    {"quantity": 1, "numbers": [1, "x"]} | numbers | `numbers[1]` must be a whole number, not "x"
    {"quantity": 1, "reset": "daily"} | reset | `reset` must be `never` or `yearly`, not `daily`
    {"quantity": 1, "tier": "iron"} | tier | `tier` must be one of `gold`, `silver`, `bronze`, not `iron`
    {"quantity": 1, "closes_at": "tomorrow"} | closes_at | `closes_at` must be {rfc}, not "tomorrow"
    {"quantity": 1, "closes_at": 5} | closes_at | `closes_at` must be {rfc}, not 5
    {"quantity": 1, "closes_at": "2099-06-30T23:59:60.5Z"} | closes_at | `closes_at`: second 60 (a leap second) is not taken: give 23:59:59.999 or the next second
    {"quantity": 1, "closes_at": "9999-12-31T23:59:59Z"} | closes_at | `closes_at`: past 9999-12-30T22:00:00Z, the last time kept
    {"total": 1} | - | `quantity` is required
    {"quantity": 1, "colour": 2} | - | `colour` is not a field here; the fields are `quantity`, `total`, `name`, `flag`, `closes_at`, `numbers`, `reset`, `tier`, `data`, `any`, `prize`
    {"quantity": 1, "prize": {"rank": 1, "colour": 2}} | - | `colour` is not a field here; the fields are `rank`
    {"quantity": 1, "prize": {}} | prize | `rank` in `prize` is required
    {"quantity": 1, "prize": {"rank": true}} | prize | `prize.rank` must be a whole number, not true
    {"quantity": 1, "quantity": 2} | - | `quantity` is given twice
    42 | - | the body must be a JSON object, not 42
    {"quantity": 1, | - | the body is not valid JSON: EOF while parsing a value at line 1 column 15
"#;

#[test]
fn each_misfit_names_its_field_what_it_takes_and_what_came() {
    for line in MISFITS.trim().lines() {
        let [json, field, said] = line.split(" | ").map(str::trim).collect::<Vec<_>>()[..] else {
            panic!("{line}");
        };
        let misfit = read::<Body>(json.as_bytes()).unwrap_err();
        assert_eq!(misfit.field().unwrap_or("-"), field, "{json}");
        let said = said.replace("{rfc}", RFC3339_EXPECTED);
        assert_eq!(misfit.explain("the body"), said, "{json}");
        assert_eq!(
            misfit.is_syntax(),
            said.contains("not valid JSON"),
            "{json}"
        );
    }
}

#[test]
fn a_misfit_left_on_the_thread_is_not_the_next_reads() {
    facts::SLOT.set(Some(Kind::Missing("left")));
    assert!(read::<Body>(b"{").unwrap_err().is_syntax());
}

#[test]
fn times_raw_values_and_trees_are_read() {
    let body: Body = read(
        br#"{"quantity": 1, "closes_at": "2030-02-01T00:00:00+01:00", "name": null,
            "data": {"b": 1, "a": [1.0]}, "any": [{"x": null}], "tier": "gold"}"#,
    )
    .unwrap();
    let at = tally_domain::time::rfc3339_millis(body.closes_at.unwrap());
    assert_eq!(at, "2030-01-31T23:00:00.000Z");
    assert_eq!(body.data.unwrap().get(), r#"{"b": 1, "a": [1.0]}"#);
    assert_eq!(body.any, Some(serde_json::json!([{"x": null}])));
    assert_eq!(body.tier, Some(Tier::Gold));
    let none: Body = read(br#"{"quantity": 1, "closes_at": null}"#).unwrap();
    assert!(none.closes_at.is_none());
    // A raw value is kept whole however deep; a value read as a tree stops at
    // serde_json's depth, as no JSON; neither runs out of stack.
    let deep = format!("{}{}", "[".repeat(70_000), "]".repeat(70_000));
    let raw: Body = read(format!(r#"{{"quantity": 1, "data": {deep}}}"#).as_bytes()).unwrap();
    assert_eq!(raw.data.unwrap().get().len(), deep.len());
    let tree = read::<Body>(format!(r#"{{"quantity": 1, "any": {deep}}}"#).as_bytes());
    assert!(tree.unwrap_err().is_syntax());
}

#[test]
fn an_object_is_read_and_an_array_or_trailing_text_refused() {
    let read: Body = read_object(r#" {"quantity": 2}"#, "the order").unwrap();
    assert_eq!(read.quantity, 2);
    let refused = |text| read_object::<Body>(text, "the order").unwrap_err();
    let array = "[2, null, null, null, null, null, null, null, null, null]";
    assert_eq!(refused(array), "the order must be a JSON object");
    assert_eq!(
        refused(r#"{"quantity": 2} {}"#),
        "the order is not valid JSON: trailing characters at line 1 column 17"
    );
}

#[test]
fn a_long_value_field_variant_or_key_sent_is_shown_as_an_excerpt() {
    let long = "\\\\".repeat(100_000);
    let shown = format!("{}…", "\\\\".repeat(16));
    for (json, said) in [
        (
            format!(r#"{{"quantity": "{long}"}}"#),
            format!(
                "`quantity` must be a whole number, not {}",
                serde_json::json!(shown)
            ),
        ),
        (
            format!(r#"{{"quantity": 1, "tier": "{long}"}}"#),
            format!(
                "`tier` must be one of `gold`, `silver`, `bronze`, not `{}`",
                "\\".repeat(32) + "…"
            ),
        ),
        (
            format!(r#"{{"quantity": 1, "{long}": 1}}"#),
            format!("`{}…` is not a field here", "\\".repeat(32)),
        ),
    ] {
        let explained = read::<Body>(json.as_bytes())
            .unwrap_err()
            .explain("the body");
        assert!(explained.starts_with(&said), "{explained:.200}");
        assert!(explained.len() < 400, "{} bytes", explained.len());
    }
    // A key of a map is where a value was, as sent: an excerpt too.
    let keyed = format!(r#"{{"{long}": "x"}}"#);
    let explained = read::<std::collections::BTreeMap<String, u32>>(keyed.as_bytes())
        .unwrap_err()
        .explain("the body");
    assert_eq!(
        explained,
        format!("`{}…` must be a whole number, not \"x\"", "\\".repeat(32))
    );
}

#[derive(Debug, Deserialize)]
struct Keyed {
    #[serde(deserialize_with = "unique_entries")]
    limits: Vec<(String, u32)>,
}

#[test]
fn unique_entries_keep_the_order_and_refuse_a_key_given_twice() {
    let read_keyed = |json: &str| read::<Keyed>(json.as_bytes());
    let keyed = read_keyed(r#"{"limits": {"b": 1, "a": 2}}"#).unwrap();
    assert_eq!(keyed.limits, [("b".to_owned(), 1), ("a".to_owned(), 2)]);
    // The same key however it is escaped.
    let twice = read_keyed(r#"{"limits": {"GBP": 1, "EUR": 2, "G\u0042P": 3}}"#).unwrap_err();
    assert_eq!(twice.field(), Some("limits"));
    assert_eq!(
        twice.explain("the body"),
        r#"`limits`: "GBP" is given twice"#
    );
    let array = read_keyed(r#"{"limits": [1]}"#).unwrap_err();
    assert_eq!(
        array.explain("the body"),
        "`limits` must be a JSON object, not an array"
    );
}
