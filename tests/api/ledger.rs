//! Listing and audit (G1, C1) through the real router.

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, spawn_app};

pub async fn define(app: &TestApp, id: &str, body: Value) {
    let reply = app.put(&format!("/series/{id}"), &body).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
}

#[tokio::test]
async fn a_listing_pages_through_a_period_in_counter_order() {
    let app = spawn_app().await;
    define(
        &app,
        "P",
        json!({"format": "P{yyyy}-{seq:4}", "reset": "yearly", "gapless": false}),
    )
    .await;
    app.post_range("P", 0, 250).await;
    let year = Timestamp::now().strftime("%Y").to_string();
    let mut counters = Vec::new();
    let mut cursor = String::new();
    let mut pages = 0;
    loop {
        let page = app
            .get(&format!("/series/P/orders?period={year}&limit=100{cursor}"))
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        pages += 1;
        counters.extend(
            page.body["orders"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["counter"].as_u64().unwrap()),
        );
        match page.body["next_cursor"].as_str() {
            Some(c) => cursor = format!("&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(counters, (1..=250).collect::<Vec<u64>>());
    assert!((3..=4).contains(&pages), "{pages} pages");
    // Without a period: the current one.
    assert_eq!(
        app.get("/series/P/orders?limit=5").await.body["orders"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
    for (query, code) in [
        ("period=2026-01", "invalid_period"),
        ("period=26", "invalid_period"),
        ("limit=0", "invalid_limit"),
        ("limit=1001", "invalid_limit"),
        ("cursor=zz", "invalid_cursor"),
        ("colour=red", "invalid_query"),
    ] {
        assert_problem(
            &app.get(&format!("/series/P/orders?{query}")).await,
            StatusCode::BAD_REQUEST,
            code,
        );
    }
    assert_problem(
        &app.get("/series/P/audit?period=x").await,
        StatusCode::BAD_REQUEST,
        "invalid_period",
    );
    assert_problem(
        &app.get("/series/none/orders").await,
        StatusCode::NOT_FOUND,
        "series_not_found",
    );
}

/// An audit of a gapless series that is taking orders: an order committed while the audit
/// reads its pages lies past the counter the audit read first, so it is left to the next
/// audit rather than taken for a chain broken at its head.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_order_written_while_an_audit_reads_is_left_to_the_next_audit() {
    use std::time::Duration;
    use tally_testkit::fault_proxy::{FaultProxy, Faults};

    let app = spawn_app().await;
    let body = json!({"format": "W{seq:4}", "reset": "never", "gapless": true});
    define(&app, "W", body).await;
    app.post_range("W", 0, 5).await;
    // The auditor's index reads wait, so that an order commits between its counter read
    // and its first page.
    let proxy = FaultProxy::start(&crate::helpers::endpoint()).await;
    let wait = Duration::from_millis(800);
    proxy.set(Faults {
        latency: Some(wait..=wait),
        operations: Some(vec!["Query".into()]),
        ..Faults::default()
    });
    let auditor =
        crate::faults::faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;
    let audit =
        tokio::spawn(async move { tally_testkit::http::get(&auditor, "/series/W/audit").await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.post_range("W", 5, 6).await;
    let audit = audit.await.unwrap();
    assert_eq!(audit.status, StatusCode::OK, "{}", audit.body);
    assert_eq!(audit.body["chain"]["intact"], true, "{}", audit.body);
    assert_eq!(audit.body["orders"], 5, "{}", audit.body);
    let next = app.get("/series/W/audit").await;
    assert_eq!(next.body["chain"]["intact"], true, "{}", next.body);
    assert_eq!(next.body["orders"], 6, "{}", next.body);
}

/// A counter behind its own numbers (lost, or restored from an older copy) is no order
/// written since: the audit reads it again, finds it still behind, and audits the numbers
/// past it, so the chain shows broken at its head.
#[tokio::test]
async fn a_counter_behind_its_numbers_shows_as_a_break() {
    use aws_sdk_dynamodb::types::AttributeValue;

    let app = spawn_app().await;
    let body = json!({"format": "B{seq:4}", "reset": "never", "gapless": true});
    define(&app, "B", body).await;
    app.post_range("B", 0, 6).await;
    app.store
        .client()
        .delete_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S("SERIES#B#PERIOD#all".into()))
        .send()
        .await
        .unwrap();
    let audit = app.get("/series/B/audit").await;
    assert_eq!(audit.status, StatusCode::OK, "{}", audit.body);
    assert_eq!(audit.body["orders"], 6, "{}", audit.body);
    assert_eq!(audit.body["chain"]["intact"], false, "{}", audit.body);
    assert_eq!(
        audit.body["chain"]["first_break"]["at"], "head",
        "{}",
        audit.body
    );
}
