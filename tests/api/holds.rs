//! Holds: numbers kept for one buyer while they pay, decided by each hold's deadline
//! against the writer's clock. A hold converts once, only while it lives; released and
//! expired numbers go back on sale; live holds count toward the payer's cap (H1–H4).

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::tickets_of;
use crate::hold_app::HoldApp;

#[tokio::test]
async fn a_hold_keeps_its_numbers_for_its_buyer_and_converts_once() {
    let app = HoldApp::spawn().await;
    app.draw(json!({"draw_id": "h", "total_tickets": 100, "hold_seconds": 60}))
        .await;
    let held = app
        .post(
            "/draws/h/holds",
            json!({"hold_id": "b1", "numbers": [77, 7], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    assert_eq!(tickets_of(&held), vec![7, 77]);
    assert_eq!(held.body["status"], "held");
    let created =
        tally_domain::time::parse_rfc3339(held.body["created_at"].as_str().unwrap()).unwrap();
    let expires =
        tally_domain::time::parse_rfc3339(held.body["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!((expires - created).as_secs(), 60);
    // Idempotent by hold id: the same body answers the hold, another body is refused.
    let again = app
        .post(
            "/draws/h/holds",
            json!({"hold_id": "b1", "numbers": [7, 77], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(
        (again.status, tickets_of(&again)),
        (StatusCode::OK, vec![7, 77])
    );
    let other = app
        .post(
            "/draws/h/holds",
            json!({"hold_id": "b1", "numbers": [7], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(other.code(), "idempotency_conflict");
    // H1: a held number is neither held again nor sold to anyone else.
    let chooser = app
        .post(
            "/draws/h/purchases",
            json!({"payment_id": "c1", "numbers": [77, 78]}),
        )
        .await;
    assert_eq!(chooser.code(), "numbers_taken", "{}", chooser.body);
    assert_eq!(chooser.body["numbers"], json!([77]));
    let rival = app
        .post(
            "/draws/h/holds",
            json!({"hold_id": "b2", "numbers": [7], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(rival.code(), "numbers_taken");
    let grid = app.get("/draws/h/availability").await;
    assert_eq!(
        (grid.body["held"].as_u64(), grid.body["free"].as_u64()),
        (Some(2), Some(98))
    );
    // H2: the hold converts into exactly its numbers, once.
    let paid = app
        .post(
            "/draws/h/purchases",
            json!({"payment_id": "p1", "hold_id": "b1"}),
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.body);
    assert_eq!(tickets_of(&paid), vec![7, 77]);
    assert_eq!(paid.body["chosen"], true);
    let replay = app
        .post(
            "/draws/h/purchases",
            json!({"payment_id": "p1", "hold_id": "b1"}),
        )
        .await;
    assert_eq!(
        (replay.status, tickets_of(&replay)),
        (StatusCode::OK, vec![7, 77])
    );
    let second = app
        .post(
            "/draws/h/purchases",
            json!({"payment_id": "p2", "hold_id": "b1"}),
        )
        .await;
    assert_eq!(second.code(), "hold_used", "{}", second.body);
    let hold = app.get("/draws/h/holds/b1").await;
    assert_eq!(
        (
            hold.body["status"].as_str(),
            hold.body["payment_id"].as_str()
        ),
        (Some("converted"), Some("p1"))
    );
    let ticket = app.get("/draws/h/tickets/77").await;
    assert_eq!(ticket.body["payment_id"], "p1");
    let grid = app.get("/draws/h/availability").await;
    assert_eq!(
        (grid.body["held"].as_u64(), grid.body["sold"].as_u64()),
        (Some(0), Some(2))
    );
    // Even long after the deadline, the payment's repeat answers its purchase.
    app.advance(3_600);
    let late = app
        .post(
            "/draws/h/purchases",
            json!({"payment_id": "p1", "hold_id": "b1"}),
        )
        .await;
    assert_eq!(
        (late.status, tickets_of(&late)),
        (StatusCode::OK, vec![7, 77])
    );
    let missing = app
        .post(
            "/draws/h/purchases",
            json!({"payment_id": "p3", "hold_id": "nope"}),
        )
        .await;
    assert_eq!(missing.code(), "hold_not_found");
    let mixed = app
        .post(
            "/draws/h/purchases",
            json!({"payment_id": "p4", "hold_id": "b1", "quantity": 2}),
        )
        .await;
    assert_eq!(mixed.code(), "invalid_hold_id");
}

#[tokio::test]
async fn an_expired_hold_cannot_be_paid_and_its_numbers_go_back_on_sale() {
    let app = HoldApp::spawn().await;
    app.draw(json!({"draw_id": "x", "total_tickets": 50, "hold_seconds": 30, "stripes": 2}))
        .await;
    let chosen = app
        .post(
            "/draws/x/holds",
            json!({"hold_id": "c", "numbers": [5], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(chosen.status, StatusCode::CREATED, "{}", chosen.body);
    let dip = app
        .post(
            "/draws/x/holds",
            json!({"hold_id": "d", "quantity": 3, "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(dip.status, StatusCode::CREATED, "{}", dip.body);
    assert_eq!(dip.body["chosen"], false);
    let dipped = tickets_of(&dip);
    assert!(!dipped.contains(&5), "{dipped:?}");
    app.advance(30);
    // H2: not after the deadline, decided by the writer's clock.
    let late = app
        .post(
            "/draws/x/purchases",
            json!({"payment_id": "late", "hold_id": "c"}),
        )
        .await;
    assert_eq!(late.code(), "hold_expired", "{}", late.body);
    assert_eq!(app.get("/draws/x/holds/d").await.body["status"], "expired");
    // H3: a chooser gets the expired numbers at once.
    let mut wanted = dipped.clone();
    wanted.push(5);
    wanted.sort_unstable();
    let bought = app
        .post(
            "/draws/x/purchases",
            json!({"payment_id": "buy", "numbers": wanted}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let grid = app.get("/draws/x/availability").await;
    assert_eq!(
        (
            grid.body["held"].as_u64(),
            grid.body["sold"].as_u64(),
            grid.body["free"].as_u64()
        ),
        (Some(0), Some(4), Some(46))
    );
    let dead = app
        .post(
            "/draws/x/purchases",
            json!({"payment_id": "dead", "hold_id": "d"}),
        )
        .await;
    assert_eq!(dead.code(), "hold_expired");
}

#[tokio::test]
async fn a_released_hold_gives_its_numbers_back_at_once_and_releasing_again_is_harmless() {
    let app = HoldApp::spawn().await;
    app.draw(json!({"draw_id": "r", "total_tickets": 30})).await;
    let held = app
        .post(
            "/draws/r/holds",
            json!({"hold_id": "r1", "numbers": [9, 10], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    let released = app.delete("/draws/r/holds/r1").await;
    assert_eq!(
        (released.status, released.body["status"].as_str()),
        (StatusCode::OK, Some("released"))
    );
    let again = app.delete("/draws/r/holds/r1").await;
    assert_eq!(again.body["status"], "released");
    assert_eq!(
        app.delete("/draws/r/holds/none").await.code(),
        "hold_not_found"
    );
    let bought = app
        .post(
            "/draws/r/purchases",
            json!({"payment_id": "b", "numbers": [9]}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let rehold = app
        .post(
            "/draws/r/holds",
            json!({"hold_id": "r2", "numbers": [10], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(rehold.status, StatusCode::CREATED, "{}", rehold.body);
    let paid = app
        .post(
            "/draws/r/purchases",
            json!({"payment_id": "p", "hold_id": "r1"}),
        )
        .await;
    assert_eq!(paid.code(), "hold_expired");
}

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
