//! The SAM-style event files in `events/`, fed through the Lambda request conversion and
//! the ticket function's router, in the order a client would send them.

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use tally::api::{self, AppState};

use crate::helpers::{fresh_store, post_json, send, tickets_of};

pub async fn invoke(router: &axum::Router, file: &str) -> crate::helpers::Reply {
    let path = format!("{}/events/{file}", env!("CARGO_MANIFEST_DIR"));
    let raw = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let request = lambda_http::request::from_str(&raw).unwrap_or_else(|e| panic!("{file}: {e}"));
    let (parts, body) = request.into_parts();
    let request = axum::http::Request::from_parts(parts, axum::body::Body::from(body.to_vec()));
    send(router, request).await
}

#[tokio::test]
async fn every_ticket_event_file_runs_through_the_ticket_function() {
    let (store, _table) = fresh_store(None).await;
    let router = api::tickets_router(AppState::new(store.clone()));
    let created = invoke(&router, "create-draw.json").await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(created.body["max_per_payer"], 10);
    let beacon = invoke(&router, "patch-draw.json").await;
    assert_eq!(
        beacon.body["beacon"]["network"], "quicknet",
        "{}",
        beacon.body
    );
    // Declared on a draw that sells, the beacon is fixed at once.
    let withdrawn = crate::helpers::patch(
        &router,
        "/draws/summer-2026",
        &serde_json::json!({"beacon": null}),
    )
    .await;
    assert_eq!(withdrawn.code(), "beacon_fixed", "{}", withdrawn.body);
    // A live quicknet round cannot be signed here: the draw goes on without a beacon,
    // taken off its item by hand (tests/api/beacon/ draws with one).
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key("pk", AttributeValue::S("DRAW#summer-2026".into()))
        .update_expression("REMOVE beacon, beacon_fixed")
        .send()
        .await
        .unwrap();
    assert_eq!(
        invoke(&router, "get-draw.json").await.status,
        StatusCode::OK
    );
    let purchase = invoke(&router, "purchase.json").await;
    assert_eq!(purchase.status, StatusCode::CREATED);
    let replay = invoke(&router, "purchase.json").await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(tickets_of(&replay), tickets_of(&purchase));
    assert_eq!(
        invoke(&router, "get-purchase.json").await.status,
        StatusCode::OK
    );
    // The event asks for ticket 17: sold or not, the answer matches the purchase.
    let expected = if tickets_of(&purchase).contains(&17) {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    assert_eq!(invoke(&router, "get-ticket.json").await.status, expected);
    let mine = invoke(&router, "payer-purchases.json").await;
    assert_eq!(mine.status, StatusCode::OK, "{}", mine.body);
    assert_eq!(mine.body["purchases"][0]["payment_id"], "PAYID-123");
    let voided = invoke(&router, "void-purchase.json").await;
    assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    assert_eq!(voided.body["status"], "void");
    // Another buyer, so that a prize can be drawn and redrawn.
    let other = post_json(
        &router,
        "/draws/summer-2026/purchases",
        &serde_json::json!({"payment_id": "PAYID-124", "quantity": 5, "payer_id": "customer-7"}),
    )
    .await;
    assert_eq!(other.status, StatusCode::CREATED);
    // Numbers a buyer chose, unless the lucky dips took one of them; then the grid.
    let chosen = invoke(&router, "choose.json").await;
    let chose = chosen.status == StatusCode::CREATED;
    assert!(chose || chosen.code() == "numbers_taken", "{}", chosen.body);
    let grid = invoke(&router, "get-availability.json").await;
    assert_eq!(grid.status, StatusCode::OK, "{}", grid.body);
    let sold = 3 + 5 + if chose { 3 } else { 0 };
    assert_eq!(
        (grid.body["sold"].as_u64(), grid.body["free"].as_u64()),
        (Some(sold), Some(100 - sold))
    );
    // The public facts count the same: the voided purchase's 3 tickets are out of the
    // draw, the chosen ones online.
    let facts = invoke(&router, "get-facts.json").await;
    assert_eq!(facts.status, StatusCode::OK, "{}", facts.body);
    assert_eq!(facts.body["sold"].as_u64(), Some(sold), "{}", facts.body);
    assert_eq!(facts.body["remaining"].as_u64(), Some(100 - sold));
    assert_eq!(facts.body["entries"]["online"].as_u64(), Some(sold - 3));
    // A basket hold of two numbers, paid for; releasing it then answers it as converted.
    let held = invoke(&router, "hold.json").await;
    let holds = held.status == StatusCode::CREATED;
    assert!(holds || held.code() == "numbers_taken", "{}", held.body);
    let mut paid_hold = Vec::new();
    if holds {
        let paid = invoke(&router, "convert-hold.json").await;
        assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.body);
        paid_hold = tickets_of(&paid);
        assert_eq!(paid_hold, vec![8, 88]);
        let released = invoke(&router, "release-hold.json").await;
        assert_eq!(released.body["status"], "converted", "{}", released.body);
    }
    let closed = invoke(&router, "close-draw.json").await;
    assert_eq!(closed.status, StatusCode::OK);
    assert_eq!(closed.body["status"], "closed");
    let listed = invoke(&router, "list-draws.json").await;
    assert_eq!(
        listed.body["draws"][0]["draw_id"], "summer-2026",
        "{}",
        listed.body
    );
    let drawn = invoke(&router, "draw-winners.json").await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    // The first purchase was voided: a winner holds another buyer's, the chosen or the
    // paid hold's numbers.
    let mut eligible = tickets_of(&other);
    if chose {
        eligible.extend(tickets_of(&chosen));
    }
    eligible.extend(paid_hold);
    let won = drawn.body["prizes"][0]["ticket"].as_u64().unwrap();
    assert!(eligible.contains(&won), "{won} is not eligible");
    let redrawn = invoke(&router, "redraw.json").await;
    assert_eq!(redrawn.status, StatusCode::CREATED, "{}", redrawn.body);
    assert_eq!(invoke(&router, "get-winners.json").await.body, redrawn.body);
    let eligible = invoke(&router, "get-eligible.json").await;
    assert_eq!(
        eligible.body["eligible_count"],
        5 + if chose { 3 } else { 0 } + if holds { 2 } else { 0 },
        "{}",
        eligible.body
    );
    // The draw's instant wins, with the map and its key now that the winners are drawn.
    let instant = invoke(&router, "get-instant-wins.json").await;
    assert_eq!(instant.status, StatusCode::OK, "{}", instant.body);
    assert_eq!(
        instant.body["proof"]["map"].as_array().map(Vec::len),
        Some(5),
        "{}",
        instant.body
    );
}

