//! W5 for a draw past its `closes_at`: the number of prizes declared at the create is fixed
//! before any sale, and every freeze takes it, also the one a read makes, so the winners
//! pass step `frozen` whoever froze the list. A draw that declared none is frozen only by
//! the close or winners call that names the number.

use std::time::Duration;

use axum::http::StatusCode;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use tally_domain::ids::DrawId;
use tally_domain::time::rfc3339_millis;

use crate::helpers::{TestApp, spawn_app};
use tally_testkit::verifiers::{Verdicts, verifiers_accept};

/// Creates a draw of 50 tickets closing at `closes_at` (`prizes` declared if given) and
/// sells 5 purchases of 2.
async fn sold_draw(app: &TestApp, id: &str, prizes: Option<u32>, closes_at: Timestamp) -> Value {
    let mut body = json!({"draw_id": id, "total_tickets": 50,
                          "closes_at": rfc3339_millis(closes_at)});
    if let Some(prizes) = prizes {
        body["prizes"] = json!(prizes);
    }
    let created = app.post("/draws", &body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    for i in 0..5 {
        let bought = app
            .post(
                &format!("/draws/{id}/purchases"),
                &json!({"payment_id": format!("p{i}"), "quantity": 2}),
            )
            .await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    created.body
}

#[tokio::test]
async fn a_draw_frozen_by_a_read_past_its_close_draws_the_prizes_it_declared() {
    let app = spawn_app().await;
    let closes_at = Timestamp::now() + SignedDuration::from_secs(4);
    let created = sold_draw(&app, "declared", Some(3), closes_at).await;
    sold_draw(&app, "undeclared", None, closes_at).await;
    // Shown from the create on: keep it, the number is fixed before any sale.
    assert_eq!(created["prizes"], 3, "{created}");
    // Another number is refused before anything changes: the draw still sells.
    for (path, body) in [
        ("/draws/declared/close", json!({"prizes": 2})),
        ("/draws/declared/winners", json!({"prizes": 4})),
    ] {
        let refused = app.post(path, &body).await;
        assert_eq!(refused.code(), "prizes_fixed", "{path}: {}", refused.body);
        assert_eq!(refused.body["prizes"], 3);
    }
    assert_eq!(app.get("/draws/declared").await.body["status"], "open");

    let wait = Duration::try_from(closes_at - Timestamp::now()).unwrap_or_default();
    tokio::time::sleep(wait + Duration::from_millis(50)).await;
    // The first read past `closes_at` closes the draw and freezes its list.
    let eligible = app.get("/draws/declared/eligible").await;
    assert_eq!(eligible.status, StatusCode::OK, "{}", eligible.body);
    let kept = app.get("/draws/declared").await.body;
    assert_eq!(
        (&kept["eligible_count"], &kept["prizes"]),
        (&json!(10), &json!(3)),
        "{kept}"
    );
    let stored = app
        .store
        .get_draw(&DrawId::parse("declared").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.frozen.and_then(|f| f.prizes), Some(3), "the freeze");
    let other = app
        .post("/draws/declared/close", &json!({"prizes": 2}))
        .await;
    assert_eq!(other.code(), "prizes_fixed", "{}", other.body);
    let same = app
        .post("/draws/declared/close", &json!({"prizes": 3}))
        .await;
    assert_eq!(same.status, StatusCode::OK, "{}", same.body);
    assert_eq!(same.body["frozen_at"], kept["frozen_at"]);

    // The winners call need not name the number.
    let drawn = app.post("/draws/declared/winners", &json!({})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    assert_eq!(crate::winners::winning_tickets(&drawn).len(), 3);
    assert_eq!(drawn.body["proof"]["prizes"], 3);
    assert_eq!(
        verifiers_accept("declared", &drawn.body, &eligible.body, Some(&kept), None),
        Verdicts::BOTH_PASS
    );

    // Without a declaration a read freezes nothing: the list waits for the close that
    // names the number, also after a close that named too many.
    let unfrozen = app.get("/draws/undeclared/eligible").await;
    assert_eq!(unfrozen.status, StatusCode::CONFLICT, "{}", unfrozen.body);
    assert_eq!(unfrozen.code(), "not_frozen", "{}", unfrozen.body);
    let too_many = app
        .post("/draws/undeclared/close", &json!({"prizes": 11}))
        .await;
    assert_eq!(too_many.code(), "not_enough_eligible", "{}", too_many.body);
    let unfrozen = app.get("/draws/undeclared/eligible").await;
    assert_eq!(unfrozen.code(), "not_frozen", "{}", unfrozen.body);
    let kept = app
        .post("/draws/undeclared/close", &json!({"prizes": 3}))
        .await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.body);
    assert_eq!(kept.body["prizes"], 3, "{}", kept.body);
    let eligible = app.get("/draws/undeclared/eligible").await.body;
    let drawn = app.post("/draws/undeclared/winners", &json!({})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    assert_eq!(
        verifiers_accept("undeclared", &drawn.body, &eligible, Some(&kept.body), None),
        Verdicts::BOTH_PASS
    );
}

/// A close that stopped after its first step (the draw says `closing`) is finished by
/// the winners call, not refused as if the draw still sold.
#[tokio::test]
async fn a_close_stopped_half_way_is_finished_by_the_winners_call() {
    let app = spawn_app().await;
    let closes_at = Timestamp::now() + SignedDuration::from_hours(1);
    sold_draw(&app, "halfway", None, closes_at).await;
    let id = DrawId::parse("halfway").unwrap();
    app.store.set_draw_closing(&id).await.unwrap().unwrap();
    let drawn = app
        .post("/draws/halfway/winners", &json!({"prizes": 2}))
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let read = app.get("/draws/halfway").await.body;
    assert_eq!(
        (&read["status"], &read["prizes"], &read["eligible_count"]),
        (&json!("closed"), &json!(2), &json!(10)),
        "{read}"
    );
}

#[tokio::test]
async fn declared_prizes_are_a_setting_of_the_create() {
    let app = spawn_app().await;
    let body = json!({"draw_id": "set", "total_tickets": 10, "prizes": 2});
    let created = app.post("/draws", &body).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let repeated = app.post("/draws", &body).await;
    assert_eq!(repeated.status, StatusCode::OK, "{}", repeated.body);
    assert_eq!(
        repeated.body["seed_commitment"],
        created.body["seed_commitment"]
    );
    for other in [json!(3), Value::Null] {
        let mut changed = body.clone();
        changed["prizes"] = other;
        let refused = app.post("/draws", &changed).await;
        assert_eq!(refused.code(), "draw_exists", "{changed}: {}", refused.body);
    }
    assert_eq!(app.get("/draws/set").await.body["prizes"], 2);

    for prizes in [
        json!(0),
        json!(98),
        json!(11),
        json!(2.5),
        json!("3"),
        json!(-1),
    ] {
        let refused = app
            .post(
                "/draws",
                &json!({"draw_id": "bad", "total_tickets": 10, "prizes": prizes}),
            )
            .await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{prizes}");
        assert_eq!(
            refused.code(),
            "invalid_prizes",
            "{prizes}: {}",
            refused.body
        );
    }
    assert_eq!(app.get("/draws/bad").await.code(), "draw_not_found");

    // A declared number is frozen whatever the sales; the winners cannot draw more picks
    // than tickets.
    let few = json!({"draw_id": "few", "total_tickets": 10, "prizes": 3});
    assert_eq!(app.post("/draws", &few).await.status, StatusCode::CREATED);
    let bought = app
        .post(
            "/draws/few/purchases",
            &json!({"payment_id": "only", "quantity": 2}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let closed = app.post("/draws/few/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    assert_eq!(
        (&closed.body["eligible_count"], &closed.body["prizes"]),
        (&json!(2), &json!(3))
    );
    let drawn = app.post("/draws/few/winners", &json!({})).await;
    assert_eq!(drawn.code(), "not_enough_eligible", "{}", drawn.body);
}

/// A winners call naming no number on a draw that declared none is refused before it
/// closes or freezes anything: a freeze without a number would leave the number to choose
/// once the round is out. The close may still name it.
#[tokio::test]
async fn a_winners_call_without_a_number_freezes_nothing() {
    let app = spawn_app().await;
    let closes_at = Timestamp::now() + SignedDuration::from_hours(1);
    sold_draw(&app, "unnumbered", None, closes_at).await;
    // Still selling: the draw's state is the first problem.
    let refused = app.post("/draws/unnumbered/winners", &json!({})).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    assert_eq!(refused.code(), "draw_open", "{}", refused.body);
    let read = app.get("/draws/unnumbered").await.body;
    assert_eq!(read["status"], "open", "{read}");
    assert!(read["frozen_at"].is_null(), "{read}");
    let closed = app
        .post("/draws/unnumbered/close", &json!({"prizes": 2}))
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    assert_eq!(closed.body["prizes"], 2, "{}", closed.body);
}
