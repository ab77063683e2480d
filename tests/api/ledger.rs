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
