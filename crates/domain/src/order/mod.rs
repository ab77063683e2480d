//! Orders, their free-form data, and their idempotency by (source, external reference).

use jiff::Timestamp;
use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use super::hex;
use super::ids::{ExternalRef, SeriesId, SourceId};
use super::text::{FREE_TEXT_RULE, excerpt, refused_in_text};

/// The largest `data` object, as sent.
pub const MAX_DATA_BYTES: usize = 16 * 1024;
/// The deepest nesting of arrays and objects in `data`, the outer object included: as deep
/// as DynamoDB lets documents nest, and far from what the canonical form's recursion
/// could do to a thread's stack (16 KiB of brackets would be about 8,000 levels).
pub const MAX_DATA_DEPTH: usize = 32;
/// The most orders in one batch.
pub const MAX_BATCH: usize = 1_000;
/// The most credit notes one invoice takes: its number item lists them, and each credit
/// note writes that item again.
pub const MAX_CREDIT_NOTES: usize = 100;

/// Why one order's data was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderDataError {
    #[error("`data` must be a JSON object, not {0}")]
    NotAnObject(NotAnObject),
    #[error("`data` is larger than {MAX_DATA_BYTES} bytes")]
    TooLarge,
    #[error("`data` nests arrays and objects deeper than {MAX_DATA_DEPTH} levels")]
    TooDeep,
    /// The key, as an excerpt.
    #[error("`data` holds the key {0:?} twice")]
    DuplicateKey(String),
    #[error("`data` is not valid JSON: {0}")]
    Malformed(String),
}

/// What `data` was instead of an object, to say what to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAnObject {
    /// `[]`: what PHP's `json_encode` makes of an empty array.
    EmptyArray,
    Array,
    /// A string, number or boolean.
    Scalar,
}

impl std::fmt::Display for NotAnObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::EmptyArray => {
                "`[]`, an empty array (PHP's json_encode writes an empty array so): send `{}` (in PHP `new \\stdClass()`, or the flag JSON_FORCE_OBJECT), or leave `data` out"
            }
            Self::Array => "an array: put it under a key of an object, such as {\"lines\": [...]}",
            Self::Scalar => "a string, number or boolean: put it under a key of an object",
        })
    }
}

/// An order's free-form data: a JSON object kept exactly as it was sent (big numbers,
/// `1.0` and `1` stay as written), and its canonical form, which decides whether two posts
/// carry the same data: keys sorted, no whitespace, strings re-escaped, numbers and
/// literals as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderData {
    raw: String,
    canonical: String,
}

impl OrderData {
    /// No data: `{}`.
    pub fn empty() -> Self {
        Self {
            raw: "{}".to_owned(),
            canonical: "{}".to_owned(),
        }
    }

    /// Checks the JSON text of `data`: an object of at most [`MAX_DATA_BYTES`] and
    /// [`MAX_DATA_DEPTH`] levels, each key once. Absent data is empty.
    pub fn parse(raw: Option<&str>) -> Result<Self, OrderDataError> {
        let Some(raw) = raw else {
            return Ok(Self::empty());
        };
        let trimmed = raw.trim();
        if !trimmed.starts_with('{') {
            let sent = if !trimmed.starts_with('[') {
                NotAnObject::Scalar
            } else if trimmed[1..].trim_start().starts_with(']') {
                NotAnObject::EmptyArray
            } else {
                NotAnObject::Array
            };
            return Err(OrderDataError::NotAnObject(sent));
        }
        if trimmed.len() > MAX_DATA_BYTES {
            return Err(OrderDataError::TooLarge);
        }
        if nesting_depth(trimmed) > MAX_DATA_DEPTH {
            return Err(OrderDataError::TooDeep);
        }
        Ok(Self {
            canonical: canonical(trimmed)?,
            raw: trimmed.to_owned(),
        })
    }

    /// The data as it was sent.
    pub fn as_raw(&self) -> &str {
        &self.raw
    }

    /// The canonical form: equal for equal data, whatever the key order or whitespace.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// The data as a JSON value that serialises exactly as it was sent.
    pub fn to_raw_value(&self) -> Box<RawValue> {
        RawValue::from_string(self.raw.clone()).expect("checked JSON")
    }
}

/// The entries of one JSON object in document order, duplicates kept, values unparsed.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

