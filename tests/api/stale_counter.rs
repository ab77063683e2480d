//! Writers whose view of a gapless counter is stale: an operator's move read before the
//! systems numbered past its end, a writer whose lease expired and was taken over, a
//! process whose known counter another process moved on, and one that knows a format
//! version pending for the period that an operator replaced since. Each finds the counter
//! changed: that is a change to learn, not a broken invariant (never a 500), and nothing
//! of it is written.

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::json;
use tally::orders::{ItemOutcome, OrderService};
use tally::store::RequestCounter;
use tally::store::orders::{
    CounterAdvance, CounterMoved, CounterRight, OrdersCommit, OrdersExtras,
};
use tally_domain::time::Epoch;

use crate::helpers::assert_problem;
use crate::helpers::{TestApp, order_input, spawn_app, store_on};
use crate::ledger::define;
use tally_domain::access::SourceAccess;
use tally_domain::ids::{ExternalRef, SeriesId, SourceId};
use tally_domain::order::{Move, Order, OrderData, Reason};
use tally_domain::series::{Period, Reset};

/// A gapless series `id` with numbers 1 to 10; its series id and period.
async fn ten_numbers(app: &TestApp, id: &str) -> (SeriesId, Period) {
    define(app, id, json!({"format": "S{seq:5}", "reset": "never"})).await;
    app.post_range(id, 0, 10).await;
    (
        SeriesId::parse(id).unwrap(),
        Period::parse(Reset::Never, "all").unwrap(),
    )
}

/// The audit of `id`: `orders` orders numbered 1 to `orders`, no gap, an intact chain.
async fn assert_untouched(app: &TestApp, id: &str, orders: u64) {
    let audit = app
        .get(&format!("/series/{id}/audit?period=all"))
        .await
        .body;
    assert_eq!(audit["orders"], orders, "{audit}");
    assert_eq!(audit["last_counter"], orders, "{audit}");
    assert_eq!(audit["gaps"].as_array().map(Vec::len), Some(0), "{audit}");
    assert_eq!(audit["chain"]["intact"], true, "{audit}");
}

#[tokio::test]
async fn a_move_read_before_writers_passed_its_end_reads_again_and_is_behind() {
    let app = spawn_app().await;
    let (series, period) = ten_numbers(&app, "MR").await;
    let reason = "keep numbers for the paper ledger";
    // Read when the counter was at 3: the next number was to be 9, and 8 is now taken.
    let stale = Move {
        series: series.clone(),
        from: 4,
        to: 8,
        reason: Reason::parse(reason).unwrap(),
        at: Timestamp::now(),
        hash: Some("00".repeat(32)),
    };
    let now = Timestamp::now().epoch_millis();
    let moved = app
        .store
        .move_counter(&series, &period, Some(3), &stale, 1, now, None, None)
        .await
        .unwrap();
    assert!(matches!(moved, CounterMoved::Changed), "{moved:?}");
    // Read again, the move is behind the counter.
    let behind = app
        .patch("/series/MR", &json!({"next": 9, "reason": reason}))
        .await;
    assert_problem(&behind, StatusCode::CONFLICT, "move_not_forward");
    assert_untouched(&app, "MR", 10).await;
}

