//! SQS imports under faults: SQS delivers again every message the handler reports, and
//! now and then one it did not (at least once); a message whose write was answered in a
//! body cut short or as still in progress is reported, not dropped, and so is a credit
//! note delivered before its invoice. Every reference ends numbered once, a gapless series
//! without a gap, and a message delivered again after it succeeded changes no number.

use super::*;
use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tally::queue::handle_delivery;

use crate::invariants::credit_links;
use crate::queue::a_minute;

/// Deliveries one message may take before the test gives up on it.
const MOST_DELIVERIES: usize = 40;

/// A message of the queue: its id and its body.
type Message = (String, String);

/// A delivery of `messages`, with their own ids, as SQS sends one.
fn delivery(messages: &[&Message]) -> SqsEvent {
    let mut event = SqsEvent::default();
    event.records = messages
        .iter()
        .map(|(id, body)| {
            let mut message = SqsMessage::default();
            message.message_id = Some(id.clone());
            message.body = Some(body.clone());
            message
        })
        .collect();
    event
}

/// Delivers `messages` as SQS does: each delivery takes up to ten waiting messages; the
/// ones reported wait again, and so does a share `again` of the others. Ends when no
/// message waits.
async fn deliver_until_settled(orders: &OrderService, messages: &[Message], again: f64) {
    let mut rng = StdRng::seed_from_u64(rand::rng().random());
    let mut waiting: Vec<&Message> = messages.iter().collect();
    let mut deliveries = 0;
    while !waiting.is_empty() {
        deliveries += 1;
        assert!(
            deliveries <= MOST_DELIVERIES * messages.len(),
            "messages never settled: {waiting:?}"
        );
        let taken: Vec<&Message> = waiting.drain(..waiting.len().min(10)).collect();
        let response = handle_delivery(orders, delivery(&taken), a_minute()).await;
        for message in taken {
            let reported = response
                .batch_item_failures
                .iter()
                .any(|f| f.item_identifier == message.0);
            if reported || rng.random_bool(again) {
                waiting.push(message);
            }
        }
    }
}

/// `count` messages of five orders each, alternating between series `G` and `F`, with
/// references unique across them.
fn batches(count: usize) -> Vec<Message> {
    (0..count)
        .map(|m| {
            let series = if m % 2 == 0 { "G" } else { "F" };
            let orders: Vec<serde_json::Value> = (0..5)
                .map(|i| json!({"external_ref": format!("m{m}-{i}"), "data": {"line": i}}))
                .collect();
            let body = json!({"series": series, "source": "erp", "orders": orders});
            (format!("msg-{m}"), body.to_string())
        })
        .collect()
}

/// `count` messages of two credit notes each, of the first invoices of `G`, delivered
/// with the invoices: a credit note that comes first waits for its invoice.
fn credit_notes(count: usize) -> Vec<Message> {
    (0..count)
        .map(|m| {
            let notes: Vec<serde_json::Value> = (0..2)
                .map(|i| {
                    let invoice = format!("G{:05}", 2 * m + i + 1);
                    json!({"external_ref": format!("n{m}-{i}"), "corrects": invoice})
                })
                .collect();
            let body = json!({"series": "NC", "source": "erp", "orders": notes});
            (format!("notes-{m}"), body.to_string())
        })
        .collect()
}

/// A gapless series `G`, a fast series `F` and a gapless series `NC` of credit notes of
/// `G`'s invoices.
async fn three_series(app: &crate::helpers::TestApp) {
    let gapless = json!({"format": "G{seq:5}", "reset": "never", "gapless": true});
    app.define_series("G", &gapless).await;
    let fast = json!({"format": "F{seq:5}", "reset": "never", "gapless": false});
    app.define_series("F", &fast).await;
    let notes = json!({"format": "NC{seq:5}", "reset": "never", "gapless": true, "credits": "G"});
    app.define_series("NC", &notes).await;
}

/// O1, O2 and O4 on the table: `orders` references in all, each numbered once, the
/// counters of `G` and `NC` without a gap; L1 for `NC`'s credit notes. Returns every
/// reference's number.
fn settled_numbers(items: &[crate::helpers::Item], orders: usize) -> BTreeMap<String, String> {
    let mut numbers = BTreeMap::new();
    for series in ["G", "F", "NC"] {
        let numbered = numbered_orders(items, series);
        let mut counters: Vec<u64> = numbered.values().map(|n| n.counter).collect();
        counters.sort_unstable();
        if series != "F" {
            assert_eq!(counters, (1..=numbered.len() as u64).collect::<Vec<_>>());
        }
        for ((_, reference), numbered) in numbered {
            numbers.insert(reference, numbered.number);
        }
    }
    assert_eq!(numbers.len(), orders);
    assert_eq!(
        credit_links(items, "NC", "G"),
        numbers.keys().filter(|r| r.starts_with('n')).count()
    );
    numbers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqs_deliveries_under_faults_number_each_order_once_and_redelivery_changes_nothing() {
    const MESSAGES: usize = 2;
    const NOTES: usize = 1;
    let app = spawn_app().await;
    three_series(&app).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let orders = OrderService::new(faulty_store(&proxy, app.table()).await);
    proxy.set(every_fault(0.2));
    // The credit notes first: each is delivered again until its invoice lands.
    let mut messages = credit_notes(NOTES);
    messages.extend(batches(MESSAGES));
    deliver_until_settled(&orders, &messages, 0.3).await;
    let counts = proxy.counts();
    assert!(counts.errors_after + counts.lost_after > 0, "{counts:?}");
    let all = 5 * MESSAGES + 2 * NOTES;
    let numbers = settled_numbers(&app.scan().await, all);
    // SQS delivers every message once more: the same numbers.
    proxy.set(Faults::default());
    deliver_until_settled(&orders, &messages, 0.0).await;
    assert_eq!(settled_numbers(&app.scan().await, all), numbers);
}

/// A message of each series (gapless and fast) whose every transaction meets `fault`:
/// both are reported for redelivery, and the redelivery, free of faults, settles them
/// once.
async fn reported_then_settled(fault: Faults) {
    let app = spawn_app().await;
    three_series(&app).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let orders = OrderService::new(faulty_store(&proxy, app.table()).await);
    let messages = batches(2);
    let all: Vec<&Message> = messages.iter().collect();
    proxy.set(Faults {
        operations: Some(vec!["TransactWriteItems".into()]),
        ..fault
    });
    let response = handle_delivery(&orders, delivery(&all), a_minute()).await;
    let mut reported: Vec<&str> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    reported.sort_unstable();
    assert_eq!(reported, ["msg-0", "msg-1"], "{:?}", proxy.counts());
    proxy.set(Faults::default());
    deliver_until_settled(&orders, &messages, 0.0).await;
    settled_numbers(&app.scan().await, 10);
}

#[tokio::test]
async fn an_import_answered_in_a_cut_body_is_delivered_again_and_numbered_once() {
    reported_then_settled(Faults {
        truncated_after: 1.0,
        ..Faults::default()
    })
    .await;
}

#[tokio::test]
async fn an_import_answered_as_still_in_progress_is_delivered_again_and_numbered_once() {
    reported_then_settled(Faults {
        in_progress_after: 1.0,
        ..Faults::default()
    })
    .await;
}
