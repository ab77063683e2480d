//! Voids, caps per payer and postal entries.

use super::*;

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
