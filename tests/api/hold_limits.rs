//! Holds that cannot be abused (H5): every hold names its payer; a payer's live holds take
//! at most `max_held_per_payer` numbers and all live holds at most `max_held_percent` of
//! the draw, counted in the transaction that makes each hold and given back when it ends.
//! Held numbers are never answered as sold.

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::tickets_of;
use crate::holds::HoldApp;

#[tokio::test]
async fn a_payers_live_holds_take_at_most_max_held_per_payer_numbers_in_any_draw() {
    let app = HoldApp::spawn().await;
    // No cap per payer on purchases: the cap on holds stands alone, one purchase's worth.
    app.draw(
        json!({"draw_id": "pp", "total_tickets": 1_000, "max_per_purchase": 5,
                    "hold_seconds": 60}),
    )
    .await;
    let draw = app.get("/draws/pp").await;
    assert_eq!(draw.body["max_held_per_payer"], 5, "{}", draw.body);
    let hold = |id: &str, quantity: u64, payer: &str| json!({"hold_id": id, "quantity": quantity, "payer_id": payer});
    let first = app.post("/draws/pp/holds", hold("a", 3, "ann")).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    // H5: 3 held + 3 more would pass 5, whatever the draw has free.
    let more = app.post("/draws/pp/holds", hold("b", 3, "ann")).await;
    assert_eq!(
        (more.code(), more.body["left"].as_u64()),
        ("payer_hold_limit", Some(2)),
        "{}",
        more.body
    );
    // Refused without a write: the same body is refused the same way, nothing held.
    assert_eq!(
        app.post("/draws/pp/holds", hold("b", 3, "ann"))
            .await
            .code(),
        "payer_hold_limit"
    );
    let two = app.post("/draws/pp/holds", hold("c", 2, "ann")).await;
    assert_eq!(two.status, StatusCode::CREATED, "{}", two.body);
    assert_eq!(
        app.post("/draws/pp/holds", hold("d", 1, "ann"))
            .await
            .code(),
        "payer_hold_limit"
    );
    // Another payer has a cap of its own; a purchase is not a hold.
    let bob = app.post("/draws/pp/holds", hold("e", 5, "bob")).await;
    assert_eq!(bob.status, StatusCode::CREATED, "{}", bob.body);
    let bought = app
        .post(
            "/draws/pp/purchases",
            json!({"payment_id": "ann-buys", "quantity": 5, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    // Released, paid for or ended, a hold gives its numbers back to the payer's cap.
    let released = app.delete("/draws/pp/holds/a").await;
    assert_eq!(released.body["status"], "released", "{}", released.body);
    let again = app.post("/draws/pp/holds", hold("f", 3, "ann")).await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    let paid = app
        .post(
            "/draws/pp/purchases",
            json!({"payment_id": "ann-pays", "hold_id": "c"}),
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.body);
    assert_eq!(tickets_of(&paid), tickets_of(&two));
    let after_paying = app.post("/draws/pp/holds", hold("g", 2, "ann")).await;
    assert_eq!(
        after_paying.status,
        StatusCode::CREATED,
        "{}",
        after_paying.body
    );
    assert_eq!(
        app.post("/draws/pp/holds", hold("h", 1, "ann"))
            .await
            .code(),
        "payer_hold_limit"
    );
    app.advance(60);
    let after_the_end = app.post("/draws/pp/holds", hold("i", 5, "ann")).await;
    assert_eq!(
        after_the_end.status,
        StatusCode::CREATED,
        "{}",
        after_the_end.body
    );
}

#[tokio::test]
async fn max_held_per_payer_and_max_held_percent_are_draw_settings_within_bounds() {
    let app = HoldApp::spawn().await;
    let created = app
        .post(
            "/draws",
            json!({"draw_id": "set", "total_tickets": 100, "max_per_purchase": 10,
                   "max_held_per_payer": 40, "max_held_percent": 60}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(
        (
            created.body["max_held_per_payer"].as_u64(),
            created.body["max_held_percent"].as_u64()
        ),
        (Some(40), Some(60))
    );
    let small = app
        .post(
            "/draws",
            json!({"draw_id": "small", "total_tickets": 100, "max_per_purchase": 10,
                   "max_held_per_payer": 4}),
        )
        .await;
    assert_eq!(small.status, StatusCode::CREATED, "{}", small.body);
    // A hold larger than the payer's cap is refused before any write.
    let large = app
        .post(
            "/draws/small/holds",
            json!({"hold_id": "l", "quantity": 5, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(
        (large.code(), large.body["left"].as_u64()),
        ("payer_hold_limit", Some(4)),
        "{}",
        large.body
    );
    let defaults = app
        .post("/draws", json!({"draw_id": "def", "total_tickets": 100}))
        .await;
    assert_eq!(
        (
            defaults.body["max_held_per_payer"].as_u64(),
            defaults.body["max_held_percent"].as_u64()
        ),
        (Some(20), Some(25)),
        "{}",
        defaults.body
    );
    for (field, value, code) in [
        ("max_held_per_payer", 0, "invalid_max_held_per_payer"),
        ("max_held_per_payer", 501, "invalid_max_held_per_payer"),
        ("max_held_percent", 0, "invalid_max_held_percent"),
        ("max_held_percent", 101, "invalid_max_held_percent"),
    ] {
        let mut body = json!({"total_tickets": 100});
        body[field] = json!(value);
        let refused = app.post("/draws", body).await;
        assert_eq!(refused.code(), code, "{field} {value}: {}", refused.body);
    }
}
