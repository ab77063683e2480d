//! Domain events from DynamoDB Local's own stream: purchases, a close and orders are made
//! through the API, the stream's records are read back, shaped as Lambda delivers them,
//! and run through the events function's handler, which publishes to a stand-in for
//! EventBridge that this test runs.

mod records;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use aws_lambda_events::event::dynamodb::Event;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};
use tally::bus::{BusConfig, EventBus};
use tally::store::{AwsEnvironment, Timeouts};
use tally::stream::handle_stream;

use crate::helpers::spawn_app_with_stream;
pub use records::stream_records;

/// A stand-in for EventBridge's `PutEvents`: keeps every entry it is sent, and refuses the
/// entries whose detail holds `refuse` (when set).
#[derive(Clone, Default)]
pub struct EventSink {
    pub entries: Arc<Mutex<Vec<Value>>>,
    refuse: Arc<Mutex<Option<String>>>,
    /// Calls answered with a 500 as a whole, and how many.
    failing: Arc<Mutex<bool>>,
    calls: Arc<Mutex<u32>>,
}

impl EventSink {
    pub async fn start(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let app = axum::Router::new()
            .fallback(put_events)
            .with_state(self.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{address}")
    }

    fn refuse(&self, marker: Option<&str>) {
        *self.refuse.lock().unwrap() = marker.map(str::to_owned);
    }

    fn taken(&self) -> Vec<Value> {
        self.entries.lock().unwrap().clone()
    }
}

async fn put_events(State(sink): State<EventSink>, body: String) -> (StatusCode, Json<Value>) {
    *sink.calls.lock().unwrap() += 1;
    if *sink.failing.lock().unwrap() {
        let error = json!({"__type": "InternalException", "message": "failing"});
        return (StatusCode::INTERNAL_SERVER_ERROR, Json(error));
    }
    let request: Value = serde_json::from_str(&body).unwrap();
    let refuse = sink.refuse.lock().unwrap().clone();
    let mut results = Vec::new();
    let mut failed = 0;
    for entry in request["Entries"].as_array().unwrap() {
        let detail = entry["Detail"].as_str().unwrap();
        if refuse
            .as_deref()
            .is_some_and(|marker| detail.contains(marker))
        {
            failed += 1;
            results.push(json!({"ErrorCode": "InternalFailure", "ErrorMessage": "refused"}));
        } else {
            sink.entries.lock().unwrap().push(entry.clone());
            results.push(json!({"EventId": format!("e-{}", results.len())}));
        }
    }
    (
        StatusCode::OK,
        Json(json!({"FailedEntryCount": failed, "Entries": results})),
    )
}

/// A bus on the stand-in.
pub async fn bus_on(sink: &EventSink) -> EventBus {
    EventBus::connect(&BusConfig {
        bus_name: "tally-test".into(),
        endpoint: Some(sink.start().await),
        timeouts: Timeouts::default(),
        environment: AwsEnvironment::default(),
    })
    .await
}

fn details(entries: &[Value], detail_type: &str) -> Vec<Value> {
    entries
        .iter()
        .filter(|e| e["DetailType"] == detail_type)
        .map(|e| serde_json::from_str(e["Detail"].as_str().unwrap()).unwrap())
        .collect()
}

#[tokio::test]
async fn the_stream_of_a_draw_and_a_series_becomes_one_event_per_fact() {
    let app = spawn_app_with_stream().await;
    let draw = json!({"draw_id": "evented", "total_tickets": 100});
    app.create_draw(&draw).await;
    let mut bought = BTreeMap::new();
    for (payment, quantity) in [("p1", 2), ("p2", 3), ("p3", 1)] {
        let body = json!({"payment_id": payment, "quantity": quantity, "payer_id": "ann"});
        let reply = app.post("/draws/evented/purchases", &body).await;
        assert_eq!(reply.status, StatusCode::CREATED);
        bought.insert(payment.to_owned(), reply.body["tickets"].clone());
        // A replay writes nothing, so it is no new fact.
        assert_eq!(
            app.post("/draws/evented/purchases", &body).await.status,
            StatusCode::OK
        );
    }
    let void = json!({"reason": "refund"});
    let voided = app.post("/draws/evented/purchases/p2/void", &void).await;
    assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    // Voiding again changes nothing, so it is no new fact.
    let again = app.post("/draws/evented/purchases/p2/void", &void).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(
        app.post("/draws/evented/close", &json!({})).await.status,
        StatusCode::OK
    );
    let drawn = app
        .post("/draws/evented/winners", &json!({"prizes": 2}))
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let redraw = json!({"reason": "winner unreachable"});
    let redrawn = app.post("/draws/evented/winners/1/redraw", &redraw).await;
    assert!(redrawn.status.is_success(), "{}", redrawn.body);
    let series = json!({"format": "EV{seq:4}", "reset": "never"});
    app.define_series("EV", &series).await;
    let orders = json!({"series": "EV", "source": "erp", "orders": [
        {"external_ref": "a", "data": {"secret": "customer data"}}, {"external_ref": "b"}]});
    assert_eq!(
        app.post("/orders/batch", &orders).await.status,
        StatusCode::OK
    );
    // A void, repeated, is one fact; so is a move of the counter.
    for _ in 0..2 {
        let reason = json!({"reason": "cancelled by the customer"});
        let voided = app.post("/series/EV/orders/EV0001/void", &reason).await;
        assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    }
    let moved = app
        .patch("/series/EV", &json!({"next": 10, "reason": "new range"}))
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);

