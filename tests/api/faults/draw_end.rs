//! Faults at the writes that end a sale and a draw: a success answered in a body cut short
//! on a purchase, a hold and a void; a failure after committing on the close's writes and
//! on the winners' record; an endpoint that freezes during the close, the winners and the
//! eligible list. Each answer is a `503` with `Retry-After` or the final answer, and the
//! repeat answers what committed, which the table holds once.

use super::*;
use crate::helpers::{TestApp, attr_n, attr_numbers, attr_s, post_raw};
use serde_json::Value;
use tally_testkit::fault_proxy::Counts;

/// `reply` to `path` is `503 outcome_unknown` with `Retry-After`: a repeat settles it.
fn assert_outcome_unknown(reply: &Reply, path: &str) {
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::SERVICE_UNAVAILABLE, "outcome_unknown"),
        "{path}: {}",
        reply.body
    );
    assert!(reply.headers.contains_key("retry-after"), "{path}");
}

/// One purchase, hold or void whose only `TransactWriteItems` commits and is answered in
/// a body cut short: `503 outcome_unknown`; the repeat replays what committed (`200`).
async fn unreadable_once(instance: &Router, proxy: &FaultProxy, path: &str, body: &Value) -> Reply {
    let before = proxy.counts().truncated_after;
    proxy.set(Faults {
        truncated_after: 1.0,
        operations: Some(vec!["TransactWriteItems".into()]),
        at_most: Some(1),
        ..Faults::default()
    });
    let unknown = post_json(instance, path, body).await;
    assert_outcome_unknown(&unknown, path);
    assert_eq!(
        proxy.counts().truncated_after,
        before + 1,
        "{path}: no cut answer"
    );
    proxy.set(Faults::default());
    let repeat = settle(instance, path, &body.to_string()).await;
    assert_eq!(repeat.status, StatusCode::OK, "{path}: {}", repeat.body);
    repeat
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cut_success_on_a_purchase_a_hold_or_a_void_is_a_503_and_the_repeat_replays_it() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "cut", "total_tickets": 50, "max_per_purchase": 5});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;

    let purchase = json!({"payment_id": "p1", "quantity": 3, "payer_id": "ann"});
    let bought = unreadable_once(&instance, &proxy, "/draws/cut/purchases", &purchase).await;
    let hold = json!({"hold_id": "h1", "quantity": 2, "payer_id": "bob"});
    let held = unreadable_once(&instance, &proxy, "/draws/cut/holds", &hold).await;
    assert_eq!(held.body["status"], "held", "{}", held.body);
    let void = json!({"reason": "refund"});
    let voided = unreadable_once(&instance, &proxy, "/draws/cut/purchases/p1/void", &void).await;
    assert_eq!(voided.body["status"], "void", "{}", voided.body);
    assert_eq!(tickets_of(&voided), tickets_of(&bought));

    // Once each, as the answers said: the purchase and its tickets void, the hold live.
    let items = app.scan().await;
    let sold = sold_tickets(&items, 50);
    assert_eq!(sold.keys().collect::<Vec<_>>(), ["p1"]);
    assert_eq!(sold["p1"], tickets_of(&bought));
    // V1: the purchase and every ticket of it void, counted once by the draw.
    let purchases = of_kind(&items, "purchase");
    assert_eq!(attr_s(purchases[0], "status"), "void");
    let tickets = of_kind(&items, "ticket");
    assert_eq!(tickets.len(), 3);
    assert!(tickets.iter().all(|t| attr_s(t, "status") == "void"));
    assert_eq!(attr_n(of_kind(&items, "draw")[0], "voided"), 3);
    let holds = of_kind(&items, "hold");
    assert_eq!(holds.len(), 1);
    assert_eq!(attr_numbers(holds[0], "tickets"), tickets_of(&held));
    // A repeat on an instance of its own answers the same.
    let again = post_json(&app.router, "/draws/cut/holds", &hold).await;
    assert_eq!(
        (again.status, tickets_of(&again)),
        (StatusCode::OK, tickets_of(&held))
    );
}

