//! Holds that cannot be abused (H5): every hold names its payer; a payer's live holds take
//! at most `max_held_per_payer` numbers and all live holds at most `max_held_percent` of
//! the draw, counted in the transaction that makes each hold and given back when it ends.
//! Held numbers are never answered as sold.

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::{Reply, tickets_of};
use crate::hold_app::HoldApp;

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

/// Holds of `quantity` by made-up payers (`<prefix>-<i>`), one after another: the numbers
/// each hold that was made got. Every other answer says the draw's share of holds is
/// reached, or the numbers left are held.
async fn hold_with_made_up_payers(
    app: &HoldApp,
    draw: &str,
    prefix: &str,
    holds: u64,
    quantity: u64,
) -> Vec<Vec<u64>> {
    let mut made = Vec::new();
    for i in 0..holds {
        let body = json!({"hold_id": format!("{prefix}-{i}"), "quantity": quantity,
                          "payer_id": format!("{prefix}-{i}")});
        let reply = app.post(&format!("/draws/{draw}/holds"), body).await;
        match (reply.status, reply.code()) {
            (StatusCode::CREATED, _) => made.push(tickets_of(&reply)),
            (StatusCode::CONFLICT, "holds_full" | "tickets_held" | "tickets_fragmented") => {}
            (status, code) => panic!("{prefix}-{i}: {status} {code} {}", reply.body),
        }
    }
    made
}

/// Buys `quantity` by lucky dip.
async fn buy(app: &HoldApp, draw: &str, payment: &str, quantity: u64) -> Reply {
    let body = json!({"payment_id": payment, "quantity": quantity});
    app.post(&format!("/draws/{draw}/purchases"), body).await
}

/// Buys every free number by lucky dips of at most 20 (payments `<prefix>-<n>`): the
/// tickets bought, and the refusal once none is free.
async fn buy_all_free(app: &HoldApp, draw: &str, prefix: &str) -> (u64, Reply) {
    let mut bought = 0;
    let mut quantity = 20;
    for n in 0..2_000 {
        let reply = buy(app, draw, &format!("{prefix}-{n}"), quantity).await;
        match (reply.code(), reply.body["remaining"].as_u64()) {
            ("", _) => bought += tickets_of(&reply).len() as u64,
            ("sold_out" | "tickets_held", Some(0)) => return (bought, reply),
            ("sold_out" | "tickets_held", Some(remaining)) => quantity = remaining.clamp(1, 20),
            ("tickets_fragmented", _) => quantity = 1,
            (code, _) => panic!("{prefix}-{n}: {code} {}", reply.body),
        }
    }
    panic!("{prefix}: 2,000 purchases and still numbers free")
}

#[tokio::test]
async fn live_holds_take_at_most_their_share_of_the_draw_and_held_numbers_are_never_sold_out() {
    let app = HoldApp::spawn().await;
    // As in the report of the abuse: no setting about holds, the defaults apply.
    app.draw(
        json!({"draw_id": "share", "total_tickets": 1_000, "max_per_purchase": 500,
                    "hold_seconds": 3_600}),
    )
    .await;
    // 14 holds by made-up payers: H5, live holds keep at most 25% of the draw.
    let made = hold_with_made_up_payers(&app, "share", "fake", 14, 50).await;
    let held: usize = made.iter().map(Vec::len).sum();
    assert!((200..=250).contains(&held), "{held} held");
    let draw = app.get("/draws/share").await;
    assert_eq!(draw.body["held"], held, "{}", draw.body);
    assert_eq!(draw.body["remaining"], 1_000 - held, "{}", draw.body);
    // Everything free sells; what is left is held, not sold: `tickets_held`, with when
    // the first hold ends, and the draw agrees on what is held and what remains.
    let (bought, refused) = buy_all_free(&app, "share", "buy").await;
    assert_eq!(bought, 1_000 - held as u64);
    assert_eq!(
        (
            refused.code(),
            refused.body["remaining"].as_u64(),
            refused.body["held"].as_u64()
        ),
        ("tickets_held", Some(0), Some(held as u64)),
        "{}",
        refused.body
    );
    let ends = app.get("/draws/share/holds/fake-0").await.body["expires_at"].clone();
    assert_eq!(refused.body["first_hold_ends_at"], ends);
    let draw = app.get("/draws/share").await;
    assert_eq!(
        (
            draw.body["sold"].as_u64(),
            draw.body["held"].as_u64(),
            draw.body["remaining"].as_u64()
        ),
        (Some(1_000 - held as u64), Some(held as u64), Some(0)),
        "{}",
        draw.body
    );
    // Release and hold again: the share is never passed.
    let released = app.delete("/draws/share/holds/fake-0").await;
    assert_eq!(released.body["status"], "released", "{}", released.body);
    let again = hold_with_made_up_payers(&app, "share", "again", 3, 50).await;
    assert_eq!(again.len(), 1);
    let more = hold_with_made_up_payers(&app, "share", "more", 3, 1).await;
    assert!(more.is_empty(), "{more:?}");
    // Once the holds end, their numbers sell; then the draw is sold out, nothing held.
    app.advance(3_600);
    let (after, out) = buy_all_free(&app, "share", "after").await;
    assert_eq!(after, held as u64);
    assert_eq!(
        (
            out.code(),
            out.body["remaining"].as_u64(),
            out.body["held"].as_u64()
        ),
        ("sold_out", Some(0), Some(0)),
        "{}",
        out.body
    );
}

#[tokio::test]
async fn made_up_payers_of_a_capped_draw_hold_no_more_than_its_share() {
    let app = HoldApp::spawn().await;
    app.draw(
        json!({"draw_id": "capped", "total_tickets": 200, "max_per_payer": 20,
                    "hold_seconds": 3_600}),
    )
    .await;
    let made = hold_with_made_up_payers(&app, "capped", "fake", 10, 20).await;
    let held: usize = made.iter().map(Vec::len).sum();
    assert!(held <= 50, "H5: {held} of 200 held");
    let draw = app.get("/draws/capped").await;
    assert_eq!(draw.body["held"], held, "{}", draw.body);
    // A buyer still gets a full purchase.
    let body = json!({"payment_id": "buyer", "quantity": 20, "payer_id": "buyer"});
    let bought = app.post("/draws/capped/purchases", body).await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
}