    let records = stream_records(&app.store).await;
    assert!(
        records.records.len() > 10,
        "the stream holds every item write"
    );
    let sink = EventSink::default();
    let bus = bus_on(&sink).await;
    let response = handle_stream(&bus, records.clone()).await;
    assert!(response.batch_item_failures.is_empty());
    let entries = sink.taken();
    assert!(
        entries
            .iter()
            .all(|e| e["Source"] == "tally" && e["EventBusName"] == "tally-test")
    );
    // E1: one event per fact, nothing for cursors, tickets, counters or references.
    let purchases = details(&entries, "Purchase Created");
    assert_eq!(purchases.len(), 3);
    for purchase in &purchases {
        let payment = purchase["payment_id"].as_str().unwrap();
        assert_eq!(purchase["tickets"], bought[payment]);
        assert_eq!(purchase["payer_id"], "ann");
    }
    let voids = details(&entries, "Purchase Voided");
    assert_eq!(voids.len(), 1);
    assert_eq!(
        (voids[0]["payment_id"].as_str(), voids[0]["reason"].as_str()),
        (Some("p2"), Some("refund"))
    );
    assert_eq!(voids[0]["tickets"], bought["p2"]);
    let closed = details(&entries, "Draw Closed");
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["draw_id"], "evented");
    let drawings = details(&entries, "Winners Drawn");
    assert_eq!(drawings.len(), 1);
    assert_eq!(drawings[0]["prizes"], 2);
    assert_eq!(drawings[0]["eligible_count"], 3);
    let awards = details(&entries, "Prize Awarded");
    assert_eq!(awards.len(), 3, "two prizes and one redraw");
    assert_eq!(awards[2]["redraw_reason"], "winner unreachable");
    assert!(
        awards.iter().all(|a| a["payment_id"] != "p2"),
        "a voided ticket won"
    );
    let numbered = details(&entries, "Order Created");
    let numbers: HashSet<&str> = numbered
        .iter()
        .map(|o| o["order_number"].as_str().unwrap())
        .collect();
    assert_eq!(numbers, HashSet::from(["EV0001", "EV0002"]));
    let order_voids = details(&entries, "Order Voided");
    assert_eq!(order_voids.len(), 1);
    assert_eq!(
        (&order_voids[0]["order_number"], &order_voids[0]["counter"]),
        (&json!("EV0001"), &json!(1))
    );
    assert_eq!(order_voids[0]["reason"], "cancelled by the customer");
    let moves = details(&entries, "Counter Moved");
    assert_eq!(moves.len(), 1);
    assert_eq!(
        (&moves[0]["from"], &moves[0]["to"], &moves[0]["reason"]),
        (&json!(3), &json!(9), &json!("new range"))
    );
    assert_eq!(entries.len(), 13);
    // E2: no secret and no raw attribute map in any event.
    let everything = serde_json::to_string(&entries).unwrap();
    for forbidden in ["perm_key", "seed", "fingerprint", "\"S\":", "customer data"] {
        assert!(
            !everything.contains(forbidden),
            "an event holds {forbidden}"
        );
    }
    // Delivered again, the same facts carry the same ids.
    let ids = |entries: &[Value]| -> Vec<String> {
        entries
            .iter()
            .map(|e| {
                serde_json::from_str::<Value>(e["Detail"].as_str().unwrap()).unwrap()["event_id"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    let first = ids(&entries);
    assert_eq!(first.iter().collect::<HashSet<_>>().len(), first.len());
    handle_stream(&bus, records).await;
    assert_eq!(ids(&sink.taken()[13..]), first);
}

#[tokio::test]
async fn a_fact_the_bus_refuses_is_reported_by_its_record_and_nothing_else_is() {
    let app = spawn_app_with_stream().await;
    assert_eq!(
        app.post(
            "/draws",
            &json!({"draw_id": "refused", "total_tickets": 10})
        )
        .await
        .status,
        StatusCode::CREATED
    );
    for payment in ["kept", "refused-one"] {
        let body = json!({"payment_id": payment, "quantity": 1});
        assert!(
            app.post("/draws/refused/purchases", &body)
                .await
                .status
                .is_success()
        );
    }
    let records = stream_records(&app.store).await;
    let refused_sequence: Vec<String> = records
        .records
        .iter()
        .filter(|r| {
            r.event_name == "INSERT"
                && serde_json::to_string(&r.change.new_image)
                    .unwrap()
                    .contains("refused-one")
                && serde_json::to_string(&r.change.new_image)
                    .unwrap()
                    .contains("\"purchase\"")
        })
        .map(|r| r.change.sequence_number.clone().unwrap())
        .collect();
    assert_eq!(refused_sequence.len(), 1);
    let sink = EventSink::default();
    sink.refuse(Some("refused-one"));
    let response = handle_stream(&bus_on(&sink).await, records).await;
    let reported: Vec<String> = response
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.clone().unwrap())
        .collect();
    assert_eq!(reported, refused_sequence);
    assert_eq!(details(&sink.taken(), "Purchase Created").len(), 1);
    // A bus failing as a whole: every record with a fact is delivered again, and the
    // calls stop at the first failure.
    *sink.failing.lock().unwrap() = true;
    let calls_before = *sink.calls.lock().unwrap();
    let records = stream_records(&app.store).await;
    let with_facts = records
        .records
        .iter()
        .filter(|r| {
            serde_json::to_string(&r.change.new_image)
                .unwrap()
                .contains("\"purchase\"")
        })
        .count();
    let response = handle_stream(&bus_on(&sink).await, records).await;
    assert_eq!(response.batch_item_failures.len(), with_facts);
    // One call, tried three times by the SDK.
    assert_eq!(*sink.calls.lock().unwrap() - calls_before, 3);
}

#[tokio::test]
async fn the_stream_event_file_runs_through_the_events_function() {
    let path = format!("{}/events/dynamodb-stream.json", env!("CARGO_MANIFEST_DIR"));
    let event: Event = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let sink = EventSink::default();
    let response = handle_stream(&bus_on(&sink).await, event).await;
    assert!(response.batch_item_failures.is_empty());
    let types: Vec<String> = sink
        .taken()
        .iter()
        .map(|e| e["DetailType"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        types,
        [
            "Purchase Created",
            "Purchase Voided",
            "Draw Closed",
            "Winners Drawn",
            "Prize Awarded",
            "Prize Awarded",
            "Prize Awarded",
            "Order Created",
            "Order Voided",
            "Counter Moved"
        ]
    );
    assert!(
        !serde_json::to_string(&sink.taken())
            .unwrap()
            .contains("perm_key")
    );
}