#[tokio::test]
async fn every_order_event_file_runs_through_the_order_function() {
    let (store, _table) = fresh_store(None).await;
    let router = api::orders_router(AppState::new(store));
    assert_eq!(
        invoke(&router, "put-series.json").await.status,
        StatusCode::CREATED
    );
    assert_eq!(
        invoke(&router, "get-series.json").await.status,
        StatusCode::OK
    );
    let order = invoke(&router, "create-order.json").await;
    assert_eq!(order.status, StatusCode::CREATED);
    assert_eq!(
        invoke(&router, "create-order.json").await.status,
        StatusCode::OK
    );
    let batch = invoke(&router, "create-order-batch.json").await;
    assert_eq!(batch.status, StatusCode::OK);
    let statuses: Vec<&str> = batch.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["created", "created", "rejected", "existing"]);
    assert_eq!(
        invoke(&router, "get-order-by-ref.json").await.body,
        order.body
    );
    // The events name the first number of 2026: found when the test runs in 2026.
    let in_2026 = order.body["order_number"] == "UABC26000001";
    let expected = if in_2026 {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    assert_eq!(invoke(&router, "get-order.json").await.status, expected);
    assert_eq!(
        invoke(&router, "get-series-order.json").await.status,
        expected
    );
    let voided = invoke(&router, "void-order.json").await;
    assert_eq!(voided.status, expected, "{}", voided.body);
    // The counter of the current period moves to 100: the next order is number 100.
    let moved = invoke(&router, "patch-series.json").await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    assert_eq!(moved.body["last_counter"], 99);
    let listed = invoke(&router, "list-orders.json").await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let audit = invoke(&router, "audit-series.json").await;
    assert_eq!(audit.status, StatusCode::OK, "{}", audit.body);
    if in_2026 {
        assert_eq!(listed.body["orders"].as_array().unwrap().len(), 3);
        assert_eq!(listed.body["orders"][0]["status"], "void");
        assert_eq!(listed.body["moves"][0]["to"], 99);
        assert_eq!(
            (
                audit.body["voided"].as_u64(),
                audit.body["chain"]["intact"].as_bool()
            ),
            (Some(1), Some(true))
        );
    }
}
