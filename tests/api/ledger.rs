//! Listing and audit (G1, C1) through the real router, and the `tally audit` and
//! `tally export` commands on a period with an order edited behind Tally's back.

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use chrono::Utc;
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, spawn_app};

pub async fn define(app: &TestApp, id: &str, body: Value) {
    let reply = app.put(&format!("/series/{id}"), &body).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
}

/// Posts orders `from..to` of source `src-<series>` into `series`; returns their numbers.
pub async fn post_range(app: &TestApp, series: &str, from: usize, to: usize) -> Vec<String> {
    let orders: Vec<Value> = (from..to)
        .map(|i| json!({"external_ref": format!("r{i}"), "data": {"i": i}}))
        .collect();
    let reply = app
        .post(
            "/orders/batch",
            &json!({"series": series, "source": format!("src-{series}"), "orders": orders}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["order_number"].as_str().unwrap().to_owned())
        .collect()
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
    post_range(&app, "P", 0, 250).await;
    let year = Utc::now().format("%Y").to_string();
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

/// Rewrites one attribute of an order's number item, as someone with table access could.
async fn tamper(app: &TestApp, key: &str, attribute: &str, value: &str) {
    app.store
        .client()
        .update_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S(key.to_owned()))
        .update_expression("SET #a = :v")
        .expression_attribute_names("#a", attribute)
        .expression_attribute_values(":v", AttributeValue::S(value.to_owned()))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_order_edited_in_the_table_is_named_by_the_audit_and_the_audit_command() {
    let app = spawn_app().await;
    define(&app, "T", json!({"format": "T{seq:4}", "reset": "never"})).await;
    post_range(&app, "T", 0, 30).await;
    app.patch("/series/T", &json!({"next": 40, "reason": "skip"}))
        .await;
    post_range(&app, "T", 30, 35).await;
    let intact = app.get("/series/T/audit").await;
    assert_eq!(intact.body["chain"]["intact"], true, "{}", intact.body);
    assert_eq!(intact.body["chain"]["links"], 36);
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tally"))
            .args(args)
            .args([
                "--series",
                "T",
                "--period",
                "all",
                "--table",
                app.store.table(),
            ])
            .output()
            .unwrap()
    };
    let clean = run(&["audit"]);
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    assert!(String::from_utf8_lossy(&clean.stdout).contains("chain intact: 36 links"));

    // C1: order 17's data is changed behind Tally's back.
    tamper(&app, "ORDER#T#all#17", "data", r#"{"i": 1700}"#).await;
    let audit = app.get("/series/T/audit").await;
    assert_eq!(audit.body["chain"]["intact"], false);
    assert_eq!(
        audit.body["chain"]["first_break"],
        json!({"at": "entry", "counter": 17, "order_number": "T0017"})
    );
    let found = run(&["audit"]);
    // A finding, not a failure to run.
    assert_eq!(found.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&found.stderr);
    assert!(stderr.contains("counter 17 (T0017)"), "{stderr}");
    // A declared move edited is found too: its reason is part of the chain.
    tamper(&app, "ORDER#T#all#17", "data", r#"{"i": 16}"#).await;
    assert_eq!(
        app.get("/series/T/audit").await.body["chain"]["intact"],
        true
    );
    tamper(&app, "ORDER#T#all#39", "reason", "nothing to see").await;
    assert_eq!(
        app.get("/series/T/audit").await.body["chain"]["first_break"]["counter"],
        31
    );

    // The export lists the period in counter order, the move as a gap row.
    let path = std::env::temp_dir().join(format!("{}.csv", app.store.table()));
    let export = run(&["export", "--out", path.to_str().unwrap()]);
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 1 + 36);
    assert!(rows[0].starts_with("counter,to_counter,order_number,status"));
    assert!(rows[1].starts_with("1,,T0001,active,src-T,r0,"));
    assert!(rows[31].starts_with("31,39,,gap,"), "{}", rows[31]);
    assert!(rows[32].starts_with("40,,T0040,active"));
}