/// The journal's entries of `action` on `target`.
async fn journalled(app: &TestApp, action: &str, target: &str) -> usize {
    let page = app.get("/journal?limit=1000").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body["next_from"].is_null(), "more than one page");
    let entries = page.body["entries"].as_array().unwrap();
    entries
        .iter()
        .filter(|e| e["action"] == action && e["target"] == target)
        .count()
}

/// A draw `id` of four stripes with three purchases, made without faults.
async fn sold_draw(app: &TestApp, id: &str) {
    let draw = json!({"draw_id": id, "total_tickets": 40, "stripes": 4});
    app.create_draw(&draw).await;
    for (i, quantity) in [1, 2, 3].into_iter().enumerate() {
        let path = format!("/draws/{id}/purchases");
        let body = json!({"payment_id": format!("{id}-{i}"), "quantity": quantity});
        assert_eq!(app.post(&path, &body).await.status, StatusCode::CREATED);
    }
}

/// Every write of `operation`, up to four of them, fails after it committed (`kind`).
fn after_commit(kind: &str, operation: &str) -> Faults {
    let mut faults = Faults {
        operations: Some(vec![operation.into()]),
        at_most: Some(4),
        ..Faults::default()
    };
    match kind {
        "truncated" => faults.truncated_after = 1.0,
        _ => faults.error_after = 1.0,
    }
    faults
}

/// The first answer under the fault is `503 outcome_unknown` with `Retry-After`; the
/// repeats settle.
async fn unknown_then_settled(instance: &Router, path: &str, body: &str) -> Reply {
    let first = post_raw(instance, path, "application/json", body.to_owned()).await;
    assert_outcome_unknown(&first, path);
    settle(instance, path, body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failures_after_committing_a_close_or_its_winners_settle_into_one_of_each() {
    let cases = [
        ("truncated", "UpdateItem"),
        ("error", "UpdateItem"),
        ("truncated", "TransactWriteItems"),
        ("error", "TransactWriteItems"),
    ];
    for (n, (kind, operation)) in cases.into_iter().enumerate() {
        // A table per case, so that the table's invariants are the draw's.
        let app = spawn_app().await;
        let proxy = FaultProxy::start(&endpoint()).await;
        let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(20)).await;
        let id = format!("end-{n}");
        sold_draw(&app, &id).await;
        proxy.set(after_commit(kind, operation));
        let closed = unknown_then_settled(&instance, &format!("/draws/{id}/close"), "{}").await;
        assert_eq!(closed.status, StatusCode::OK, "{id}: {}", closed.body);
        let hit = |c: Counts| c.truncated_after + c.errors_after;
        let at_close = hit(proxy.counts());
        assert!(at_close > 0, "{id}: the close met no fault");
        assert_eq!(closed.body["eligible_count"], 6, "{id}: {}", closed.body);
        proxy.set(after_commit(kind, "TransactWriteItems"));
        let path = format!("/draws/{id}/winners");
        let drawn = unknown_then_settled(&instance, &path, &json!({"prizes": 2}).to_string()).await;
        assert!(drawn.status.is_success(), "{id}: {}", drawn.body);
        assert!(
            hit(proxy.counts()) > at_close,
            "{id}: the winners met no fault"
        );
        proxy.set(Faults::default());

        // Repeats on a clean instance answer what the faulty one settled on.
        let again = post_json(&app.router, &format!("/draws/{id}/close"), &json!({})).await;
        assert_eq!(again.status, StatusCode::OK, "{id}: {}", again.body);
        for field in ["status", "eligible_count", "eligible_digest", "frozen_at"] {
            assert_eq!(again.body[field], closed.body[field], "{id}: {field}");
        }
        let redrawn = post_json(&app.router, &path, &json!({"prizes": 2})).await;
        assert_eq!(redrawn.status, StatusCode::OK, "{id}: {}", redrawn.body);
        assert_eq!(redrawn.body, drawn.body, "{id}: the winners changed");
        let read = app.get(&path).await.body;
        assert_eq!(read["prizes"], drawn.body["prizes"], "{id}");
        assert_eq!(read["history"].as_array().map_or(0, Vec::len), 0, "{id}");
        let eligible = app.get(&format!("/draws/{id}/eligible")).await.body;
        assert_eq!(eligible["eligible_digest"], closed.body["eligible_digest"]);
        // J1: one entry for the close and one for the winners.
        let target = format!("draw/{id}");
        assert_eq!(journalled(&app, "draw_closed", &target).await, 1, "{id}");
        assert_eq!(journalled(&app, "winners_drawn", &target).await, 1, "{id}");
        // One pick per prize, nothing sold twice.
        let items = app.scan().await;
        assert_eq!(of_kind(&items, "pick").len(), 2, "{id}");
        assert_eq!(sold_tickets(&items, 40).len(), 3, "{id}");
    }
}

/// An instance whose every request, the drawing ones too, answers within `timeout`.
async fn hurried_instance(proxy: &FaultProxy, table: &str, timeout: Duration) -> Router {
    let mut state = tally::api::AppState::new(faulty_store(proxy, table).await);
    state.request_timeout = timeout;
    state.drawing_timeout = timeout;
    tally::api::router(state)
}

/// Sends `method path` while the endpoint is frozen: a `503` with `Retry-After` within the
/// timeout; once thawed, the repeat settles.
async fn frozen_then_settled(
    instance: &Router,
    proxy: &FaultProxy,
    method: Method,
    path: &str,
    body: &str,
) -> Reply {
    let held = proxy.counts().held;
    proxy.freeze();
    let started = Instant::now();
    let request = axum::http::Request::builder()
        .method(method.clone())
        .uri(path)
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body.to_owned()))
        .unwrap();
    let reply = crate::helpers::send(instance, request).await;
    let took = started.elapsed();
    assert_outcome_unknown(&reply, path);
    assert!(
        took < HURRY + Duration::from_secs(1),
        "{path}: took {took:?}"
    );
    assert!(
        proxy.counts().held > held,
        "{path}: DynamoDB was not called"
    );
    proxy.thaw().await;
    // The held request may have been a read that changed nothing: then the repeat
    // is the first to write, and answers 201.
    let settled = settle_request(instance, method, path, body).await;
    assert!(settled.status.is_success(), "{path}: {}", settled.body);
    settled
}

