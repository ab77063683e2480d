//! Creating, refusing and closing draws; routes and bodies the router refuses.

use super::*;

#[tokio::test]
async fn creating_a_draw_returns_it_with_its_counts() {
    let app = spawn_app().await;
    let reply = app
        .post(
            "/draws",
            &json!({"draw_id": "summer-2026", "name": "Summer", "total_tickets": 10_000,
                    "max_per_purchase": 20, "stripes": 8}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    assert_eq!(reply.headers["location"], "/draws/summer-2026");
    let body = &reply.body;
    assert_eq!(body["draw_id"], "summer-2026");
    assert_eq!(body["name"], "Summer");
    assert_eq!(body["total_tickets"], 10_000);
    assert_eq!(body["max_per_purchase"], 20);
    assert_eq!(body["stripes"], 8);
    assert_eq!(body["sold"], 0);
    assert_eq!(body["remaining"], 10_000);
    assert_eq!(body["status"], "open");
    assert!(body["created_at"].as_str().unwrap().ends_with('Z'));
    assert!(
        body.get("perm_key").is_none(),
        "the key must never leave the service"
    );

    let fetched = app.get("/draws/summer-2026").await;
    assert_eq!(fetched.status, StatusCode::OK);
    assert_eq!(fetched.body, reply.body);
}

#[tokio::test]
async fn a_draw_without_id_gets_a_generated_one() {
    let app = spawn_app().await;
    let reply = app.post("/draws", &json!({"total_tickets": 5})).await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let id = reply.body["draw_id"].as_str().unwrap();
    assert!(id.starts_with("d-") && id.len() == 18, "{id}");
    assert_eq!(reply.body["max_per_purchase"], 20);
    assert!(reply.body["name"].is_null());
}

#[tokio::test]
async fn creating_an_existing_draw_is_a_conflict() {
    let app = spawn_app().await;
    create_draw(&app, "dup", 10, json!({})).await;
    let reply = app
        .post("/draws", &json!({"draw_id": "dup", "total_tickets": 99}))
        .await;
    assert_problem(&reply, StatusCode::CONFLICT, "draw_exists");
    assert_eq!(app.get("/draws/dup").await.body["total_tickets"], 10);
}

#[tokio::test]
async fn invalid_draw_settings_are_rejected_with_their_code() {
    let app = spawn_app().await;
    let cases = [
        (json!({"total_tickets": 0}), "invalid_total_tickets"),
        (
            json!({"total_tickets": 10_000_001}),
            "invalid_total_tickets",
        ),
        (
            json!({"total_tickets": 10, "max_per_purchase": 501}),
            "invalid_max_per_purchase",
        ),
        (
            json!({"total_tickets": 10, "max_per_purchase": 0}),
            "invalid_max_per_purchase",
        ),
        (
            json!({"total_tickets": 10, "stripes": 11}),
            "invalid_stripes",
        ),
        (
            json!({"total_tickets": 1_000_000, "stripes": 87}),
            "invalid_stripes",
        ),
        (
            json!({"total_tickets": 10, "draw_id": "a#b"}),
            "invalid_draw_id",
        ),
        (
            json!({"total_tickets": 10, "draw_id": ""}),
            "invalid_draw_id",
        ),
        (
            json!({"total_tickets": 10, "name": "bell\u{7}"}),
            "invalid_name",
        ),
        (json!({"total_tickets": "ten"}), "invalid_total_tickets"),
        (json!({"total_tickets": -1}), "invalid_total_tickets"),
        (
            json!({"total_tickets": 10, "max_per_purchase": 4_294_967_296u64}),
            "invalid_max_per_purchase",
        ),
        (
            json!({"total_tickets": 1_024, "stripes": 1_024, "max_per_purchase": 50}),
            "invalid_stripes",
        ),
        (
            json!({"total_tickets": 10, "colour": "red"}),
            "invalid_body",
        ),
        (json!({}), "invalid_body"),
    ];
    for (body, code) in cases {
        let reply = app.post("/draws", &body).await;
        assert_problem(&reply, StatusCode::BAD_REQUEST, code);
    }
    // 2^64 does not fit any integer: it still names its field.
    let huge = crate::helpers::post_raw(
        &app.router,
        "/draws",
        "application/json",
        r#"{"total_tickets": 18446744073709551616}"#.into(),
    )
    .await;
    assert_problem(&huge, StatusCode::BAD_REQUEST, "invalid_total_tickets");
}

#[tokio::test]
async fn malformed_oversized_and_non_json_bodies_are_client_errors() {
    let app = spawn_app().await;
    let malformed = crate::helpers::post_raw(
        &app.router,
        "/draws",
        "application/json",
        "{\"total_tickets\": ".into(),
    )
    .await;
    assert_problem(&malformed, StatusCode::BAD_REQUEST, "malformed_json");

    let huge = format!(
        "{{\"total_tickets\": 5, \"name\": \"{}\"}}",
        "x".repeat(70_000)
    );
    let oversized = crate::helpers::post_raw(&app.router, "/draws", "application/json", huge).await;
    assert_problem(&oversized, StatusCode::PAYLOAD_TOO_LARGE, "body_too_large");

    let form = crate::helpers::post_raw(
        &app.router,
        "/draws",
        "application/x-www-form-urlencoded",
        "total_tickets=5".into(),
    )
    .await;
    assert_problem(
        &form,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_with_problems() {
    let app = spawn_app().await;
    assert_problem(
        &app.get("/nowhere").await,
        StatusCode::NOT_FOUND,
        "route_not_found",
    );
    assert_problem(
        &app.put("/draws", &serde_json::json!({})).await,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    );
    assert_problem(
        &app.get("/draws/no-such-draw").await,
        StatusCode::NOT_FOUND,
        "draw_not_found",
    );
    assert_problem(
        &app.get("/draws/bad%23id").await,
        StatusCode::BAD_REQUEST,
        "invalid_draw_id",
    );
}

#[tokio::test]
async fn closing_a_draw_stops_sales_but_not_replays() {
    let app = spawn_app().await;
    create_draw(&app, "shut", 100, json!({"stripes": 4})).await;
    let bought = app
        .post(
            "/draws/shut/purchases",
            &json!({"payment_id": "early", "quantity": 2}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED);
    let closed = app.post("/draws/shut/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    assert_eq!(closed.body["status"], "closed");
    assert_eq!(closed.body["sold"], 2);
    let late = app
        .post(
            "/draws/shut/purchases",
            &json!({"payment_id": "late", "quantity": 1}),
        )
        .await;
    assert_problem(&late, StatusCode::CONFLICT, "draw_closed");
    let replay = app
        .post(
            "/draws/shut/purchases",
            &json!({"payment_id": "early", "quantity": 2}),
        )
        .await;
    assert_eq!(replay.status, StatusCode::OK);
    // Closing twice is fine; closing a missing draw is not.
    assert_eq!(
        app.post("/draws/shut/close", &json!({})).await.status,
        StatusCode::OK
    );
    assert_problem(
        &app.post("/draws/gone/close", &json!({})).await,
        StatusCode::NOT_FOUND,
        "draw_not_found",
    );
}

#[tokio::test]
async fn a_draw_closed_elsewhere_refuses_sales_from_a_warm_instance() {
    let app = spawn_app().await;
    create_draw(&app, "warm", 100, json!({"stripes": 2})).await;
    let first = app
        .post(
            "/draws/warm/purchases",
            &json!({"payment_id": "a", "quantity": 1}),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    // Another instance closes the draw; this one still has it cached as open.
    let other = crate::helpers::router(crate::helpers::store_on(app.store.table(), None).await);
    assert_eq!(
        crate::helpers::post_json(&other, "/draws/warm/close", &json!({}))
            .await
            .status,
        StatusCode::OK
    );
    let late = app
        .post(
            "/draws/warm/purchases",
            &json!({"payment_id": "b", "quantity": 1}),
        )
        .await;
    assert_problem(&late, StatusCode::CONFLICT, "draw_closed");
}

#[tokio::test]
async fn a_process_new_to_a_closed_draw_learns_it_from_its_first_claim() {
    let app = spawn_app().await;
    create_draw(&app, "shut", 100, json!({})).await;
    assert_eq!(
        app.post("/draws/shut/close", &json!({})).await.status,
        StatusCode::OK
    );
    let fresh = tally::tickets::TicketService::new(app.store.clone());
    let refused = fresh
        .purchase(tally_domain::purchase::PurchaseRequest {
            draw_id: tally_domain::ids::DrawId::parse("shut").unwrap(),
            payment_id: tally_domain::ids::PaymentId::parse("late").unwrap(),
            quantity: 1,
            numbers: None,
            payer_id: None,
            token: None,
            channel: Default::default(),
            amount: None,
        })
        .await;
    assert!(
        matches!(refused, Err(tally::tickets::TicketError::DrawClosed(_))),
        "{refused:?}"
    );
}