#[tokio::test]
async fn a_chunk_whose_claim_was_taken_over_finds_the_counter_moved_on() {
    let app = spawn_app().await;
    let (series, period) = ten_numbers(&app, "CT").await;
    // A writer that leased the counter at 3 and stalled past its lease: the next writer
    // numbered 4 to 10. Its chunk for 4 and 5 now meets those numbers.
    let orders: Vec<Order> = (4..=5)
        .map(|counter| Order {
            order_number: format!("S{counter:05}"),
            series: series.clone(),
            source: SourceId::parse("stalled").unwrap(),
            external_ref: ExternalRef::parse(&format!("late-{counter}")).unwrap(),
            data: OrderData::empty(),
            fingerprint: "late".into(),
            period: period.as_str().to_owned(),
            counter,
            created_at: Timestamp::now(),
            hash: Some("00".repeat(32)),
            void: None,
            corrects: None,
            credit_notes: Vec::new(),
        })
        .collect();
    let advance = CounterAdvance {
        owner: "stalled-writer".into(),
        format_version: 1,
        expected: Some(3),
        new: 5,
        head: "00".repeat(32),
        holding: CounterRight::Lease { until: None },
    };
    let commit = app
        .store
        .commit_orders(
            &series,
            &period,
            &orders,
            &OrdersExtras {
                advance: Some(&advance),
                ..OrdersExtras::default()
            },
        )
        .await
        .unwrap();
    let OrdersCommit::Cancelled(cancelled) = commit else {
        panic!("a chunk on a counter moved on committed");
    };
    assert_eq!(cancelled.counter_now.and_then(|c| c.last), Some(10));
    assert!(cancelled.existing.is_empty());
    assert_untouched(&app, "CT", 10).await;
}

/// A single post moves the counter from the value its process knows; when another process
/// moved it meanwhile, the cancelled transaction returns the counter, and the post is
/// numbered next without reading it.
#[tokio::test]
async fn a_single_post_whose_counter_moved_on_learns_it_from_the_cancellation() {
    let app = spawn_app().await;
    define(&app, "SL", json!({"format": "S{seq:5}", "reset": "never"})).await;
    let series = SeriesId::parse("SL").unwrap();
    let source = SourceId::parse("erp").unwrap();
    let counter = RequestCounter::default();
    let a = OrderService::new(store_on(app.store.table(), Some(counter.clone())).await);
    let b = OrderService::new(store_on(app.store.table(), None).await);
    let post = async |service: &OrderService, reference: &str| {
        let inputs = vec![order_input(reference)];
        match service
            .create_orders(&series, &source, inputs, &SourceAccess::All)
            .await
            .unwrap()
            .pop()
        {
            Some(ItemOutcome::Created(order)) => order.counter,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(post(&a, "a1").await, 1);
    assert_eq!(post(&b, "b1").await, 2);
    let before = counter.snapshot();
    assert_eq!(post(&a, "a2").await, 3);
    let sent = counter.snapshot().since(&before);
    assert_eq!(
        (sent.of("TransactWriteItems"), sent.total()),
        (2, 2),
        "{sent}"
    );
    assert_untouched(&app, "SL", 3).await;
}

/// A process read a counter whose period's format was pending (no number yet), then the
/// operator replaced that pending format: the version the process knows is gone from the
/// series, and its next post reads the counter again and numbers in the new format.
#[tokio::test]
async fn a_post_after_its_known_pending_format_was_replaced_reads_the_counter_again() {
    let app = spawn_app().await;
    define(&app, "PF", json!({"format": "P{seq:3}", "reset": "never"})).await;
    define(&app, "OT", json!({"format": "O{seq:3}", "reset": "never"})).await;
    let change = |format: &str| json!({"format": format});
    let pending = app.patch("/series/PF", &change("Q{seq:3}")).await;
    assert_eq!(pending.status, StatusCode::OK, "{}", pending.body);
    // The source's reference has an order of another series: the post to PF reads PF's
    // counter (format version 2, no number), and its transaction is cancelled by the
    // reference, so PF numbers nothing.
    let post = |series: &str, reference: &str| json!({"series": series, "source": "erp", "external_ref": reference});
    let first = app.post("/orders", &post("OT", "shared")).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let repeat = app.post("/orders", &post("PF", "shared")).await;
    assert_problem(&repeat, StatusCode::CONFLICT, "idempotency_conflict");
    let replaced = app.patch("/series/PF", &change("R{seq:3}")).await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    let versions: Vec<u64> = replaced.body["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, [1, 3], "{}", replaced.body);
    let next = app.post("/orders", &post("PF", "next")).await;
    assert_eq!(next.status, StatusCode::CREATED, "{}", next.body);
    assert_eq!(next.body["order_number"], "R001");
    assert_untouched(&app, "PF", 1).await;
}
