//! V1, P1 and D1 one request at a time: voids, per-payer caps, schedules, and the lists
//! (a payer's purchases, the draws).

use std::time::Duration;

use axum::http::StatusCode;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use tally_domain::time::rfc3339_millis;

use crate::helpers::{TestApp, spawn_app, tickets_of};

async fn create(app: &TestApp, body: Value) -> Value {
    let created = app.create_draw(&body).await;
    created.body
}

fn buy(payment: &str, quantity: u64, payer: &str) -> Value {
    json!({"payment_id": payment, "quantity": quantity, "payer_id": payer})
}

#[tokio::test]
async fn a_void_is_all_or_nothing_once_and_a_replay_never_allocates_again() {
    let app = spawn_app().await;
    create(&app, json!({"draw_id": "v", "total_tickets": 100})).await;
    let bought = app.post("/draws/v/purchases", &buy("pay", 4, "ann")).await;
    let tickets = tickets_of(&bought);
    assert_eq!(
        app.post("/draws/v/purchases/pay/void", &json!({}))
            .await
            .code(),
        "invalid_reason"
    );
    assert_eq!(
        app.post("/draws/v/purchases/nope/void", &json!({"reason": "refund"}))
            .await
            .code(),
        "purchase_not_found"
    );
    let voided = app
        .post("/draws/v/purchases/pay/void", &json!({"reason": "refund"}))
        .await;
    assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    assert_eq!(voided.body["status"], "void");
    assert_eq!(voided.body["void_reason"], "refund");
    assert_eq!(tickets_of(&voided), tickets);
    // Again, even with another reason: the void as it was.
    let again = app
        .post("/draws/v/purchases/pay/void", &json!({"reason": "other"}))
        .await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body, voided.body);
    // V1: the purchase, each ticket and the draw say so; the tickets are not sold again.
    assert_eq!(app.get("/draws/v/purchases/pay").await.body, voided.body);
    for ticket in &tickets {
        let read = app.get(&format!("/draws/v/tickets/{ticket}")).await;
        assert_eq!(read.body["status"], "void", "{}", read.body);
    }
    let draw = app.get("/draws/v").await.body;
    assert_eq!(
        (draw["sold"].as_u64(), draw["voided"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(draw["remaining"], 96);
    // A replay of the voided payment gets the voided purchase, never new tickets.
    let replay = app.post("/draws/v/purchases", &buy("pay", 4, "ann")).await;
    assert_eq!(replay.status, StatusCode::OK, "{}", replay.body);
    assert_eq!(replay.body["status"], "void");
    assert_eq!(tickets_of(&replay), tickets);
    assert_eq!(app.get("/draws/v").await.body["sold"], 4);
}

#[tokio::test]
async fn a_cap_per_payer_refuses_with_what_is_left_and_a_void_gives_it_back() {
    let app = spawn_app().await;
    let draw = create(
        &app,
        json!({"draw_id": "cap", "total_tickets": 100, "max_per_purchase": 10, "max_per_payer": 5}),
    )
    .await;
    assert_eq!(draw["max_per_payer"], 5);
    let anonymous = app
        .post(
            "/draws/cap/purchases",
            &json!({"payment_id": "x", "quantity": 1}),
        )
        .await;
    assert_eq!(anonymous.code(), "payer_id_required");
    assert_eq!(
        app.post("/draws/cap/purchases", &buy("a1", 3, "ann"))
            .await
            .status,
        StatusCode::CREATED
    );
    let over = app.post("/draws/cap/purchases", &buy("a2", 3, "ann")).await;
    assert_eq!(over.status, StatusCode::CONFLICT);
    assert_eq!(over.code(), "payer_limit", "{}", over.body);
    assert_eq!(
        (
            over.body["left"].as_u64(),
            over.body["max_per_payer"].as_u64()
        ),
        (Some(2), Some(5))
    );
    // Above the cap at once: refused without a transaction, with what is left.
    let whale = app.post("/draws/cap/purchases", &buy("a3", 6, "ann")).await;
    assert_eq!(
        (whale.code(), whale.body["left"].as_u64()),
        ("payer_limit", Some(2))
    );
    // Another payer has a cap of their own; a replay of a capped purchase still answers.
    assert!(
        app.post("/draws/cap/purchases", &buy("b1", 5, "bob"))
            .await
            .status
            .is_success()
    );
    assert_eq!(
        app.post("/draws/cap/purchases", &buy("a1", 3, "ann"))
            .await
            .status,
        StatusCode::OK
    );
    app.post("/draws/cap/purchases/a1/void", &json!({"reason": "refund"}))
        .await;
    let after_void = app.post("/draws/cap/purchases", &buy("a4", 5, "ann")).await;
    assert_eq!(
        after_void.status,
        StatusCode::CREATED,
        "{}",
        after_void.body
    );
    assert_eq!(
        app.post("/draws/cap/purchases", &buy("a5", 1, "ann"))
            .await
            .body["left"],
        0
    );
    let invalid = app
        .post("/draws", &json!({"total_tickets": 10, "max_per_payer": 0}))
        .await;
    assert_eq!(invalid.code(), "invalid_max_per_payer");
}

/// P1 against a payer who varies the spelling of one id: the variants that look the
/// same are refused, and the composed and decomposed forms of one id share one cap.
#[tokio::test]
async fn a_cap_per_payer_holds_against_invisible_and_decomposed_variants_of_one_id() {
    let app = spawn_app().await;
    create(
        &app,
        json!({"draw_id": "dodge", "total_tickets": 100, "max_per_purchase": 10, "max_per_payer": 4}),
    )
    .await;
    let first = app
        .post(
            "/draws/dodge/purchases",
            &buy("d1", 3, "ren\u{e9}@example.com"),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    for (i, dodge) in [
        "ren\u{e9}@example.com\u{200b}",
        " ren\u{e9}@example.com",
        "ren\u{e9}@example.com\u{2028}",
        "\u{202e}ren\u{e9}@example.com",
    ]
    .into_iter()
    .enumerate()
    {
        let reply = app
            .post("/draws/dodge/purchases", &buy(&format!("x{i}"), 3, dodge))
            .await;
        assert_eq!(
            reply.code(),
            "invalid_payer_id",
            "{dodge:?}: {}",
            reply.body
        );
    }
    // "e" and a combining acute accent: the same payer, at the cap after one more.
    let decomposed = "rene\u{301}@example.com";
    let over = app
        .post("/draws/dodge/purchases", &buy("d2", 3, decomposed))
        .await;
    assert_eq!(
        (over.code(), over.body["left"].as_u64()),
        ("payer_limit", Some(1)),
        "{}",
        over.body
    );
    let listed = app
        .get("/draws/dodge/payers/rene%CC%81%40example.com/purchases")
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_eq!(
        listed.body["purchases"][0]["payer_id"],
        "ren\u{e9}@example.com"
    );
}

/// F1: free postal entries take part like paid ones: they count toward the cap, are
/// replayed and voided alike, and the draw and the winners count entries by channel.
#[tokio::test]
async fn postal_entries_count_toward_caps_and_are_counted_by_channel() {
    let app = spawn_app().await;
    create(
        &app,
        json!({"draw_id": "free", "total_tickets": 50, "max_per_purchase": 5, "max_per_payer": 4}),
    )
    .await;
    let post = |payment: &str, quantity: u64, payer: &str| json!({"payment_id": payment, "quantity": quantity, "payer_id": payer, "channel": "postal"});
    assert_eq!(
        app.post("/draws/free/purchases", &buy("a1", 2, "ann"))
            .await
            .body["channel"],
        "online"
    );
    let postal = app
        .post("/draws/free/purchases", &post("a2", 2, "ann"))
        .await;
    assert_eq!(
        (postal.status, &postal.body["channel"]),
        (StatusCode::CREATED, &json!("postal"))
    );
    let over = app
        .post("/draws/free/purchases", &post("a3", 1, "ann"))
        .await;
    assert_eq!(over.code(), "payer_limit");
    assert_eq!(
        app.post("/draws/free/purchases", &post("b1", 3, "bob"))
            .await
            .status,
        StatusCode::CREATED
    );
    assert_eq!(
        app.post("/draws/free/purchases", &post("b1", 3, "bob"))
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        app.post("/draws/free/purchases", &buy("b1", 3, "bob"))
            .await
            .code(),
        "idempotency_conflict"
    );
    let mut wrong = post("c1", 1, "cy");
    wrong["channel"] = json!("fax");
    assert_eq!(
        app.post("/draws/free/purchases", &wrong).await.code(),
        "invalid_channel"
    );
    let draw = app.get("/draws/free").await.body;
    assert_eq!(
        (&draw["sold"], &draw["entries"]),
        (&json!(7), &json!({"online": 2, "postal": 5}))
    );
    app.post(
        "/draws/free/purchases/b1/void",
        &json!({"reason": "duplicate entry"}),
    )
    .await;
    app.post("/draws/free/close", &json!({})).await;
    let winners = app.post("/draws/free/winners", &json!({"prizes": 1})).await;
    assert_eq!(winners.status, StatusCode::CREATED, "{}", winners.body);
    assert_eq!(winners.body["proof"]["eligible_count"], 4);
    assert_eq!(
        winners.body["eligible_entries"],
        json!({"online": 2, "postal": 2})
    );
}

fn at(offset: SignedDuration) -> String {
    rfc3339_millis(Timestamp::now() + offset)
}

#[tokio::test]
async fn sales_follow_the_schedule_and_a_draw_past_its_close_reads_closed() {
    let app = spawn_app().await;
    let later = create(
        &app,
        json!({"draw_id": "later", "total_tickets": 10, "opens_at": at(SignedDuration::from_hours(1))}),
    )
    .await;
    assert_eq!(later["status"], "scheduled");
    let early = app
        .post("/draws/later/purchases", &buy("e", 1, "ann"))
        .await;
    assert_eq!(early.code(), "draw_not_open", "{}", early.body);
    assert_eq!(early.body["opens_at"], later["opens_at"]);

    let closes_at = Timestamp::now() + SignedDuration::from_secs(2);
    let soon_body = json!({"draw_id": "soon", "total_tickets": 10,
                           "closes_at": rfc3339_millis(closes_at)});
    let soon = create(&app, soon_body.clone()).await;
    assert_eq!(soon["status"], "open");
    let sold = app
        .post("/draws/soon/purchases", &buy("s1", 2, "ann"))
        .await;
    assert_eq!(sold.status, StatusCode::CREATED);
    let wait = std::time::Duration::try_from(closes_at - Timestamp::now()).unwrap_or_default();
    tokio::time::sleep(wait + Duration::from_millis(50)).await;
    // D1: from closes_at on nothing sells, and the draw reads closed with no call.
    let late = app
        .post("/draws/soon/purchases", &buy("s2", 1, "ann"))
        .await;
    assert_eq!(late.code(), "draw_closed", "{}", late.body);
    assert_eq!(app.get("/draws/soon").await.body["status"], "closed");
    // Its create repeated is still the same create; a new draw closed already is refused.
    let repeated = app.post("/draws", &soon_body).await;
    assert_eq!(repeated.status, StatusCode::OK, "{}", repeated.body);
    assert_eq!(repeated.body["seed_commitment"], soon["seed_commitment"]);
    let mut other = soon_body.clone();
    other["total_tickets"] = json!(11);
    assert_eq!(app.post("/draws", &other).await.code(), "draw_exists");
    for draw_id in [json!("dead"), json!(null)] {
        let mut dead = soon_body.clone();
        dead["draw_id"] = draw_id;
        let refused = app.post("/draws", &dead).await;
        assert_eq!(refused.code(), "invalid_closes_at", "{}", refused.body);
        let detail = refused.body["detail"].as_str().unwrap();
        assert!(detail.contains("has passed"), "{detail}");
    }
    assert_eq!(app.get("/draws/dead").await.code(), "draw_not_found");
    // The beacon is fixed from closes_at on too, with no close called.
    let beacon = app
        .patch("/draws/soon", &json!({"beacon": {"network": "quicknet"}}))
        .await;
    assert_eq!(beacon.code(), "draw_closed", "{}", beacon.body);
    // A replay still gets its tickets; the winners close the stripes first.
    assert_eq!(
        app.post("/draws/soon/purchases", &buy("s1", 2, "ann"))
            .await
            .status,
        StatusCode::OK
    );
    let drawn = app.post("/draws/soon/winners", &json!({"prizes": 1})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    assert!(tickets_of(&sold).contains(&drawn.body["prizes"][0]["ticket"].as_u64().unwrap()));

    for (body, code) in [
        (
            json!({"total_tickets": 5, "opens_at": "tomorrow"}),
            "invalid_opens_at",
        ),
        (
            json!({"total_tickets": 5, "closes_at": "1999-01-01T00:00:00Z"}),
            "invalid_closes_at",
        ),
        (
            json!({"total_tickets": 5, "opens_at": at(SignedDuration::from_hours(2)), "closes_at": at(SignedDuration::from_hours(1))}),
            "invalid_schedule",
        ),
    ] {
        assert_eq!(app.post("/draws", &body).await.code(), code, "{body}");
    }
}

#[tokio::test]
async fn a_create_repeated_with_the_new_fields_is_the_same_create() {
    let app = spawn_app().await;
    let body = json!({"draw_id": "same", "total_tickets": 50, "max_per_payer": 4,
                      "opens_at": "2030-01-01T00:00:00Z", "closes_at": "2030-02-01T00:00:00+01:00",
                      "beacon": {"network": "quicknet"}});
    let first = create(&app, body.clone()).await;
    assert_eq!(first["closes_at"], "2030-01-31T23:00:00.000Z");
    // The beacon changes later: the create repeated as it was is still the same create.
    app.patch("/draws/same", &json!({"beacon": null})).await;
    let repeated = app.post("/draws", &body).await;
    assert_eq!(repeated.status, StatusCode::OK, "{}", repeated.body);
    assert_eq!(repeated.body["seed_commitment"], first["seed_commitment"]);
    assert!(repeated.body["beacon"].is_null());
    for (field, other) in [
        ("max_per_payer", json!(5)),
        ("opens_at", json!("2030-01-01T00:00:01Z")),
        ("closes_at", json!(null)),
        ("beacon", json!(null)),
    ] {
        let mut changed = body.clone();
        changed[field] = other;
        assert_eq!(
            app.post("/draws", &changed).await.code(),
            "draw_exists",
            "{field}"
        );
    }
}

#[tokio::test]
async fn a_payers_purchases_come_newest_first_in_pages() {
    let app = spawn_app().await;
    create(&app, json!({"draw_id": "mine", "total_tickets": 100})).await;
    for i in 0..5 {
        app.post(
            "/draws/mine/purchases",
            &buy(&format!("m{i}"), 1, "ann@example.com"),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    app.post("/draws/mine/purchases", &buy("other", 1, "bob"))
        .await;
    app.post(
        "/draws/mine/purchases/m1/void",
        &json!({"reason": "refund"}),
    )
    .await;
    let path = "/draws/mine/payers/ann%40example.com/purchases";
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let url = match &cursor {
            Some(c) => format!("{path}?limit=2&cursor={c}"),
            None => format!("{path}?limit=2"),
        };
        let page = app.get(&url).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let purchases = page.body["purchases"].as_array().unwrap().clone();
        assert!(purchases.len() <= 2);
        for p in &purchases {
            assert_eq!(p["payer_id"], "ann@example.com");
            assert_eq!(p["tickets"].as_array().unwrap().len(), 1);
            seen.push((
                p["payment_id"].as_str().unwrap().to_owned(),
                p["status"].clone(),
            ));
        }
        match page.body["cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let order: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(order, ["m4", "m3", "m2", "m1", "m0"]);
    assert_eq!(seen[3].1, "void");
    for bad in [
        "limit=0",
        "limit=101",
        "limit=x",
        "cursor=%%%",
        "cursor=bm9wZQ",
    ] {
        let reply = app.get(&format!("{path}?{bad}")).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{bad}: {}",
            reply.body
        );
    }
    assert_eq!(
        app.get("/draws/nope/payers/ann/purchases").await.code(),
        "draw_not_found"
    );
    let nobody = app.get("/draws/mine/payers/carol/purchases").await;
    assert_eq!(nobody.body, json!({"purchases": [], "cursor": null}));
}

#[tokio::test]
async fn draws_are_listed_newest_first_by_status_in_pages() {
    let app = spawn_app().await;
    for i in 0..5 {
        create(
            &app,
            json!({"draw_id": format!("d{i}"), "total_tickets": 10}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    app.post("/draws/d1/close", &json!({})).await;
    app.post("/draws/d3/close", &json!({})).await;
    let all = app.get("/draws?limit=3").await;
    let ids = |reply: &crate::helpers::Reply| -> Vec<String> {
        reply.body["draws"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["draw_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&all), ["d4", "d3", "d2"]);
    assert!(all.body["draws"][0]["seed_commitment"].is_string());
    assert!(all.body["draws"][0].get("seed").is_none());
    let rest = app
        .get(&format!(
            "/draws?limit=3&cursor={}",
            all.body["cursor"].as_str().unwrap()
        ))
        .await;
    assert_eq!(ids(&rest), ["d1", "d0"]);
    assert!(rest.body["cursor"].is_null());
    let open = app.get("/draws?status=open&limit=2").await;
    assert_eq!(ids(&open), ["d4", "d2"]);
    let next = app
        .get(&format!(
            "/draws?status=open&limit=2&cursor={}",
            open.body["cursor"].as_str().unwrap()
        ))
        .await;
    assert_eq!(ids(&next), ["d0"]);
    assert_eq!(ids(&app.get("/draws?status=closed").await), ["d3", "d1"]);
    assert_eq!(app.get("/draws?status=shut").await.code(), "invalid_status");
}
