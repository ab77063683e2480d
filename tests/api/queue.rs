//! The import function on the SQS event file: valid, duplicate, malformed and invalid
//! messages, against DynamoDB Local.

use std::time::Duration;

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use serde_json::json;
use tally::orders::OrderService;
use tally::queue::handle_delivery;
use tally_domain::ids::SeriesId;
use tally_domain::journal::Operator;
use tally_domain::series::{Reset, SeriesDefinition};

use crate::helpers::{attr_s, fresh_store, of_kind, scan, spawn_app};

fn event() -> SqsEvent {
    let path = format!("{}/events/sqs-import.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A delivery of one message per body, the message ids `m0`, `m1`, ...
pub(crate) fn delivery(bodies: &[String]) -> SqsEvent {
    let records = bodies
        .iter()
        .enumerate()
        .map(|(i, body)| {
            let mut message = SqsMessage::default();
            message.message_id = Some(format!("m{i}"));
            message.body = Some(body.clone());
            message
        })
        .collect();
    let mut event = SqsEvent::default();
    event.records = records;
    event
}

/// A minute to go, as a Lambda invocation has.
pub(crate) fn a_minute() -> Option<tokio::time::Instant> {
    Some(tokio::time::Instant::now() + Duration::from_secs(60))
}

/// The ids of the messages to deliver again, sorted.
fn failed(response: &aws_lambda_events::event::sqs::SqsBatchResponse) -> Vec<&str> {
    let mut ids: Vec<&str> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn only_retryable_messages_are_reported_and_redelivery_makes_no_new_numbers() {
    let (store, _table) = fresh_store(None).await;
    let orders = OrderService::new(store.clone());
    let definition = SeriesDefinition::new("UABC{yy}{seq:6}", Reset::Yearly, true, 1).unwrap();
    orders
        .define_series(
            &SeriesId::parse("UABC").unwrap(),
            definition,
            &Operator::local(),
        )
        .await
        .unwrap();

    let response = handle_delivery(&orders, event(), a_minute()).await;
    let failed: Vec<&str> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    // The unknown series may be defined later: retried, then dead-lettered. Malformed and
    // invalid messages are dropped; valid ones and the duplicate succeed.
    assert_eq!(failed, ["50d18fa7-unknown-series"]);

    let numbered = |items: &[crate::helpers::Item]| {
        let mut refs: Vec<String> = of_kind(items, "order_ref")
            .iter()
            .map(|o| format!("{}/{}", attr_s(o, "source"), attr_s(o, "external_ref")))
            .collect();
        refs.sort();
        refs
    };
    let items = scan(&store).await;
    assert_eq!(
        numbered(&items),
        ["erp-1/PO-9001", "warehouse/WH-1", "warehouse/WH-3"]
    );
    let mut counters: Vec<String> = of_kind(&items, "order")
        .iter()
        .map(|o| attr_s(o, "order_number")[6..].to_owned())
        .collect();
    counters.sort();
    assert_eq!(counters, ["000001", "000002", "000003"]);

    // SQS delivers the whole event again: nothing new is numbered.
    let again = handle_delivery(&orders, event(), a_minute()).await;
    assert_eq!(again.batch_item_failures.len(), 1);
    assert_eq!(of_kind(&scan(&store).await, "order").len(), 3);
}

/// A credit note whose invoice has not landed yet may pass later: its message is delivered
/// again, not deleted, and passes once the invoice is numbered. An order that can never
/// pass is still dropped.
#[tokio::test]
async fn a_credit_note_before_its_invoice_is_delivered_again_until_the_invoice_lands() {
    let app = spawn_app().await;
    let invoices = json!({"format": "F{seq:5}", "reset": "never"});
    app.define_series("INV", &invoices).await;
    let notes = json!({"format": "NC{seq:5}", "reset": "never", "credits": "INV"});
    app.define_series("NC", &notes).await;
    let orders = OrderService::new(app.store.clone());
    let note = json!({"series": "NC", "source": "erp", "external_ref": "c1", "corrects": "F00001"});
    let invalid = json!({"series": "INV", "source": "erp", "external_ref": "bad ref"});
    let first = handle_delivery(
        &orders,
        delivery(&[note.to_string(), invalid.to_string()]),
        a_minute(),
    )
    .await;
    assert_eq!(failed(&first), ["m0"]);
    let invoice = json!({"series": "INV", "source": "erp", "external_ref": "i1"});
    let landed = handle_delivery(&orders, delivery(&[invoice.to_string()]), a_minute()).await;
    assert!(failed(&landed).is_empty());
    let again = handle_delivery(&orders, delivery(&[note.to_string()]), a_minute()).await;
    assert!(failed(&again).is_empty());
    let items = scan(&app.store).await;
    let mut numbers: Vec<&str> = of_kind(&items, "order")
        .iter()
        .map(|o| attr_s(o, "order_number"))
        .collect();
    numbers.sort();
    assert_eq!(numbers, ["F00001", "NC00001"]);
}

/// Messages the invocation has no time left for are reported to be delivered again, not
/// started: the answer itself must reach Lambda before the function is stopped.
#[tokio::test]
async fn messages_past_the_invocations_time_are_delivered_again_unstarted() {
    let app = spawn_app().await;
    app.define_series("T", &json!({"format": "T{seq:3}", "reset": "never"}))
        .await;
    let orders = OrderService::new(app.store.clone());
    let bodies: Vec<_> = (0..3)
        .map(|i| {
            json!({"series": "T", "source": "erp", "external_ref": format!("r{i}")}).to_string()
        })
        .collect();
    // The invocation's end has come.
    let over = Some(tokio::time::Instant::now());
    let late = handle_delivery(&orders, delivery(&bodies), over).await;
    assert_eq!(failed(&late), ["m0", "m1", "m2"]);
    assert!(of_kind(&scan(&app.store).await, "order").is_empty());
    let in_time = handle_delivery(&orders, delivery(&bodies), a_minute()).await;
    assert!(failed(&in_time).is_empty());
    assert_eq!(of_kind(&scan(&app.store).await, "order").len(), 3);
}
