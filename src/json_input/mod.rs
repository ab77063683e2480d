//! Clients' JSON, read with errors in the API's words: serde says `expected u32 at line 1
//! column 43` or `expected struct PurchaseBody`; a client needs the field, what it takes
//! and what it was sent instead (`` `quantity` must be a whole number of at most
//! 4294967295, not 4294967296 ``). serde reports each misfit as data (the constructors of
//! `de::Error`), which [`facts`] keeps as a [`Kind`] where serde_json would make it a
//! sentence; serde_path_to_error says where. Times are read as RFC 3339 with an error that
//! says so. A string, field or variant sent is shown back as an excerpt
//! ([`tally_domain::text::excerpt`]): an error never grows with what was sent.

mod facts;

use std::borrow::Cow;
use std::fmt;

use jiff::Timestamp;
use serde::de::{self, DeserializeOwned, Deserializer, Expected, Unexpected, Visitor};
use serde_path_to_error::{Error, Segment, Track};
use tally_domain::text::excerpt;
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
        let at = (path.iter().len() > 0).then(|| location(path));
        self.0.inner().said(at.as_deref(), whole)
    }
}

/// A path as serde_path_to_error writes it (`orders[2].data`), each key of a map an
/// excerpt: a key is what the client sent.
fn location(path: &serde_path_to_error::Path) -> String {
    let mut at = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => at.push_str(&format!("[{index}]")),
            Segment::Map { key } => push_named(&mut at, &excerpt(key)),
            Segment::Enum { variant } => push_named(&mut at, variant),
            Segment::Unknown => push_named(&mut at, "?"),
        }
    }
    at
}

fn push_named(at: &mut String, name: &str) {
    if !at.is_empty() {
        at.push('.');
    }
    at.push_str(name);
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
            Unexpected::Str(text) => (serde_json::Value::from(excerpt(text)).to_string(), None),
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
            Kind::Unknown(field, []) => format!("`{}` is not a field here", excerpt(field)),
            Kind::Unknown(field, fields) => format!(
                "`{}` is not a field here; the fields are `{}`",
                excerpt(field),
                fields.join("`, `")
            ),
            Kind::Variant(variant, variants) => {
                let one_of = match variants {
                    [one] => format!("`{one}`"),
                    [one, two] => format!("`{one}` or `{two}`"),
                    many => format!("one of `{}`", many.join("`, `")),
                };
                format!("{subject} must be {one_of}, not `{}`", excerpt(variant))
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

/// Reads a JSON object's entries in order, refusing a key given twice (a map would keep
/// the last), for `#[serde(deserialize_with = "...")]`.
pub fn unique_entries<'de, D, V>(deserializer: D) -> Result<Vec<(String, V)>, D::Error>
where
    D: Deserializer<'de>,
    V: de::Deserialize<'de>,
{
    deserializer.deserialize_map(UniqueEntries(std::marker::PhantomData))
}

struct UniqueEntries<V>(std::marker::PhantomData<V>);

impl<'de, V: de::Deserialize<'de>> Visitor<'de> for UniqueEntries<V> {
    type Value = Vec<(String, V)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries: Vec<(String, V)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        while let Some((key, value)) = map.next_entry::<String, V>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!(
                    "{} is given twice",
                    serde_json::Value::from(excerpt(&key))
                )));
            }
            entries.push((key, value));
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests;
