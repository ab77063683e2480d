//! Clients' JSON, read with errors in the API's words: serde says `expected u32 at line 1
//! column 43` or `expected struct PurchaseBody`; a client needs the field, what it takes
//! and what it was sent instead (`` `quantity` must be a whole number of at most
//! 4294967295, not 4294967296 ``). serde reports each misfit as data (the constructors of
//! `de::Error`), which [`facts`] keeps as a [`Kind`] where serde_json would make it a
//! sentence; serde_path_to_error says where. Times are read as RFC 3339 with an error that
//! says so.

mod facts;

use std::borrow::Cow;
use std::fmt;

use jiff::Timestamp;
use serde::de::{self, DeserializeOwned, Deserializer, Expected, Unexpected, Visitor};
use serde_path_to_error::{Error, Segment, Track};
use tally_domain::time::{TimeError, parse_rfc3339};

/// What a time field takes, as every error about one says it.
pub const RFC3339_EXPECTED: &str = "a date and time in RFC 3339, such as 2026-12-24T18:00:00Z";

/// Reads JSON text into `T`, or says where and why it does not fit.
pub fn read<T: DeserializeOwned>(text: &[u8]) -> Result<T, Misfit> {
    // A misfit left by a read that panicked on this thread is not this read's.
    facts::SLOT.take();
    let mut json = serde_json::Deserializer::from_slice(text);
    let value = serde_path_to_error::deserialize(facts::Facts(&mut json)).map_err(Misfit)?;
    // Characters after the value.
    json.end().map_err(|err| {
        Misfit(Error::new(
            Track::new().path(),
            Kind::Syntax(err.to_string()),
        ))
    })?;
    Ok(value)
}

/// Reads a JSON object into `T`; why it does not fit is explained, `whole` naming the
/// object ("the order"). Serde would also fill a struct from an array, by position: an
/// array is refused.
pub fn read_object<T: DeserializeOwned>(text: &str, whole: &str) -> Result<T, String> {
    if !text.trim_start().starts_with('{') {
        return Err(format!("{whole} must be a JSON object"));
    }
    read(text.as_bytes()).map_err(|misfit| misfit.explain(whole))
}

/// Why JSON text did not give the value asked for, and where.
#[derive(Debug)]
pub struct Misfit(Error<Kind>);

impl Misfit {
    /// Whether the text is no JSON at all.
    pub fn is_syntax(&self) -> bool {
        matches!(self.0.inner(), Kind::Syntax(_))
    }

    /// The top-level field whose value does not fit; none when the whole does not (a
    /// field missing or unknown there), or the text is no JSON.
    pub fn field(&self) -> Option<&str> {
        match (self.0.inner(), self.0.path().iter().next()) {
            (Kind::Syntax(_) | Kind::Unknown(..), _) => None,
            (_, Some(Segment::Map { key })) => Some(key),
            _ => None,
        }
    }

    /// Why, in the API's words; `whole` names the value itself ("the body", "the order").
    pub fn explain(&self, whole: &str) -> String {
        let path = self.0.path();
        let at = (path.iter().len() > 0).then(|| path.to_string());
        self.0.inner().said(at.as_deref(), whole)
    }
}

/// Why a value does not fit, as serde reports it.
#[derive(Debug)]
pub enum Kind {
    /// The text is no JSON (serde_json's message, with line and column).
    Syntax(String),
    Missing(&'static str),
    Twice(&'static str),
    /// A field, and the fields there are.
    Unknown(String, &'static [&'static str]),
    /// A variant, and the variants there are.
    Variant(String, &'static [&'static str]),
    /// A value of the wrong type or out of range: what came (as JSON writes it, and as a
    /// whole number if it is one), what the type expected and, once known, what the hint
    /// it was read with takes.
    Mismatch {
        got: String,
        whole: Option<f64>,
        expected: String,
        takes: Option<Takes>,
    },
    Length(String),
    /// A type's own message (an id's rules, say): it names what it wants.
    Custom(String),
}

/// What a value takes, by the type hint it was read with.
#[derive(Clone, Copy, Debug)]
pub enum Takes {
    /// An unsigned integer up to its largest value.
    Unsigned(u64),
    Integer,
    Number,
    Bool,
    Array,
    Object,
    /// As the type itself says (a string, a time).
    Own,
}

