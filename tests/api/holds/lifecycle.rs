//! A hold from start to end: converted once while it lives, refused once expired, released
//! at once (H1–H3).

use super::*;

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

/// A hold made just before its deadline, whose transaction lands after it (here the
/// close's: the clock moves past `closes_at` while the transaction is on its way), is
/// answered `expired`, not `held`.
#[tokio::test]
async fn a_hold_whose_deadline_passes_while_it_is_made_is_answered_expired() {
    use std::time::Duration;
    use tally_testkit::fault_proxy::{FaultProxy, Faults};

    let app = HoldApp::spawn().await;
    let closes_at = jiff::Timestamp::now() + jiff::SignedDuration::from_mins(30);
    app.draw(
        json!({"draw_id": "late", "total_tickets": 100, "hold_seconds": 3600,
        "closes_at": tally_domain::time::rfc3339_millis(closes_at)}),
    )
    .await;
    let proxy = FaultProxy::start(&crate::helpers::endpoint()).await;
    let slow = app.instance_through(&proxy).await;
    proxy.set(Faults {
        latency: Some(Duration::from_secs(1)..=Duration::from_secs(1)),
        operations: Some(vec!["TransactWriteItems".into()]),
        ..Faults::default()
    });
    let body = json!({"hold_id": "last", "quantity": 1, "payer_id": "buyer"});
    let made =
        tokio::spawn(
            async move { crate::helpers::post_json(&slow, "/draws/late/holds", &body).await },
        );
    // The clock moves once the hold's transaction is held on its way, its reads done.
    let on_its_way = tokio::time::Instant::now() + Duration::from_secs(20);
    while proxy.counts().delayed == 0 {
        assert!(
            tokio::time::Instant::now() < on_its_way,
            "no transaction came"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    app.advance(3_600);
    let held = made.await.unwrap();
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    assert_eq!(held.body["status"], "expired", "{}", held.body);
    let read = app.get("/draws/late/holds/last").await;
    assert_eq!(read.body["status"], "expired", "{}", read.body);
}
