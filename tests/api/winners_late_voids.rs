//! The winners answer stays bounded however many tickets are voided after the freeze: it
//! counts them all (`late_voided`) and lists only the picked ones (`late_voids`), which
//! flag their prizes.

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::{spawn_app, tickets_of};
use crate::winners::{late_void_tickets, picked_among};

#[tokio::test]
async fn the_winners_list_only_picked_tickets_voided_late_and_count_all() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "many", "total_tickets": 200, "max_per_purchase": 10});
    app.create_draw(&draw).await;
    for i in 0..15 {
        let body = json!({"payment_id": format!("p{i}"), "quantity": 10});
        let bought = app.post("/draws/many/purchases", &body).await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    let closed = app.post("/draws/many/close", &json!({"prizes": 1})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let drawn = app.post("/draws/many/winners", &json!({})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let winner = drawn.body["prizes"][0]["ticket"].as_u64().unwrap();
    let holder = drawn.body["prizes"][0]["payment_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // After the freeze: ten purchases that won nothing, then the winner's.
    let losers = (0..15)
        .map(|i| format!("p{i}"))
        .filter(|p| *p != holder)
        .take(10);
    let mut voided = Vec::new();
    for payment in losers.chain([holder.clone()]) {
        let path = format!("/draws/many/purchases/{payment}/void");
        let void = app.post(&path, &json!({"reason": "refund"})).await;
        assert_eq!(void.status, StatusCode::OK, "{}", void.body);
        voided.extend(tickets_of(&void));
    }
    assert_eq!(voided.len(), 110);

    let read = app.get("/draws/many/winners").await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    let proof = &read.body["proof"];
    assert_eq!(proof["late_voided"], 110);
    assert_eq!(late_void_tickets(&read.body), [winner]);
    assert_eq!(proof["late_voids"][0]["payment_id"], holder.as_str());
    assert_eq!(read.body["prizes"][0]["voided"], true);

    // The redraw's winner is flagged if it too was voided late; the replaced one stays
    // listed, as a pick.
    let reason = json!({"reason": "refunded after the close"});
    let redrawn = app.post("/draws/many/winners/1/redraw", &reason).await;
    assert_eq!(redrawn.status, StatusCode::CREATED, "{}", redrawn.body);
    let replacement = redrawn.body["prizes"][0]["ticket"].as_u64().unwrap();
    let listed = late_void_tickets(&redrawn.body);
    assert!(listed.contains(&winner), "{listed:?}");
    assert_eq!(listed, picked_among(&redrawn.body, &voided));
    assert_eq!(
        redrawn.body["prizes"][0]["voided"],
        voided.contains(&replacement)
    );
    assert_eq!(redrawn.body["proof"]["late_voided"], 110);
    assert_eq!(app.get("/draws/many/winners").await.body, redrawn.body);
}
