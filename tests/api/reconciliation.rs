//! Reconciling a draw: `GET /draws/{draw_id}/purchases` lists every purchase exactly once
//! across its pages, with voided ones marked as they are now, filters by status and
//! channel, and costs a bounded number of requests per page (no Scan).

use std::collections::BTreeMap;

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures::future::join_all;
use serde_json::{Value, json};
use tally::store::RequestCounter;

use crate::helpers::{TestApp, assert_problem, fresh_store, router, spawn_app, test_app};

/// Every page of `query` on the draw's listing, followed to the end.
async fn every_page(app: &TestApp, draw: &str, query: &str) -> (Vec<Value>, usize) {
    let (mut purchases, mut pages) = (Vec::new(), 0);
    let mut cursor: Option<String> = None;
    loop {
        let after = cursor.map(|c| format!("&cursor={c}")).unwrap_or_default();
        let page = app
            .get(&format!("/draws/{draw}/purchases?{query}{after}"))
            .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        pages += 1;
        purchases.extend(page.body["purchases"].as_array().unwrap().iter().cloned());
        match page.body["cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (purchases, pages),
        }
    }
}

fn ids(purchases: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = purchases
        .iter()
        .map(|p| p["payment_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draws_purchases_are_each_listed_once_with_voids_marked_and_filters_applied() {
    let app = spawn_app().await;
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "rec", "total_tickets": 400, "stripes": 12}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    // Concurrent buyers spread over the stripes; every fifth by post.
    let bought = join_all((0..40).map(|i| {
        let app = &app;
        async move {
            let channel = if i % 5 == 0 { "postal" } else { "online" };
            let body = json!({"payment_id": format!("p{i:02}"), "quantity": 1 + i % 3,
                              "channel": channel});
            crate::helpers::settle(&app.router, "/draws/rec/purchases", &body.to_string()).await
        }
    }))
    .await;
    assert!(bought.iter().all(|r| r.status == StatusCode::CREATED));
    for voided in ["p03", "p10", "p21"] {
        let reply = app
            .post(
                &format!("/draws/rec/purchases/{voided}/void"),
                &json!({"reason": "refunded"}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }

    let (all, pages) = every_page(&app, "rec", "limit=7").await;
    let expected: Vec<String> = (0..40).map(|i| format!("p{i:02}")).collect();
    assert_eq!(ids(&all), expected, "each purchase once");
    assert!(pages >= 40 / 7, "{pages} pages");
    // Read strongly consistent: the voids made just before show.
    let status: BTreeMap<String, (String, Value)> = all
        .iter()
        .map(|p| {
            let id = p["payment_id"].as_str().unwrap().to_owned();
            (
                id,
                (
                    p["status"].as_str().unwrap().to_owned(),
                    p["void_reason"].clone(),
                ),
            )
        })
        .collect();
    for (id, (status, reason)) in &status {
        let voided = ["p03", "p10", "p21"].contains(&id.as_str());
        assert_eq!(status, if voided { "void" } else { "active" }, "{id}");
        assert_eq!(
            reason,
            &if voided {
                json!("refunded")
            } else {
                json!(null)
            }
        );
    }
    // The tickets listed are the tickets sold, each once.
    let mut tickets: Vec<u64> = all
        .iter()
        .flat_map(|p| p["tickets"].as_array().unwrap().clone())
        .map(|t| t.as_u64().unwrap())
        .collect();
    let listed = tickets.len();
    tickets.sort_unstable();
    tickets.dedup();
    let draw = app.get("/draws/rec").await;
    assert_eq!(tickets.len(), listed);
    assert_eq!(Some(listed as u64), draw.body["sold"].as_u64());

    let (voided, _) = every_page(&app, "rec", "status=void").await;
    assert_eq!(ids(&voided), ["p03", "p10", "p21"]);
    let (postal, _) = every_page(&app, "rec", "channel=postal&limit=3").await;
    let postal_ids: Vec<String> = (0..40).step_by(5).map(|i| format!("p{i:02}")).collect();
    assert_eq!(ids(&postal), postal_ids);
    let (online_active, _) = every_page(&app, "rec", "channel=online&status=active").await;
    assert_eq!(
        online_active.len(),
        40 - 8 - 2,
        "p03 and p21 are online and void"
    );
    assert!(
        online_active
            .iter()
            .all(|p| p["channel"] == "online" && p["status"] == "active")
    );
}

#[tokio::test]
async fn a_draws_listing_refuses_what_it_does_not_take() {
    let app = spawn_app().await;
    app.post(
        "/draws",
        &json!({"draw_id": "few", "total_tickets": 100, "stripes": 4}),
    )
    .await;
    for (query, code) in [
        ("status=refunded", "invalid_status"),
        ("channel=phone", "invalid_channel"),
        ("limit=0", "invalid_limit"),
        ("limit=101", "invalid_limit"),
        ("cursor=%%%", "invalid_cursor"),
        ("cursor=bm9wZQ", "invalid_cursor"),
    ] {
        let reply = app.get(&format!("/draws/few/purchases?{query}")).await;
        assert_problem(&reply, StatusCode::BAD_REQUEST, code);
    }
    // A cursor into a stripe the draw does not have is not one this listing gave.
    let beyond = URL_SAFE_NO_PAD.encode("4");
    let reply = app
        .get(&format!("/draws/few/purchases?cursor={beyond}"))
        .await;
    assert_problem(&reply, StatusCode::BAD_REQUEST, "invalid_cursor");
    let reply = app.get("/draws/none/purchases").await;
    assert_problem(&reply, StatusCode::NOT_FOUND, "draw_not_found");
}

/// A page reads the draw, queries at most 16 index partitions and reads its purchases
/// back in one batch: its cost does not grow with the table, nor with the stripes passed.
#[tokio::test]
async fn a_page_of_a_draws_purchases_costs_bounded_requests_and_no_scan() {
    let counter = RequestCounter::default();
    let (store, table) = fresh_store(Some(counter.clone())).await;
    let app = test_app(router(store.clone()), store, table);
    app.post(
        "/draws",
        &json!({"draw_id": "wide", "total_tickets": 5000, "stripes": 1024}),
    )
    .await;
    for i in 0..3 {
        app.post(
            "/draws/wide/purchases",
            &json!({"payment_id": format!("w{i}"), "quantity": 2}),
        )
        .await;
    }
    let before = counter.snapshot();
    let (all, pages) = every_page(&app, "wide", "limit=100").await;
    let after = counter.snapshot();
    assert_eq!(ids(&all), ["w0", "w1", "w2"]);
    // 1,024 stripes, at most 16 a page.
    assert_eq!(pages, 1024 / 16);
    let spent = |op: &str| after.of(op) - before.of(op);
    assert_eq!(spent("Scan"), 0);
    assert_eq!(spent("Query"), 1024);
    assert_eq!(spent("GetItem"), pages as u64);
    assert!(spent("BatchGetItem") <= pages as u64);
}