/// How deeply arrays and objects nest in JSON text, counted without recursion: brackets
/// outside strings open and close levels. Malformed text gets some count and is refused
/// by the parser afterwards.
fn nesting_depth(raw: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0);
    let (mut in_string, mut escaped) = (false, false);
    for byte in raw.bytes() {
        match (in_string, byte) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The canonical text of one JSON value. Recursive: [`OrderData::parse`] bounds the depth
/// first.
fn canonical(raw: &str) -> Result<String, OrderDataError> {
    let malformed = |e: serde_json::Error| OrderDataError::Malformed(e.to_string());
    let raw = raw.trim();
    match raw.as_bytes().first() {
        Some(b'{') => {
            let Entries(mut entries) = serde_json::from_str(raw).map_err(malformed)?;
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            if let Some(pair) = entries.windows(2).find(|pair| pair[0].0 == pair[1].0) {
                return Err(OrderDataError::DuplicateKey(
                    excerpt(&pair[0].0).into_owned(),
                ));
            }
            let members = entries
                .iter()
                .map(|(key, value)| {
                    let key = serde_json::to_string(key).expect("a string serialises");
                    Ok(format!("{key}:{}", canonical(value.get())?))
                })
                .collect::<Result<Vec<_>, OrderDataError>>()?;
            Ok(format!("{{{}}}", members.join(",")))
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(raw).map_err(malformed)?;
            let items = items
                .iter()
                .map(|item| canonical(item.get()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(format!("[{}]", items.join(",")))
        }
        Some(b'"') => {
            let text: String = serde_json::from_str(raw).map_err(malformed)?;
            Ok(serde_json::to_string(&text).expect("a string serialises"))
        }
        // Numbers, true, false and null: as written (already checked by the parser).
        _ => {
            serde_json::from_str::<&RawValue>(raw).map_err(malformed)?;
            Ok(raw.to_owned())
        }
    }
}

/// The longest order number a client may name, in characters.
pub const MAX_NUMBER_TEXT: usize = 256;

/// Whether `text` can be an order number: 1 to [`MAX_NUMBER_TEXT`] letters, digits, `-`,
/// `_`, `/` and `.` (what formats render).
pub fn is_number_text(text: &str) -> bool {
    (1..=MAX_NUMBER_TEXT).contains(&text.len())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'))
}

/// One order to number.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder {
    pub external_ref: ExternalRef,
    pub data: OrderData,
    /// A credit note: the number of the invoice it corrects, in the series it credits.
    pub corrects: Option<String>,
}

impl NewOrder {
    /// What makes a repost "the same order": the series, the canonical data and, for a
    /// credit note, the invoice it corrects.
    pub fn fingerprint(&self, series: &SeriesId) -> String {
        let mut hasher = Sha256::new();
        hasher.update(series.as_str());
        hasher.update([0]);
        hasher.update(self.data.canonical());
        if let Some(invoice) = &self.corrects {
            hasher.update([0]);
            hasher.update(invoice);
        }
        hex::encode(&hasher.finalize())
    }
}

/// A numbered order.
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub order_number: String,
    pub series: SeriesId,
    pub source: SourceId,
    pub external_ref: ExternalRef,
    pub data: OrderData,
    pub fingerprint: String,
    pub period: String,
    pub counter: u64,
    pub created_at: Timestamp,
    /// Its link in the period's hash chain (gapless series), hex-encoded.
    pub hash: Option<String>,
    pub void: Option<Void>,
    /// A credit note: the number of the invoice it corrects.
    pub corrects: Option<String>,
    /// An invoice: the numbers of the credit notes that correct it, oldest first.
    pub credit_notes: Vec<String>,
}

/// Why something was done, as its author wrote it: 1 to 200 characters, none that free
/// text refuses ([`refused_in_text`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason(String);

/// The longest reason, in characters.
pub const MAX_REASON_CHARS: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`reason` must be 1 to {MAX_REASON_CHARS} characters {FREE_TEXT_RULE}")]
pub struct InvalidReason;

impl Reason {
    pub fn parse(text: &str) -> Result<Self, InvalidReason> {
        let count = text.chars().count();
        if count == 0 || count > MAX_REASON_CHARS || refused_in_text(text).is_some() {
            return Err(InvalidReason);
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A voided order keeps its number; this says why and when it was voided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Void {
    pub reason: Reason,
    pub at: Timestamp,
}

/// A declared move of a period's counter: the numbers `from..=to` are skipped, for
/// `reason`. In a gapless series it is a link of the hash chain, like an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    pub series: SeriesId,
    pub from: u64,
    pub to: u64,
    pub reason: Reason,
    pub at: Timestamp,
    pub hash: Option<String>,
}

#[cfg(test)]
mod tests;
