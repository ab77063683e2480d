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
use serde_path_to_error::Segment;
use tally_domain::time::{TimeError, parse_rfc3339};

use facts::{Facts, Slot};

/// What a time field takes, as every error about one says it.
pub const RFC3339_EXPECTED: &str = "a date and time in RFC 3339, such as 2026-12-24T18:00:00Z";

/// Reads JSON text into `T`, or says where and why it does not fit.
pub fn read<T: DeserializeOwned>(text: &[u8]) -> Result<T, Misfit> {
    let slot = Slot::default();
    let mut json = serde_json::Deserializer::from_slice(text);
    let value = serde_path_to_error::deserialize(Facts::new(&mut json, &slot)).map_err(Misfit)?;
    // Trailing characters after the value.
    json.end().map_err(|err| {
        let root = serde_path_to_error::Track::new().path();
        Misfit(serde_path_to_error::Error::new(
            root,
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
pub struct Misfit(serde_path_to_error::Error<Kind>);

impl Misfit {
    /// Whether the text is no JSON at all.
    pub fn is_syntax(&self) -> bool {
        matches!(self.0.inner(), Kind::Syntax(_))
    }

    /// The top-level field whose value does not fit; none when the whole does not (a
    /// field missing or unknown there), or the text is no JSON.
    pub fn field(&self) -> Option<&str> {
        match (self.0.inner(), self.0.path().iter().next()) {
            (Kind::Syntax(_) | Kind::Unknown { .. }, _) => None,
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
    Unknown {
        field: String,
        fields: &'static [&'static str],
    },
    Variant {
        variant: String,
        variants: &'static [&'static str],
    },
    /// A value of the wrong type or out of range: what came, what the type said it
    /// expected and, once known, what the hint it was read with takes.
    Mismatch {
        got: Sent,
        expected: String,
        takes: Option<Takes>,
    },
    Length {
        expected: String,
    },
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

/// What was sent instead.
#[derive(Debug)]
pub enum Sent {
    Integer(i128),
    Float(f64),
    /// As JSON writes it, or in words (an array).
    Said(String),
}

impl Kind {
    /// A mismatch learns what the hint it was read with takes.
    fn taking(self, hint: Option<Takes>) -> Self {
        match self {
            Kind::Mismatch {
                got,
                expected,
                takes: None,
            } => Kind::Mismatch {
                got,
                expected,
                takes: hint,
            },
            other => other,
        }
    }

    /// Why, with `at` the path of the value (none: the value itself, named `whole`).
    fn said(&self, at: Option<&str>, whole: &str) -> String {
        let subject = at.map_or_else(|| whole.to_owned(), |at| format!("`{at}`"));
        let within = |field: &str| match at {
            None => format!("`{field}`"),
            Some(at) => format!("`{field}` in `{at}`"),
        };
        match self {
            Kind::Syntax(message) => format!("{whole} is not valid JSON: {message}"),
            Kind::Missing(field) => format!("{} is required", within(field)),
            Kind::Twice(field) => format!("{} is given twice", within(field)),
            Kind::Unknown { field, fields: [] } => format!("`{field}` is not a field here"),
            Kind::Unknown { field, fields } => format!(
                "`{field}` is not a field here; the fields are `{}`",
                fields.join("`, `")
            ),
            Kind::Variant { variant, variants } => {
                format!("{subject} must be {}, not `{variant}`", one_of(variants))
            }
            Kind::Mismatch {
                got,
                expected,
                takes,
            } => format!(
                "{subject} must be {}, not {got}",
                in_words(takes.unwrap_or(Takes::Own), got, expected)
            ),
            Kind::Length { expected } => format!("{subject} must be {expected}"),
            Kind::Custom(message) => format!("{subject}: {message}"),
        }
    }
}

/// `a`, `a` or `b`, one of `a`, `b`, `c`.
fn one_of(variants: &[&str]) -> String {
    match variants {
        [] => "nothing".to_owned(),
        [one] => format!("`{one}`"),
        [one, two] => format!("`{one}` or `{two}`"),
        many => format!("one of `{}`", many.join("`, `")),
    }
}

/// What a value takes, said with what was sent in mind: an unsigned integer out of range
/// says which end it missed.
fn in_words<'a>(takes: Takes, got: &Sent, expected: &'a str) -> Cow<'a, str> {
    let whole = match *got {
        Sent::Integer(n) => Some(n),
        // Saturates: a float past every integer is past the largest.
        Sent::Float(n) if n.fract() == 0.0 => Some(n as i128),
        _ => None,
    };
    match takes {
        Takes::Unsigned(_) if whole.is_some_and(|n| n < 0) => "a whole number of 0 or more".into(),
        Takes::Unsigned(max) if whole.is_some_and(|n| n > max.into()) => {
            format!("a whole number of at most {max}").into()
        }
        Takes::Unsigned(_) | Takes::Integer => "a whole number".into(),
        Takes::Number => "a number".into(),
        Takes::Bool => "true or false".into(),
        Takes::Array => "an array".into(),
        Takes::Object => "a JSON object".into(),
        Takes::Own => expected.into(),
    }
}

impl From<Unexpected<'_>> for Sent {
    fn from(got: Unexpected<'_>) -> Self {
        match got {
            Unexpected::Unsigned(n) => Sent::Integer(n.into()),
            Unexpected::Signed(n) => Sent::Integer(n.into()),
            Unexpected::Float(n) => Sent::Float(n),
            Unexpected::Str(text) => Sent::Said(serde_json::Value::from(text).to_string()),
            Unexpected::Bool(b) => Sent::Said(b.to_string()),
            Unexpected::Unit => Sent::Said("null".to_owned()),
            Unexpected::Seq => Sent::Said("an array".to_owned()),
            Unexpected::Map => Sent::Said("an object".to_owned()),
            // Kinds JSON has not: serde's own words.
            other => Sent::Said(other.to_string()),
        }
    }
}

impl fmt::Display for Sent {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Sent::Integer(n) => write!(f, "{n}"),
            Sent::Float(n) => match serde_json::Number::from_f64(*n) {
                Some(number) => write!(f, "{number}"),
                None => write!(f, "{n}"),
            },
            Sent::Said(text) => f.write_str(text),
        }
    }
}

impl de::Error for Kind {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Kind::Custom(message.to_string())
    }

    fn invalid_type(got: Unexpected, expected: &dyn Expected) -> Self {
        Kind::Mismatch {
            got: got.into(),
            expected: expected.to_string(),
            takes: None,
        }
    }

    fn invalid_value(got: Unexpected, expected: &dyn Expected) -> Self {
        Self::invalid_type(got, expected)
    }

    fn invalid_length(_: usize, expected: &dyn Expected) -> Self {
        Kind::Length {
            expected: expected.to_string(),
        }
    }

    fn unknown_variant(variant: &str, variants: &'static [&'static str]) -> Self {
        Kind::Variant {
            variant: variant.to_owned(),
            variants,
        }
    }

    fn unknown_field(field: &str, fields: &'static [&'static str]) -> Self {
        Kind::Unknown {
            field: field.to_owned(),
            fields,
        }
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

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "the tests read the errors, never the values")]
    struct Body {
        quantity: u32,
        total: Option<u64>,
        name: Option<String>,
        flag: Option<bool>,
        #[serde(default, deserialize_with = "optional_rfc3339")]
        closes_at: Option<Timestamp>,
        numbers: Option<Vec<u32>>,
        reset: Option<Reset>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Reset {
        Never,
        Yearly,
    }

    fn said(json: &str) -> String {
        read::<Body>(json.as_bytes())
            .unwrap_err()
            .explain("the body")
    }

    fn says(cases: &[(&str, &str)]) {
        for (json, expected) in cases {
            assert_eq!(said(json), *expected, "{json}");
        }
    }

    #[test]
    fn a_number_out_of_range_says_which_end_it_missed() {
        says(&[
            (
                r#"{"quantity": 4294967296}"#,
                "`quantity` must be a whole number of at most 4294967295, not 4294967296",
            ),
            (
                r#"{"quantity": -1}"#,
                "`quantity` must be a whole number of 0 or more, not -1",
            ),
            (
                r#"{"quantity": 1, "total": 18446744073709551616}"#,
                "`total` must be a whole number of at most 18446744073709551615, not 1.8446744073709552e+19",
            ),
            (
                r#"{"quantity": 1.5}"#,
                "`quantity` must be a whole number, not 1.5",
            ),
        ]);
    }

    #[test]
    fn a_value_of_the_wrong_type_names_the_field_what_it_takes_and_what_came() {
        says(&[
            (
                r#"{"quantity": "3"}"#,
                "`quantity` must be a whole number, not \"3\"",
            ),
            (
                r#"{"quantity": null}"#,
                "`quantity` must be a whole number, not null",
            ),
            (
                r#"{"quantity": 1, "name": 5}"#,
                "`name` must be a string, not 5",
            ),
            (
                r#"{"quantity": 1, "flag": "yes"}"#,
                "`flag` must be true or false, not \"yes\"",
            ),
            (
                r#"{"quantity": 1, "numbers": {}}"#,
                "`numbers` must be an array, not an object",
            ),
            (
                r#"{"quantity": 1, "numbers": [1, "x"]}"#,
                "`numbers[1]` must be a whole number, not \"x\"",
            ),
            (
                r#"{"quantity": 1, "reset": "daily"}"#,
                "`reset` must be `never` or `yearly`, not `daily`",
            ),
        ]);
    }

    #[test]
    fn a_time_that_is_not_rfc_3339_says_so() {
        let expected = format!("`closes_at` must be {RFC3339_EXPECTED}, not \"tomorrow\"");
        assert_eq!(
            said(r#"{"quantity": 1, "closes_at": "tomorrow"}"#),
            expected
        );
        assert_eq!(
            said(r#"{"quantity": 1, "closes_at": 5}"#),
            format!("`closes_at` must be {RFC3339_EXPECTED}, not 5")
        );
        let read: Body = serde_json::from_str(
            r#"{"quantity": 1, "closes_at": "2030-02-01T00:00:00+01:00", "name": null}"#,
        )
        .unwrap();
        assert_eq!(
            tally_domain::time::rfc3339_millis(read.closes_at.unwrap()),
            "2030-01-31T23:00:00.000Z"
        );
        assert_eq!(
            said(r#"{"quantity": 1, "closes_at": "2099-06-30T23:59:60.5Z"}"#),
            format!("`closes_at`: {}", TimeError::LeapSecond)
        );
        assert_eq!(
            said(r#"{"quantity": 1, "closes_at": "9999-12-31T23:59:59Z"}"#),
            "`closes_at`: past 9999-12-30T22:00:00Z, the last time kept"
        );
        let none: Body = serde_json::from_str(r#"{"quantity": 1, "closes_at": null}"#).unwrap();
        assert!(none.closes_at.is_none());
    }

    #[test]
    fn an_object_is_read_and_an_array_refused_whatever_its_elements() {
        let read: Body = read_object(r#" {"quantity": 2}"#, "the order").unwrap();
        assert_eq!(read.quantity, 2);
        assert_eq!(
            read_object::<Body>(r#"[2, null, null, null, null, null, null]"#, "the order")
                .unwrap_err(),
            "the order must be a JSON object"
        );
        assert_eq!(
            read_object::<Body>(r#"{"quantity": 2} {}"#, "the order").unwrap_err(),
            "the order is not valid JSON: trailing characters at line 1 column 17"
        );
    }

    #[derive(Debug, Deserialize)]
    struct Passed {
        data: Box<serde_json::value::RawValue>,
        any: Option<serde_json::Value>,
        tier: Option<Tier>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Tier {
        Gold,
        Silver,
        Bronze,
    }

    #[test]
    fn raw_values_pass_through_and_deep_nesting_is_refused_or_kept_whole() {
        let passed: Passed =
            read(br#"{"data": {"b": 1, "a": [1.0]}, "any": [{"x": null}], "tier": "gold"}"#)
                .unwrap();
        assert_eq!(passed.data.get(), r#"{"b": 1, "a": [1.0]}"#);
        assert_eq!(passed.any, Some(serde_json::json!([{"x": null}])));
        assert!(matches!(passed.tier, Some(Tier::Gold)));
        // A raw value is kept whole however deep; a value read as a tree stops at
        // serde_json's depth, as no JSON; neither runs out of stack.
        let deep = format!("{}{}", "[".repeat(70_000), "]".repeat(70_000));
        let raw: Passed = read(format!(r#"{{"data": {deep}}}"#).as_bytes()).unwrap();
        assert_eq!(raw.data.get().len(), deep.len());
        let tree = read::<Passed>(format!(r#"{{"data": 1, "any": {deep}}}"#).as_bytes());
        assert!(tree.unwrap_err().is_syntax());
        let misfit = read::<Passed>(br#"{"data": 1, "tier": "iron"}"#).unwrap_err();
        assert_eq!(misfit.field(), Some("tier"));
        assert_eq!(
            misfit.explain("the body"),
            "`tier` must be one of `gold`, `silver`, `bronze`, not `iron`"
        );
    }

    #[test]
    fn missing_unknown_twice_given_and_malformed_say_what_to_change() {
        says(&[
            (r#"{"total": 1}"#, "`quantity` is required"),
            (
                r#"{"quantity": 1, "colour": 2}"#,
                "`colour` is not a field here; the fields are `quantity`, `total`, `name`, `flag`, `closes_at`, `numbers`, `reset`",
            ),
            (
                r#"{"quantity": 1, "quantity": 2}"#,
                "`quantity` is given twice",
            ),
            ("42", "the body must be a JSON object, not 42"),
            (
                r#"{"quantity": 1,"#,
                "the body is not valid JSON: EOF while parsing a value at line 1 column 15",
            ),
        ]);
    }
}
