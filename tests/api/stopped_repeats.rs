//! O4 at the end of a series: an order posted again after its answer was lost gets its
//! number back even when the series has no room left for another (a used-up or expired
//! range, a full format), by a single post, a one-item batch or the queue.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::json;
use tally::orders::{ItemOutcome, OrderService};
use tally::queue::handle_delivery;
use tally_domain::access::SourceAccess;
use tally_domain::ids::{SeriesId, SourceId};

use crate::helpers::{TestApp, assert_problem, order_input, spawn_app};
use crate::queue::{a_minute, delivery};

/// Posts order `reference` to `series` alone, from the source named as the series.
async fn post_one(app: &TestApp, series: &str, reference: &str) -> crate::helpers::Reply {
    let body = json!({"series": series, "source": series, "external_ref": reference});
    app.post("/orders", &body).await
}

/// Numbers `count` orders `f0`, `f1`, ... of `series` one by one; their numbers.
async fn fill(app: &TestApp, series: &str, count: usize) -> Vec<String> {
    let mut numbers = Vec::new();
    for k in 0..count {
        let reply = post_one(app, series, &format!("f{k}")).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        numbers.push(reply.body["order_number"].as_str().unwrap().to_owned());
    }
    numbers
}

/// A full series answers a repeat of its last order, by a single post and a one-item
/// batch, with that order; a new order is still refused with `code`.
async fn the_last_order_repeats(app: &TestApp, series: &str, count: usize, code: &str) {
    let numbers = fill(app, series, count).await;
    let last = format!("f{}", count - 1);
    assert_problem(
        &post_one(app, series, "new").await,
        StatusCode::CONFLICT,
        code,
    );
    let again = post_one(app, series, &last).await;
    assert_eq!(again.status, StatusCode::OK, "{series}: {}", again.body);
    assert_eq!(again.body["order_number"], numbers[count - 1].as_str());
    let batch = json!({"series": series, "source": series, "orders": [{"external_ref": last}]});
    let batched = app.post("/orders/batch", &batch).await;
    let result = &batched.body["results"][0];
    assert_eq!(
        (&result["status"], &result["order_number"]),
        (&json!("existing"), &json!(numbers[count - 1])),
        "{series}: {}",
        batched.body
    );
    // Another body under the same reference is the reference's conflict, as anywhere.
    let other = json!({"series": series, "source": series, "external_ref": last,
                       "data": {"changed": true}});
    assert_problem(
        &app.post("/orders", &other).await,
        StatusCode::CONFLICT,
        "idempotency_conflict",
    );
}

#[tokio::test]
async fn a_used_up_range_answers_a_repeat_of_its_last_order_with_its_number() {
    let app = spawn_app().await;
    for (series, gapless) in [("RG", true), ("RF", false)] {
        let body = json!({"format": format!("{series}{{seq:3}}"), "reset": "never", "gapless": gapless,
                          "ranges": [{"from": 1, "to": 5, "authority_ref": "AUTH-1"}]});
        app.define_series(series, &body).await;
        the_last_order_repeats(&app, series, 5, "range_exhausted").await;
    }
}

#[tokio::test]
async fn a_full_format_answers_a_repeat_of_its_last_order_with_its_number() {
    let app = spawn_app().await;
    for (series, gapless) in [("WG", true), ("WF", false)] {
        let body =
            json!({"format": format!("{series}{{seq:1!}}"), "reset": "never", "gapless": gapless});
        app.define_series(series, &body).await;
        the_last_order_repeats(&app, series, 9, "series_exhausted").await;
    }
}

#[tokio::test]
async fn an_expired_range_answers_a_repeat_of_an_order_numbered_in_it() {
    let app = spawn_app().await;
    let body = json!({"format": "E{seq:3}", "reset": "never", "ranges": [
        {"from": 1, "to": 5, "authority_ref": "AUTH-E", "valid_until": "2030-01-01T00:00:00Z"}
    ]});
    app.define_series("EXP", &body).await;
    let now = Arc::new(Mutex::new(
        "2029-12-31T12:00:00Z".parse::<Timestamp>().unwrap(),
    ));
    let clock = now.clone();
    let orders =
        OrderService::with_clock(app.store.clone(), Arc::new(move || *clock.lock().unwrap()));
    let series = SeriesId::parse("EXP").unwrap();
    let source = SourceId::parse("erp").unwrap();
    let post = |reference: &'static str| {
        let (orders, series, source) = (&orders, &series, &source);
        async move {
            let inputs = vec![order_input(reference)];
            let outcomes = orders
                .create_orders(series, source, inputs, &SourceAccess::All)
                .await
                .unwrap();
            outcomes.into_iter().next().unwrap()
        }
    };
    let ItemOutcome::Created(first) = post("a").await else {
        panic!("the range is live");
    };
    *now.lock().unwrap() = "2030-01-02T00:00:00Z".parse().unwrap();
    let refused = post("b").await;
    assert_eq!(
        refused.rejection().map(|r| r.code.as_str()),
        Some("range_expired")
    );
    match post("a").await {
        ItemOutcome::Existing(order) => assert_eq!(order.order_number, first.order_number),
        other => panic!("{other:?}"),
    }
}

/// A message delivered again after its order took the series' last number is done, not
/// delivered again until it is dead-lettered.
#[tokio::test]
async fn a_redelivered_message_of_the_last_number_is_not_a_failure() {
    let app = spawn_app().await;
    let body = json!({"format": "Q{seq:3}", "reset": "never",
                      "ranges": [{"from": 1, "to": 2, "authority_ref": "AUTH-Q"}]});
    app.define_series("Q", &body).await;
    let orders = OrderService::new(app.store.clone());
    let bodies: Vec<String> = (0..2)
        .map(|k| {
            json!({"series": "Q", "source": "erp", "external_ref": format!("q{k}")}).to_string()
        })
        .collect();
    let first = handle_delivery(&orders, delivery(&bodies), a_minute()).await;
    assert!(first.batch_item_failures.is_empty());
    let again = handle_delivery(&orders, delivery(&bodies[1..]), a_minute()).await;
    assert!(
        again.batch_item_failures.is_empty(),
        "the last order was delivered again as a failure"
    );
    let new = json!({"series": "Q", "source": "erp", "external_ref": "q2"}).to_string();
    let refused = handle_delivery(&orders, delivery(&[new]), a_minute()).await;
    assert_eq!(
        refused.batch_item_failures.len(),
        1,
        "a new order waits for a range"
    );
}
