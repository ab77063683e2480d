//! A JSON Schema (draft 2020-12) of each event's `detail`, derived from its type, for
//! consumers to validate against (`docs/events/*.schema.json`).

use serde_json::{Value, json};
use utoipa::PartialSchema;

use super::DomainEvent;
use super::facts::{
    CounterMoved, DrawClosed, InstantWinAwarded, OrderCreated, OrderVoided, PrizeAwarded,
    PurchaseCreated, PurchaseVoided, RangeRunningLow, WinnersDrawn,
};

/// The JSON Schema of one kind of event.
pub struct EventSchema {
    /// The EventBridge `detail-type`, which is also the schema's `title`.
    pub detail_type: &'static str,
    /// The schema as pretty JSON text, ending with a newline.
    pub json: String,
}

impl EventSchema {
    /// `purchase-created.schema.json` for `Purchase Created`.
    pub fn file_name(&self) -> String {
        format!(
            "{}.schema.json",
            self.detail_type.to_ascii_lowercase().replace(' ', "-")
        )
    }
}

/// Every kind of event, in the order of [`DomainEvent::DETAIL_TYPES`].
pub fn schemas() -> Vec<EventSchema> {
    let details = [
        PurchaseCreated::schema(),
        PurchaseVoided::schema(),
        DrawClosed::schema(),
        WinnersDrawn::schema(),
        PrizeAwarded::schema(),
        OrderCreated::schema(),
        OrderVoided::schema(),
        CounterMoved::schema(),
        RangeRunningLow::schema(),
        InstantWinAwarded::schema(),
    ];
    DomainEvent::DETAIL_TYPES
        .into_iter()
        .zip(details)
        .map(|(detail_type, detail)| {
            let mut schema = serde_json::to_value(detail).expect("a schema serialises");
            if let Value::Object(members) = &mut schema {
                members.insert(
                    "$schema".into(),
                    json!("https://json-schema.org/draft/2020-12/schema"),
                );
                members.insert("title".into(), json!(detail_type));
            }
            let mut json = serde_json::to_string_pretty(&schema).expect("a schema serialises");
            json.push('\n');
            EventSchema { detail_type, json }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_schemas_are_the_ones_the_code_generates() {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/events");
        for schema in schemas() {
            let path = format!("{folder}/{}", schema.file_name());
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == schema.json,
                "{path} differs from what the code generates: run `make openapi` and commit it"
            );
        }
    }

    #[test]
    fn each_schema_is_titled_with_its_detail_type_and_describes_its_fields() {
        let all = schemas();
        assert_eq!(all.len(), DomainEvent::DETAIL_TYPES.len());
        for schema in all {
            let value: Value = serde_json::from_str(&schema.json).unwrap();
            assert_eq!(value["title"], schema.detail_type);
            assert!(value["description"].is_string(), "{}", schema.detail_type);
            for (name, field) in value["properties"].as_object().unwrap() {
                assert!(field["description"].is_string(), "{name}");
            }
        }
        let first = &schemas()[0];
        assert_eq!(first.file_name(), "purchase-created.schema.json");
    }
}
