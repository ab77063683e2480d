//! Clients' JSON, read with errors in the API's words: serde says `expected u32 at line 1
//! column 43` or `expected struct PurchaseBody`; a client needs the field, what it takes
//! and what it was sent instead (`` `quantity` must be a whole number of at most
//! 4294967295, not 4294967296 ``). Times are read as RFC 3339 with an error that says so.

use std::borrow::Cow;
use std::fmt;

use jiff::Timestamp;

use serde::de::{self, DeserializeOwned, Deserializer, Unexpected, Visitor};
use serde_json::error::Category;
use tally_domain::time::{TimeError, parse_rfc3339};

/// What a time field takes, as every error about one says it.
pub const RFC3339_EXPECTED: &str = "a date and time in RFC 3339, such as 2026-12-24T18:00:00Z";

/// Reads a JSON object into `T`; why it does not fit is explained, `whole` naming the
/// object ("the order"). Serde would also fill a struct from an array, by position: an
/// array is refused.
pub fn read_object<T: DeserializeOwned>(text: &str, whole: &str) -> Result<T, String> {
    if !text.trim_start().starts_with('{') {
        return Err(format!("{whole} must be a JSON object"));
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|err| explain(err.inner(), &err.path().to_string(), whole))?;
    deserializer
        .end()
        .map_err(|err| explain(&err, ".", whole))?;
    Ok(value)
}

/// Why a JSON value did not fit its type. `path` is where (serde_path_to_error's form:
/// `quantity`, `orders[3].data`, `.` for the value itself); `whole` names the value itself
/// ("the body", "the order").
pub fn explain(err: &serde_json::Error, path: &str, whole: &str) -> String {
    let message = without_position(err);
    if err.classify() != Category::Data {
        return format!(
            "{whole} is not valid JSON: {message} at line {} column {}",
            err.line(),
            err.column()
        );
    }
    let subject = match path {
        "" | "." | "?" => whole.to_owned(),
        field => format!("`{field}`"),
    };
    let within = |field: &str| match path {
        "" | "." | "?" => field.to_owned(),
        outer => format!("{field} in `{outer}`"),
    };
    if let Some(field) = message.strip_prefix("missing field ") {
        return format!("{} is required", within(field));
    }
    if let Some(field) = message.strip_prefix("duplicate field ") {
        return format!("{} is given twice", within(field));
    }
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let (field, allowed) = rest.split_once(", ").unwrap_or((rest, ""));
        return match allowed.strip_prefix("expected ") {
            Some(fields) => format!(
                "{field} is not a field here; the fields are {}",
                fields
                    .trim_start_matches("one of ")
                    .replace("` or `", "`, `")
            ),
            None => format!("{field} is not a field here"),
        };
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let (variant, allowed) = rest.split_once(", expected ").unwrap_or((rest, ""));
        return format!(
            "{subject} must be {}, not {variant}",
            allowed.trim_start_matches("one of ")
        );
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        let expected = rest.split_once(", expected ").map_or(rest, |(_, e)| e);
        return format!("{subject} must be {}", in_words(expected));
    }
    let mismatch = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))
        .and_then(|rest| rest.rsplit_once(", expected "));
    match mismatch {
        Some((got, expected)) => format!(
            "{subject} must be {}, not {}",
            expected_for(expected, got),
            sent(got)
        ),
        // A type's own message (an id's rules, say): it names what it wants.
        None => format!("{subject}: {message}"),
    }
}

/// The message without serde_json's ` at line L column C`.
fn without_position(err: &serde_json::Error) -> String {
    let message = err.to_string();
    let position = format!(" at line {} column {}", err.line(), err.column());
    match message.strip_suffix(&position) {
        Some(bare) => bare.to_owned(),
        None => message,
    }
}

/// The largest value of each unsigned integer type serde names.
fn unsigned_max(expected: &str) -> Option<u64> {
    Some(match expected {
        "u8" => u8::MAX.into(),
        "u16" => u16::MAX.into(),
        "u32" => u32::MAX.into(),
        "u64" | "usize" => u64::MAX,
        _ => return None,
    })
}

/// What was expected, said with what was sent in mind: an unsigned integer out of range
/// says which end it missed.
fn expected_for(expected: &str, got: &str) -> Cow<'static, str> {
    let Some(max) = unsigned_max(expected) else {
        return in_words(expected);
    };
    let number = got
        .strip_prefix("integer `")
        .or_else(|| got.strip_prefix("floating point `"))
        .and_then(|rest| rest.strip_suffix('`'))
        .and_then(|n| n.parse::<f64>().ok())
        .filter(|n| n.fract() == 0.0);
    match number {
        Some(n) if n < 0.0 => "a whole number of 0 or more".into(),
        // The first value out of range, as an f64 (u64::MAX itself rounds up to it).
        Some(n) if n >= max as f64 + 1.0 => format!("a whole number of at most {max}").into(),
        _ => "a whole number".into(),
    }
}

/// What serde says a type takes, as the API says it.
fn in_words(expected: &str) -> Cow<'static, str> {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize" => {
            "a whole number".into()
        }
        "f32" | "f64" => "a number".into(),
        "a string" | "a borrowed string" => "a string".into(),
        "a boolean" => "true or false".into(),
        "a sequence" => "an array".into(),
        "a map" | "a JSON object" => "a JSON object".into(),
        other if other.starts_with("struct ") => "a JSON object".into(),
        other => other.to_owned().into(),
    }
}

/// What was sent, as JSON says it.
fn sent(got: &str) -> Cow<'_, str> {
    for kind in ["integer `", "floating point `", "boolean `"] {
        if let Some(value) = got.strip_prefix(kind).and_then(|v| v.strip_suffix('`')) {
            return value.into();
        }
    }
    match got {
        "sequence" => "an array".into(),
        "map" => "an object".into(),
        "unit value" => "null".into(),
        other => other.strip_prefix("string ").unwrap_or(other).into(),
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
        let mut deserializer = serde_json::Deserializer::from_str(json);
        let err = serde_path_to_error::deserialize::<_, Body>(&mut deserializer).unwrap_err();
        let path = err.path().to_string();
        explain(err.inner(), &path, "the body")
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
