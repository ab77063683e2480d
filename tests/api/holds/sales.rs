//! Holds beside the sale: counted toward the payer's cap, passed by lucky dips, ended with
//! the sale (H1, H3, H4).

use super::*;

#[tokio::test]
async fn live_holds_count_toward_the_payer_cap_and_ended_ones_are_given_back() {
    let app = HoldApp::spawn().await;
    app.draw(
        json!({"draw_id": "cap", "total_tickets": 100, "max_per_payer": 3, "hold_seconds": 30}),
    )
    .await;
    let held = app
        .post(
            "/draws/cap/holds",
            json!({"hold_id": "a1", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    // H4: 2 held + 2 more would pass the cap of 3, by hold or by purchase.
    let more = app
        .post(
            "/draws/cap/holds",
            json!({"hold_id": "a2", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(
        (more.code(), more.body["left"].as_u64()),
        ("payer_limit", Some(1))
    );
    let buy = app
        .post(
            "/draws/cap/purchases",
            json!({"payment_id": "a3", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(buy.code(), "payer_limit", "{}", buy.body);
    let unpaid = app
        .post("/draws/cap/holds", json!({"hold_id": "a4", "quantity": 1}))
        .await;
    assert_eq!(unpaid.code(), "invalid_body", "{}", unpaid.body);
    // Converting keeps the count; releasing gives it back.
    let paid = app
        .post(
            "/draws/cap/purchases",
            json!({"payment_id": "a5", "hold_id": "a1"}),
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.body);
    assert_eq!(paid.body["payer_id"], "ann");
    let one = app
        .post(
            "/draws/cap/holds",
            json!({"hold_id": "a6", "quantity": 1, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(one.status, StatusCode::CREATED, "{}", one.body);
    app.delete("/draws/cap/holds/a6").await;
    let again = app
        .post(
            "/draws/cap/holds",
            json!({"hold_id": "a7", "quantity": 1, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    // A hold that ended stops counting: the next purchase gives it back and goes through.
    app.advance(30);
    let after = app
        .post(
            "/draws/cap/purchases",
            json!({"payment_id": "a8", "quantity": 1, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(after.status, StatusCode::CREATED, "{}", after.body);
    let full = app
        .post(
            "/draws/cap/purchases",
            json!({"payment_id": "a9", "quantity": 1, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(full.code(), "payer_limit");
}

#[tokio::test]
async fn a_lucky_dip_passes_live_holds_and_sells_their_numbers_once_they_end() {
    let app = HoldApp::spawn().await;
    app.draw(json!({"draw_id": "s", "total_tickets": 40, "stripes": 1, "hold_seconds": 30, "max_per_purchase": 10}))
        .await;
    let held = app
        .post(
            "/draws/s/holds",
            json!({"hold_id": "h", "quantity": 10, "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    let held_numbers = tickets_of(&held);
    let mut sold = Vec::new();
    for i in 0..3 {
        let dip = app
            .post(
                "/draws/s/purchases",
                json!({"payment_id": format!("d{i}"), "quantity": 10}),
            )
            .await;
        assert_eq!(dip.status, StatusCode::CREATED, "{}", dip.body);
        sold.extend(tickets_of(&dip));
    }
    assert!(sold.iter().all(|n| !held_numbers.contains(n)), "{sold:?}");
    let out = app
        .post(
            "/draws/s/purchases",
            json!({"payment_id": "d3", "quantity": 1}),
        )
        .await;
    // The numbers left are held, not sold: the answer says so and when they may come back.
    assert_eq!(
        (
            out.code(),
            out.body["remaining"].as_u64(),
            out.body["held"].as_u64()
        ),
        ("tickets_held", Some(0), Some(10)),
        "{}",
        out.body
    );
    assert_eq!(out.body["first_hold_ends_at"], held.body["expires_at"]);
    app.advance(30);
    let back = app
        .post(
            "/draws/s/purchases",
            json!({"payment_id": "d4", "quantity": 10}),
        )
        .await;
    assert_eq!(back.status, StatusCode::CREATED, "{}", back.body);
    let mut again = tickets_of(&back);
    again.sort_unstable();
    let mut expected = held_numbers.clone();
    expected.sort_unstable();
    assert_eq!(again, expected);
    sold.extend(again);
    sold.sort_unstable();
    assert_eq!(sold, (1..=40).collect::<Vec<u64>>());
    let draw = app.get("/draws/s").await;
    assert_eq!(draw.body["sold"], 40, "{}", draw.body);
    let closed = app.post("/draws/s/close", json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    assert_eq!(
        closed.body["eligible_count"].as_u64(),
        Some(40),
        "{}",
        closed.body
    );
}

#[tokio::test]
async fn a_hold_ends_with_the_sale() {
    let app = HoldApp::spawn().await;
    app.draw(json!({"draw_id": "end", "total_tickets": 20}))
        .await;
    let held = app
        .post(
            "/draws/end/holds",
            json!({"hold_id": "e1", "numbers": [3], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    assert_eq!(app.get("/draws/end/holds/e1").await.body["status"], "held");
    let closed = app.post("/draws/end/close", json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    assert_eq!(closed.body["eligible_count"], 0, "{}", closed.body);
    // The close ended the hold: nothing counts as held any more, in the close's answer
    // (the one the operator keeps), the draw, its published facts or its grid.
    assert_eq!(closed.body["held"], 0, "{}", closed.body);
    assert_eq!(app.get("/draws/end").await.body["held"], 0);
    for path in ["/draws/end/facts", "/draws/end/availability"] {
        let read = app.get(path).await.body;
        assert_eq!(read["held"], 0, "{path}: {read}");
    }
    // Long before its deadline, the hold reads as ended: it can no longer be paid for.
    let read = app.get("/draws/end/holds/e1").await;
    assert_eq!(read.body["status"], "expired", "{}", read.body);
    let repeat = app
        .post(
            "/draws/end/holds",
            json!({"hold_id": "e1", "numbers": [3], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(
        (repeat.status, repeat.body["status"].as_str()),
        (StatusCode::OK, Some("expired")),
        "{}",
        repeat.body
    );
    let paid = app
        .post(
            "/draws/end/purchases",
            json!({"payment_id": "p", "hold_id": "e1"}),
        )
        .await;
    assert_eq!(paid.code(), "hold_expired", "{}", paid.body);
    let released = app.delete("/draws/end/holds/e1").await;
    assert_eq!(
        (released.status, released.body["status"].as_str()),
        (StatusCode::OK, Some("expired")),
        "{}",
        released.body
    );
    let late = app
        .post(
            "/draws/end/holds",
            json!({"hold_id": "e2", "quantity": 1, "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(late.code(), "draw_closed", "{}", late.body);
}