const HURRY: Duration = Duration::from_secs(2);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_endpoint_during_the_close_the_winners_or_the_list_is_a_503_in_time() {
    let app = spawn_app().await;
    sold_draw(&app, "ice").await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = hurried_instance(&proxy, app.store.table(), HURRY).await;
    let closed =
        frozen_then_settled(&instance, &proxy, Method::POST, "/draws/ice/close", "{}").await;
    assert_eq!(closed.body["status"], "closed", "{}", closed.body);
    let listed =
        frozen_then_settled(&instance, &proxy, Method::GET, "/draws/ice/eligible", "").await;
    assert_eq!(
        listed.body["eligible_digest"],
        closed.body["eligible_digest"]
    );
    let prizes = json!({"prizes": 2}).to_string();
    let drawn = frozen_then_settled(
        &instance,
        &proxy,
        Method::POST,
        "/draws/ice/winners",
        &prizes,
    )
    .await;
    assert_eq!(drawn.body["prizes"].as_array().map_or(0, Vec::len), 2);
    // The same answers on a clean instance, and one of each in the journal and the table.
    let again = post_json(&app.router, "/draws/ice/winners", &json!({"prizes": 2})).await;
    assert_eq!(again.body, drawn.body);
    assert_eq!(journalled(&app, "draw_closed", "draw/ice").await, 1);
    assert_eq!(journalled(&app, "winners_drawn", "draw/ice").await, 1);
    let items = app.scan().await;
    assert_eq!(of_kind(&items, "pick").len(), 2);
    assert_eq!(sold_tickets(&items, 40).len(), 3);
}
