//! Winners drawn while the index of unfinished bundles lags: a pick that lands on a ticket
//! still waiting for its item answers `503` with `Retry-After`, records nothing, and a
//! repeat once the index shows the bundle draws the winners.

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::{TestApp, of_kind, spawn_app, tickets_of};
use crate::winners::winning_tickets;

/// Sets `attribute` of the item `pk`.
async fn set(app: &TestApp, pk: &str, attribute: &str, value: &str) {
    app.store
        .client()
        .update_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S(pk.into()))
        .update_expression("SET #a = :v")
        .expression_attribute_names("#a", attribute)
        .expression_attribute_values(":v", AttributeValue::S(value.into()))
        .send()
        .await
        .unwrap();
}

/// What a bundle cut short after its commit leaves, seen through an index that does not
/// list it yet: purchase `payment` of draw `lag` waits for the item of ticket `number`,
/// and its marker is there without its index keys.
async fn cut_short_unlisted(app: &TestApp, payment: &str, number: u64) {
    let client = app.store.client();
    client
        .delete_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S(format!("DRAW#lag#TICKET#{number}")))
        .send()
        .await
        .unwrap();
    set(
        app,
        &format!("DRAW#lag#PURCHASE#{payment}"),
        "unfinished",
        "tickets",
    )
    .await;
    let marker = format!("DRAW#lag#UNFINISHED#{payment}");
    set(app, &marker, "kind", "unfinished_bundle").await;
}

#[tokio::test]
async fn a_pick_on_a_ticket_whose_bundle_the_index_does_not_list_yet_answers_503_and_a_repeat_draws()
 {
    let app = spawn_app().await;
    app.create_draw(&json!({"draw_id": "lag", "total_tickets": 10}))
        .await;
    let mut sold = Vec::new();
    for (payment, quantity) in [("a", 3), ("b", 2)] {
        let body = json!({"payment_id": payment, "quantity": quantity});
        let bought = app.post("/draws/lag/purchases", &body).await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
        sold.push(tickets_of(&bought));
    }
    let waiting = sold[1][0];
    cut_short_unlisted(&app, "b", waiting).await;
    let closed = app.post("/draws/lag/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    assert_eq!(closed.body["eligible_count"], 5);

    // Every eligible ticket is picked, so the one without its item is too.
    let body = json!({"prizes": 5});
    let lagging = app.post("/draws/lag/winners", &body).await;
    assert_eq!(
        lagging.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        lagging.body
    );
    assert!(lagging.headers.contains_key("retry-after"));
    assert_eq!(
        app.get("/draws/lag/winners").await.code(),
        "winners_not_drawn"
    );
    assert!(of_kind(&app.scan().await, "pick").is_empty());

    // The index shows the bundle: the repeat finishes it and draws.
    let marker = "DRAW#lag#UNFINISHED#b";
    set(&app, marker, "list_pk", "DRAW#lag#UNFINISHED").await;
    set(&app, marker, "list_sk", "b").await;
    let drawn = app.post("/draws/lag/winners", &body).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let mut won = winning_tickets(&drawn);
    won.sort();
    let mut all: Vec<u64> = sold.concat();
    all.sort();
    assert_eq!(won, all);
    let prize = &drawn.body["prizes"].as_array().unwrap();
    let holder = prize.iter().find(|p| p["ticket"] == waiting).unwrap();
    assert_eq!(holder["payment_id"], "b");
    let items = app.scan().await;
    assert_eq!(of_kind(&items, "pick").len(), 5);
    assert_eq!(of_kind(&items, "ticket").len(), 5);
}
