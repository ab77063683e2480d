//! A JSON Schema (draft 2020-12) of each event's `detail`, derived from its type, for
//! consumers to validate against (`docs/events/*.schema.json`).

use serde_json::{Value, json};

use super::DomainEvent;

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
    DomainEvent::detail_schemas()
        .into_iter()
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
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/events");
        for schema in schemas() {
            let path = format!("{folder}/{}", schema.file_name());
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == schema.json,
                "{path} differs from what the code generates: run `make openapi` and commit it"
            );
        }
    }

    /// One event of each kind, as the stream reader makes them.
    fn one_of_each() -> Vec<DomainEvent> {
        use crate::draw::WinnersRecord;
        use crate::events::Award;
        use crate::ids::{DrawId, ExternalRef, SeriesId, SourceId};
        use crate::instant::{InstantAward, InstantWin};
        use crate::order::{self, Move, Order, OrderData, Reason};
        use crate::purchase;
        use crate::series::{AuthorisedRange, RangeLow};
        use crate::winners::PickRecord;

        let draw = DrawId::parse("d").unwrap();
        let series = SeriesId::parse("S").unwrap();
        let reason = Reason::parse("refund").unwrap();
        let mut purchase = crate::events::tests::purchase("d", "p");
        purchase.void = Some(purchase::Void {
            reason: "refund".into(),
            at: jiff::Timestamp::now(),
            after_freeze: Some(true),
        });
        let order = Order {
            order_number: "S26000001".into(),
            series: series.clone(),
            source: SourceId::parse("erp").unwrap(),
            external_ref: ExternalRef::parse("PO-1").unwrap(),
            data: OrderData::parse(None).unwrap(),
            fingerprint: "f".into(),
            period: "2026".into(),
            counter: 1,
            created_at: jiff::Timestamp::now(),
            hash: None,
            void: Some(order::Void {
                reason: reason.clone(),
                at: jiff::Timestamp::now(),
            }),
            corrects: None,
            credit_notes: Vec::new(),
        };
        let winners = WinnersRecord {
            prizes: 1,
            beacon: None,
            eligible_count: 1,
            eligible_digest: "00".into(),
            picks: 1,
            drawn_at: jiff::Timestamp::now(),
        };
        let award = Award {
            pick: PickRecord {
                pick: 0,
                prize: 1,
                ticket: 7,
            },
            payment_id: purchase.payment_id.clone(),
            payer_id: None,
            redraw_reason: None,
            at: jiff::Timestamp::now(),
        };
        let moved = Move {
            series: series.clone(),
            from: 2,
            to: 5,
            reason,
            at: jiff::Timestamp::now(),
            hash: None,
        };
        let low = RangeLow {
            series,
            range: AuthorisedRange::new(1, 100, "CAF-1", None).unwrap(),
            percent: 90,
            threshold: 90,
            at: jiff::Timestamp::now(),
        };
        let instant = InstantAward {
            payment_id: purchase.payment_id.clone(),
            payer_id: None,
            wins: vec![InstantWin {
                ticket: 7,
                prize: "voucher".into(),
            }],
            awarded_at: jiff::Timestamp::now(),
            voided: false,
        };
        let mut events = vec![
            DomainEvent::purchase_created(&purchase),
            DomainEvent::purchase_voided(&purchase).unwrap(),
            DomainEvent::draw_closed(&draw, jiff::Timestamp::now()),
            DomainEvent::winners_drawn(&draw, &winners),
            DomainEvent::prize_awarded(&draw, &award),
            DomainEvent::order_created(&order),
            DomainEvent::order_voided(&order).unwrap(),
            DomainEvent::counter_moved("2026", &moved),
            DomainEvent::range_running_low(&low),
        ];
        events.extend(DomainEvent::instant_wins_awarded(&draw, &instant));
        events
    }

    #[test]
    fn each_kind_of_event_is_described_by_the_schema_titled_with_its_detail_type() {
        let schemas = schemas();
        let events = one_of_each();
        let mut kinds: Vec<_> = events.iter().map(DomainEvent::detail_type).collect();
        kinds.sort_unstable();
        let mut declared = DomainEvent::DETAIL_TYPES.to_vec();
        declared.sort_unstable();
        assert_eq!(kinds, declared, "one event of each kind, no more");
        for event in events {
            let title = event.detail_type();
            let schema = schemas
                .iter()
                .find(|s| serde_json::from_str::<Value>(&s.json).unwrap()["title"] == title)
                .unwrap_or_else(|| panic!("no schema is titled {title}"));
            let schema: Value = serde_json::from_str(&schema.json).unwrap();
            let detail: Value = serde_json::from_str(&event.detail()).unwrap();
            let properties = schema["properties"].as_object().unwrap();
            for member in detail.as_object().unwrap().keys() {
                assert!(properties.contains_key(member), "{title}: {member}");
            }
            for required in schema["required"].as_array().unwrap() {
                let required = required.as_str().unwrap();
                assert!(detail.get(required).is_some(), "{title}: {required}");
            }
        }
    }

    #[test]
    fn the_events_page_and_folder_list_every_kind_of_event_and_no_other() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let page = std::fs::read_to_string(format!("{root}/docs/events.md")).unwrap();
        let mut listed: Vec<String> = std::fs::read_dir(format!("{root}/docs/events"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        listed.sort_unstable();
        let mut expected: Vec<String> = schemas().iter().map(EventSchema::file_name).collect();
        expected.sort_unstable();
        assert_eq!(
            listed, expected,
            "docs/events/ holds one schema per kind of event"
        );
        for detail_type in DomainEvent::DETAIL_TYPES {
            assert!(
                page.contains(&format!("| `{detail_type}` |")),
                "docs/events.md's table does not describe `{detail_type}`"
            );
        }
    }

    #[test]
    fn each_schema_describes_its_fields() {
        for schema in schemas() {
            let value: Value = serde_json::from_str(&schema.json).unwrap();
            assert!(value["description"].is_string(), "{}", schema.detail_type);
            for (name, field) in value["properties"].as_object().unwrap() {
                assert!(field["description"].is_string(), "{name}");
            }
        }
        assert_eq!(schemas()[0].file_name(), "purchase-created.schema.json");
    }
}
