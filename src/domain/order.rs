//! Orders and their idempotency by (source, external reference).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::ids::{ExternalRef, SeriesId, SourceId};
use super::purchase::hex;

/// The largest `data` object, serialised.
pub const MAX_DATA_BYTES: usize = 16 * 1024;
/// The most orders in one batch.
pub const MAX_BATCH: usize = 1_000;

/// Why one order of a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderDataError {
    #[error("`data` must be a JSON object")]
    NotAnObject,
    #[error("`data` is larger than {MAX_DATA_BYTES} bytes")]
    TooLarge,
}

/// Checks an order's free-form data: a JSON object of at most [`MAX_DATA_BYTES`].
pub fn order_data(value: Option<Value>) -> Result<Map<String, Value>, OrderDataError> {
    match value {
        None => Ok(Map::new()),
        Some(Value::Object(map)) => {
            if Value::Object(map.clone()).to_string().len() > MAX_DATA_BYTES {
                Err(OrderDataError::TooLarge)
            } else {
                Ok(map)
            }
        }
        Some(_) => Err(OrderDataError::NotAnObject),
    }
}

/// One order to number.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOrder {
    pub external_ref: ExternalRef,
    pub data: Map<String, Value>,
}

impl NewOrder {
    /// What makes a repost "the same order": the series and the data (key order aside).
    pub fn fingerprint(&self, series: &SeriesId) -> String {
        let mut hasher = Sha256::new();
        hasher.update(series.as_str());
        hasher.update([0]);
        // serde_json keeps object keys sorted, so equal objects serialise equally.
        hasher.update(Value::Object(self.data.clone()).to_string());
        hex(&hasher.finalize())
    }
}

/// A numbered order.
#[derive(Debug, Clone, PartialEq)]
pub struct Order {
    pub order_number: String,
    pub series: SeriesId,
    pub source: SourceId,
    pub external_ref: ExternalRef,
    pub data: Map<String, Value>,
    pub fingerprint: String,
    pub period: String,
    pub counter: u64,
    pub created_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn data_must_be_a_bounded_object() {
        assert_eq!(order_data(None), Ok(Map::new()));
        assert!(order_data(Some(json!({"a": 1}))).is_ok());
        assert_eq!(
            order_data(Some(json!([1]))),
            Err(OrderDataError::NotAnObject)
        );
        let big = json!({"x": "y".repeat(MAX_DATA_BYTES)});
        assert_eq!(order_data(Some(big)), Err(OrderDataError::TooLarge));
    }

    #[test]
    fn fingerprint_ignores_key_order_but_not_values_or_series() {
        let order = |data: Value| NewOrder {
            external_ref: ExternalRef::parse("r").unwrap(),
            data: order_data(Some(data)).unwrap(),
        };
        let s = SeriesId::parse("S").unwrap();
        let t = SeriesId::parse("T").unwrap();
        let a: Value = serde_json::from_str(r#"{"a":1,"b":2}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"b":2,"a":1}"#).unwrap();
        assert_eq!(order(a.clone()).fingerprint(&s), order(b).fingerprint(&s));
        assert_ne!(
            order(a.clone()).fingerprint(&s),
            order(json!({"a": 2, "b": 2})).fingerprint(&s)
        );
        assert_ne!(order(a.clone()).fingerprint(&s), order(a).fingerprint(&t));
    }
}