impl Kind {
    fn mismatch(got: Unexpected, expected: &dyn Expected) -> Self {
        let (got, whole) = match got {
            Unexpected::Unsigned(n) => (n.to_string(), Some(n as f64)),
            Unexpected::Signed(n) => (n.to_string(), Some(n as f64)),
            Unexpected::Float(n) => (
                serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string()),
                (n.fract() == 0.0).then_some(n),
            ),
            Unexpected::Str(text) => (serde_json::Value::from(text).to_string(), None),
            Unexpected::Bool(b) => (b.to_string(), None),
            Unexpected::Unit => ("null".to_owned(), None),
            Unexpected::Seq => ("an array".to_owned(), None),
            Unexpected::Map => ("an object".to_owned(), None),
            // Kinds JSON has not: serde's own words.
            other => (other.to_string(), None),
        };
        let expected = expected.to_string();
        Kind::Mismatch {
            got,
            whole,
            expected,
            takes: None,
        }
    }

    /// A mismatch learns what the hint it was read with takes, from the innermost hint.
    fn taking(mut self, hint: Takes) -> Self {
        if let Kind::Mismatch {
            takes: takes @ None,
            ..
        } = &mut self
        {
            *takes = Some(hint);
        }
        self
    }

    /// Why, with `at` the path of the value (none: the value itself, named `whole`).
    fn said(&self, at: Option<&str>, whole: &str) -> String {
        let subject = at.map_or_else(|| whole.to_owned(), |at| format!("`{at}`"));
        let within =
            |field: &str| at.map_or(format!("`{field}`"), |at| format!("`{field}` in `{at}`"));
        match self {
            Kind::Syntax(err) => format!("{whole} is not valid JSON: {err}"),
            Kind::Missing(field) => format!("{} is required", within(field)),
            Kind::Twice(field) => format!("{} is given twice", within(field)),
            Kind::Unknown(field, []) => format!("`{field}` is not a field here"),
            Kind::Unknown(field, fields) => format!(
                "`{field}` is not a field here; the fields are `{}`",
                fields.join("`, `")
            ),
            Kind::Variant(variant, variants) => {
                let one_of = match variants {
                    [one] => format!("`{one}`"),
                    [one, two] => format!("`{one}` or `{two}`"),
                    many => format!("one of `{}`", many.join("`, `")),
                };
                format!("{subject} must be {one_of}, not `{variant}`")
            }
            Kind::Mismatch {
                got,
                whole,
                expected,
                takes,
            } => {
                // An unsigned integer out of range says which end it missed.
                let takes: Cow<str> = match (takes.unwrap_or(Takes::Own), *whole) {
                    (Takes::Unsigned(_), Some(n)) if n < 0.0 => {
                        "a whole number of 0 or more".into()
                    }
                    // The first value past `max`, as an f64 (u64::MAX itself rounds up to it).
                    (Takes::Unsigned(max), Some(n)) if n >= max as f64 + 1.0 => {
                        format!("a whole number of at most {max}").into()
                    }
                    (Takes::Unsigned(_) | Takes::Integer, _) => "a whole number".into(),
                    (Takes::Number, _) => "a number".into(),
                    (Takes::Bool, _) => "true or false".into(),
                    (Takes::Array, _) => "an array".into(),
                    (Takes::Object, _) => "a JSON object".into(),
                    (Takes::Own, _) => expected.into(),
                };
                format!("{subject} must be {takes}, not {got}")
            }
            Kind::Length(expected) => format!("{subject} must be {expected}"),
            Kind::Custom(message) => format!("{subject}: {message}"),
        }
    }
}

impl de::Error for Kind {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Kind::Custom(message.to_string())
    }

    fn invalid_type(got: Unexpected, expected: &dyn Expected) -> Self {
        Kind::mismatch(got, expected)
    }

    fn invalid_value(got: Unexpected, expected: &dyn Expected) -> Self {
        Kind::mismatch(got, expected)
    }

    fn invalid_length(_: usize, expected: &dyn Expected) -> Self {
        Kind::Length(expected.to_string())
    }

    fn unknown_variant(variant: &str, variants: &'static [&'static str]) -> Self {
        Kind::Variant(variant.to_owned(), variants)
    }

    fn unknown_field(field: &str, fields: &'static [&'static str]) -> Self {
        Kind::Unknown(field.to_owned(), fields)
    }

    fn missing_field(field: &'static str) -> Self {
        Kind::Missing(field)
    }

    fn duplicate_field(field: &'static str) -> Self {
        Kind::Twice(field)
    }
}

impl std::error::Error for Kind {}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.said(None, "the value"))
    }
}

/// Reads an optional RFC 3339 time (`null` or absent: none), for
/// `#[serde(default, deserialize_with = "...")]`.
pub fn optional_rfc3339<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Timestamp>, D::Error> {
    deserializer.deserialize_option(OptionalTime)
}

struct OptionalTime;

impl<'de> Visitor<'de> for OptionalTime {
    type Value = Option<Timestamp>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(RFC3339_EXPECTED)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        match parse_rfc3339(text) {
            Ok(at) => Ok(Some(at)),
            Err(TimeError::NotRfc3339) => Err(E::invalid_value(Unexpected::Str(text), &self)),
            Err(refused @ (TimeError::LeapSecond | TimeError::OutOfRange)) => {
                Err(E::custom(refused))
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
            let [json, field, said] = line.split(" | ").map(str::trim).collect::<Vec<_>>()[..]
            else {
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
}
