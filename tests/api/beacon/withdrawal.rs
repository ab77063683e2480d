//! The beacon is fixed before the first sale or hold commits: buyers trusted the network
//! the draw declared, so it is never withdrawn or switched after that, also in a draw
//! whose item does not record it; before it, the operator changes it freely. A process
//! writes the record once, before its first transaction.

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::Method;
use jiff::{SignedDuration, Timestamp};
use tally_domain::time::rfc3339_millis;
use tally_testkit::fault_proxy::{FaultProxy, Recorded};
use tally_testkit::http::settle_request;

use super::*;
use crate::faults::faulty_instance;
use crate::helpers::{Reply, endpoint, post_json, spawn_app};

/// `PATCH /draws/{id}` with `beacon`.
async fn set_beacon(app: &TestApp, id: &str, beacon: Value) -> Reply {
    app.patch(&format!("/draws/{id}"), &json!({ "beacon": beacon }))
        .await
}

/// A draw of `id` declaring quicknet.
async fn draw_on_quicknet(app: &TestApp, id: &str) {
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": id, "total_tickets": 50, "beacon": {"network": "quicknet"}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
}

/// Neither a withdrawal nor a switch of `id`'s beacon, quicknet, goes through; setting
/// quicknet again changes nothing.
async fn assert_fixed_on_quicknet(app: &TestApp, id: &str) {
    for other in [json!(null), json!({"network": "test"})] {
        let refused = set_beacon(app, id, other.clone()).await;
        assert_eq!(
            refused.status,
            StatusCode::CONFLICT,
            "{other}: {}",
            refused.body
        );
        assert_eq!(refused.code(), "beacon_fixed", "{}", refused.body);
    }
    let same = set_beacon(app, id, json!({"network": "quicknet"})).await;
    assert_eq!(same.status, StatusCode::OK, "{}", same.body);
    let read = app.get(&format!("/draws/{id}")).await.body;
    assert_eq!(read["beacon"]["network"], "quicknet", "{read}");
}

#[tokio::test]
async fn a_beacon_changes_freely_until_a_ticket_is_sold_and_never_after() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    draw_on_quicknet(app, "sells").await;
    // Before any sale the operator withdraws, declares and switches at will.
    for beacon in [
        json!({"network": "test"}),
        json!(null),
        json!({"network": "quicknet"}),
    ] {
        let changed = set_beacon(app, "sells", beacon.clone()).await;
        assert_eq!(changed.status, StatusCode::OK, "{beacon}: {}", changed.body);
        assert_eq!(changed.body["beacon"]["network"], beacon["network"]);
    }
    let bought = app
        .post(
            "/draws/sells/purchases",
            &json!({"payment_id": "p1", "quantity": 2}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    assert_fixed_on_quicknet(app, "sells").await;
    // The close fixes the round of the beacon the buyers trusted.
    let closed = app.post("/draws/sells/close", &json!({})).await.body;
    assert_eq!(closed["beacon"]["network"], "quicknet", "{closed}");
    assert!(closed["beacon"]["round"].is_u64(), "{closed}");
}

#[tokio::test]
async fn a_hold_fixes_the_beacon_as_a_sale_does() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    draw_on_quicknet(app, "holds").await;
    let held = app
        .post(
            "/draws/holds/holds",
            &json!({"hold_id": "basket", "quantity": 1, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    assert_fixed_on_quicknet(app, "holds").await;
}

#[tokio::test]
async fn a_draw_without_a_beacon_may_still_declare_one_after_a_sale_but_keeps_it() {
    let app = spawn_app().await;
    let created = app
        .post("/draws", &json!({"draw_id": "late", "total_tickets": 50}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let postal = json!({"payment_id": "by-post", "quantity": 1, "payer_id": "bo",
                        "channel": "postal"});
    let entered = app.post("/draws/late/purchases", &postal).await;
    assert_eq!(entered.status, StatusCode::CREATED, "{}", entered.body);
    // Declaring a beacon only takes the winners out of an insider's reach.
    let declared = set_beacon(&app, "late", json!({"network": "quicknet"})).await;
    assert_eq!(declared.status, StatusCode::OK, "{}", declared.body);
    let withdrawn = set_beacon(&app, "late", json!(null)).await;
    assert_eq!(withdrawn.code(), "beacon_fixed", "{}", withdrawn.body);
}

#[tokio::test]
async fn a_draw_whose_item_does_not_record_its_sales_keeps_its_beacon_too() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    draw_on_quicknet(app, "older").await;
    let bought = app
        .post(
            "/draws/older/purchases",
            &json!({"payment_id": "p1", "quantity": 1}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    // As an item written before draws recorded their first sale.
    app.store
        .client()
        .update_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S("DRAW#older".into()))
        .update_expression("REMOVE beacon_fixed")
        .condition_expression("beacon_fixed = :yes")
        .expression_attribute_values(":yes", AttributeValue::Bool(true))
        .send()
        .await
        .unwrap();
    assert_fixed_on_quicknet(app, "older").await;
}

/// Whether `request` writes the draw's `beacon_fixed`.
fn fixes_beacon(request: &Recorded) -> bool {
    request.operation == "UpdateItem"
        && request.body["ExpressionAttributeNames"]
            .as_object()
            .is_some_and(|names| names.values().any(|n| n == "beacon_fixed"))
}

#[tokio::test]
async fn a_process_fixes_the_beacon_before_its_first_sale_commits_and_once() {
    let app = spawn_app().await;
    draw_on_quicknet(&app, "first").await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let router = faulty_instance(&proxy, app.store.table(), Duration::from_secs(60)).await;
    let buy = |payment: &str| json!({"payment_id": payment, "quantity": 1});
    proxy.record();
    let bought = post_json(&router, "/draws/first/purchases", &buy("p1")).await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let sent = proxy.recorded();
    let fixed = sent.iter().position(fixes_beacon);
    let committed = sent
        .iter()
        .position(|r| r.operation == "TransactWriteItems");
    assert!(
        matches!((fixed, committed), (Some(f), Some(c)) if f < c),
        "{:?}",
        sent.iter().map(|r| &r.operation).collect::<Vec<_>>()
    );
    // The process knows it now: its next sale sends no such write.
    proxy.record();
    let again = post_json(&router, "/draws/first/purchases", &buy("p2")).await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    assert!(!proxy.recorded().iter().any(fixes_beacon));
}

/// A draw without a beacon has none to fix: its sales send no write for it.
#[tokio::test]
async fn a_draw_without_a_beacon_costs_its_sales_no_write() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "plain", "total_tickets": 100});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let router = faulty_instance(&proxy, app.store.table(), Duration::from_secs(60)).await;
    proxy.record();
    let buy = json!({"payment_id": "p1", "quantity": 1});
    let bought = post_json(&router, "/draws/plain/purchases", &buy).await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let sent = proxy.recorded();
    assert!(sent.iter().any(|r| r.operation == "TransactWriteItems"));
    assert!(!sent.iter().any(fixes_beacon));
}

/// A process that read a draw before it had a beacon knows none, and fixes none before
/// its sales: a beacon declared while the draw may sell is fixed by its declaration. One
/// declared on a draw opening later than a minute from now stays free until a sale.
#[tokio::test]
async fn a_beacon_declared_while_the_draw_sells_is_fixed_at_once() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    app.create_draw(&json!({"draw_id": "stale", "total_tickets": 50}))
        .await;
    // Another process reads the draw through a hold it then releases: nothing sold or held.
    let proxy = FaultProxy::start(&endpoint()).await;
    let other = faulty_instance(&proxy, app.store.table(), Duration::from_secs(60)).await;
    let hold = json!({"hold_id": "first", "quantity": 1, "payer_id": "ann"});
    let held = post_json(&other, "/draws/stale/holds", &hold).await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    let released = settle_request(&other, Method::DELETE, "/draws/stale/holds/first", "").await;
    assert_eq!(released.body["status"], "released", "{}", released.body);
    let declared = set_beacon(app, "stale", json!({"network": "quicknet"})).await;
    assert_eq!(declared.status, StatusCode::OK, "{}", declared.body);
    // That process holds again, knowing no beacon; the hold ends; the beacon stays.
    let again = json!({"hold_id": "second", "quantity": 1, "payer_id": "ann"});
    let held = post_json(&other, "/draws/stale/holds", &again).await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    let released = settle_request(&other, Method::DELETE, "/draws/stale/holds/second", "").await;
    assert_eq!(released.body["status"], "released", "{}", released.body);
    assert_fixed_on_quicknet(app, "stale").await;

    // A draw that opens in an hour: declared, switched and withdrawn at will.
    let opens_at = Timestamp::now() + SignedDuration::from_hours(1);
    let later = json!({"draw_id": "later", "total_tickets": 50,
        "opens_at": rfc3339_millis(opens_at)});
    app.create_draw(&later).await;
    for beacon in [
        json!({"network": "quicknet"}),
        json!({"network": "test"}),
        json!(null),
    ] {
        let changed = set_beacon(app, "later", beacon.clone()).await;
        assert_eq!(changed.status, StatusCode::OK, "{beacon}: {}", changed.body);
    }
}

/// A process that read a draw more than a minute before it opens, without a beacon, may
/// miss one declared before the opening, which that declaration does not fix: it fixes
/// the beacon before its first sale all the same.
#[tokio::test]
async fn a_process_that_read_the_draw_before_it_could_sell_fixes_a_beacon_it_missed() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    let now = Timestamp::now();
    world.set_clock(now.as_millisecond());
    let opens_at = now + SignedDuration::from_hours(1);
    let draw = json!({"draw_id": "early", "total_tickets": 50,
        "opens_at": rfc3339_millis(opens_at)});
    app.create_draw(&draw).await;
    // A buyer's page makes this process read the draw an hour before it opens.
    let seen = app.get("/draws/early/availability").await;
    assert_eq!(seen.status, StatusCode::OK, "{}", seen.body);
    // The operator, through another process, declares a beacon: not fixed yet.
    let other = api::router(AppState::new(app.store.clone()));
    let beacon = r#"{"beacon": {"network": "quicknet"}}"#;
    let declared = settle_request(&other, Method::PATCH, "/draws/early", beacon).await;
    assert_eq!(declared.status, StatusCode::OK, "{}", declared.body);
    let id = DrawId::parse("early").unwrap();
    let fixed = || async { app.store.get_draw(&id).await.unwrap().unwrap().beacon_fixed };
    assert!(!fixed().await);
    // The draw opens; the first process sells, knowing no beacon.
    world.set_clock((opens_at + SignedDuration::from_secs(1)).as_millisecond());
    let buy = json!({"payment_id": "p1", "quantity": 1});
    let bought = app.post("/draws/early/purchases", &buy).await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    // What the fix changes: the sale itself fixed the beacon. (A withdrawal after it is
    // refused either way, as it counts the sales first.)
    assert!(
        fixed().await,
        "a sale committed while the beacon could still change"
    );
    let withdrawn =
        settle_request(&other, Method::PATCH, "/draws/early", r#"{"beacon": null}"#).await;
    assert_eq!(withdrawn.body["code"], "beacon_fixed", "{}", withdrawn.body);
}
