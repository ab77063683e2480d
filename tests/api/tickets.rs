//! Every ticket route through the real router: successes and each error code.

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::{TestApp, assert_problem, attr_n, of_kind, spawn_app, tickets_of};

async fn create_draw(app: &TestApp, id: &str, total: u64, extra: serde_json::Value) {
    let mut body = json!({"draw_id": id, "total_tickets": total});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    app.create_draw(&body).await;
}

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
async fn a_purchase_gets_distinct_numbers_and_a_replay_gets_the_same_ones() {
    let app = spawn_app().await;
    create_draw(&app, "d1", 100, json!({})).await;
    let body = json!({"payment_id": "PAYID-123", "quantity": 3, "payer_id": "ann", "token": "tok"});
    let first = app.post("/draws/d1/purchases", &body).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let tickets = tickets_of(&first);
    assert_eq!(tickets.len(), 3);
    assert!(tickets.iter().all(|n| (1..=100).contains(n)));
    let mut unique = tickets.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3);
    assert_eq!(first.body["draw_id"], "d1");
    assert_eq!(first.body["payment_id"], "PAYID-123");
    assert_eq!(first.body["quantity"], 3);
    assert!(first.body.get("token").is_none());

    let replay = app.post("/draws/d1/purchases", &body).await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(replay.body, first.body);

    let fetched = app.get("/draws/d1/purchases/PAYID-123").await;
    assert_eq!(fetched.status, StatusCode::OK);
    assert_eq!(fetched.body, first.body);

    let draw = app.get("/draws/d1").await;
    assert_eq!(draw.body["sold"], 3);
    assert_eq!(draw.body["remaining"], 97);

    for number in tickets {
        let ticket = app.get(&format!("/draws/d1/tickets/{number}")).await;
        assert_eq!(ticket.status, StatusCode::OK);
        assert_eq!(ticket.body["number"], number);
        assert_eq!(ticket.body["payment_id"], "PAYID-123");
        assert_eq!(ticket.body["payer_id"], "ann");
    }
}

#[tokio::test]
async fn reusing_a_payment_id_with_another_body_is_rejected_and_changes_nothing() {
    let app = spawn_app().await;
    create_draw(&app, "d2", 50, json!({})).await;
    let first = app
        .post(
            "/draws/d2/purchases",
            &json!({"payment_id": "p", "quantity": 2}),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    for other in [
        json!({"payment_id": "p", "quantity": 3}),
        json!({"payment_id": "p", "quantity": 2, "payer_id": "bob"}),
        json!({"payment_id": "p", "quantity": 2, "token": "different"}),
    ] {
        let reply = app.post("/draws/d2/purchases", &other).await;
        assert_problem(&reply, StatusCode::CONFLICT, "idempotency_conflict");
    }
    assert_eq!(app.get("/draws/d2").await.body["sold"], 2);
    let items = app.scan().await;
    assert_eq!(of_kind(&items, "ticket").len(), 2);
    assert_eq!(of_kind(&items, "purchase").len(), 1);
}

#[tokio::test]
async fn invalid_purchases_are_client_errors() {
    let app = spawn_app().await;
    create_draw(&app, "d3", 100, json!({"max_per_purchase": 5})).await;
    let cases = [
        (
            json!({"payment_id": "p", "quantity": 0}),
            "invalid_quantity",
        ),
        (
            json!({"payment_id": "p", "quantity": 6}),
            "invalid_quantity",
        ),
        (
            json!({"payment_id": "p#1", "quantity": 1}),
            "invalid_payment_id",
        ),
        (
            json!({"payment_id": "x".repeat(65), "quantity": 1}),
            "invalid_payment_id",
        ),
        (
            json!({"payment_id": "p", "quantity": "3"}),
            "invalid_quantity",
        ),
        (
            json!({"payment_id": "p", "quantity": 4_294_967_296u64}),
            "invalid_quantity",
        ),
        (
            json!({"payment_id": "p", "quantity": 1, "payer_id": ""}),
            "invalid_payer_id",
        ),
        (
            json!({"payment_id": "p", "quantity": 1, "token": "t".repeat(257)}),
            "invalid_token",
        ),
        (json!({"quantity": 1}), "invalid_body"),
    ];
    for (body, code) in cases {
        let reply = app.post("/draws/d3/purchases", &body).await;
        assert_problem(&reply, StatusCode::BAD_REQUEST, code);
    }
    let missing = app
        .post(
            "/draws/nope/purchases",
            &json!({"payment_id": "p", "quantity": 1}),
        )
        .await;
    assert_problem(&missing, StatusCode::NOT_FOUND, "draw_not_found");
    assert_eq!(app.get("/draws/d3").await.body["sold"], 0);
    assert!(of_kind(&app.scan().await, "purchase").is_empty());
}

#[tokio::test]
async fn sold_out_says_how_many_remain_and_allocates_nothing() {
    let app = spawn_app().await;
    create_draw(&app, "small", 5, json!({"max_per_purchase": 5})).await;
    let first = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "a", "quantity": 4}),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    let too_many = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "b", "quantity": 2}),
        )
        .await;
    assert_problem(&too_many, StatusCode::CONFLICT, "sold_out");
    assert_eq!(too_many.body["remaining"], 1);
    assert_problem(
        &app.get("/draws/small/purchases/b").await,
        StatusCode::NOT_FOUND,
        "purchase_not_found",
    );
    let last = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "c", "quantity": 1}),
        )
        .await;
    assert_eq!(last.status, StatusCode::CREATED);
    let after = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "d", "quantity": 1}),
        )
        .await;
    assert_problem(&after, StatusCode::CONFLICT, "sold_out");
    assert_eq!(after.body["remaining"], 0);
    // A replay still gets its tickets after the sell-out.
    let replay = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "a", "quantity": 4}),
        )
        .await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(tickets_of(&replay), tickets_of(&first));
    let mut all: Vec<u64> = tickets_of(&first);
    all.extend(tickets_of(&last));
    all.sort();
    assert_eq!(all, vec![1, 2, 3, 4, 5]);
}

#[tokio::test]
async fn a_draw_of_one_ticket_sells_exactly_once() {
    let app = spawn_app().await;
    create_draw(&app, "one", 1, json!({})).await;
    let first = app
        .post(
            "/draws/one/purchases",
            &json!({"payment_id": "a", "quantity": 1}),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    assert_eq!(tickets_of(&first), vec![1]);
    let second = app
        .post(
            "/draws/one/purchases",
            &json!({"payment_id": "b", "quantity": 1}),
        )
        .await;
    assert_problem(&second, StatusCode::CONFLICT, "sold_out");
    let draw = app.get("/draws/one").await.body;
    assert_eq!(
        (draw["sold"].as_u64(), draw["remaining"].as_u64()),
        (Some(1), Some(0))
    );
}

#[tokio::test]
async fn the_largest_allowed_purchase_commits_in_one_transaction() {
    let app = spawn_app().await;
    create_draw(&app, "big", 10_000, json!({"max_per_purchase": 50})).await;
    let reply = app
        .post(
            "/draws/big/purchases",
            &json!({"payment_id": "whale", "quantity": 50}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let mut tickets = tickets_of(&reply);
    tickets.sort();
    tickets.dedup();
    assert_eq!(tickets.len(), 50);
}

#[tokio::test]
async fn purchases_span_stripes_and_sell_every_ticket() {
    // 3 stripes of a 20-ticket draw hold 9, 7 and 4 tickets (they shrink): purchases of
    // 6 must span stripe boundaries to sell all 20.
    let app = spawn_app().await;
    create_draw(
        &app,
        "span",
        20,
        json!({"stripes": 3, "max_per_purchase": 6}),
    )
    .await;
    let mut sold = Vec::new();
    for (i, quantity) in [6, 6, 6, 2].into_iter().enumerate() {
        let reply = app
            .post(
                "/draws/span/purchases",
                &json!({"payment_id": format!("p{i}"), "quantity": quantity}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        sold.extend(tickets_of(&reply));
    }
    sold.sort();
    assert_eq!(sold, (1..=20).collect::<Vec<u64>>());
    let items = app.scan().await;
    let draw = app.get("/draws/span").await.body;
    assert_eq!(draw["sold"], 20);
    let purchases = of_kind(&items, "purchase");
    assert_eq!(
        purchases.iter().map(|p| attr_n(p, "quantity")).sum::<u64>(),
        20
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
async fn ticket_lookups_distinguish_unsold_out_of_range_and_malformed() {
    let app = spawn_app().await;
    create_draw(&app, "look", 10, json!({})).await;
    assert_problem(
        &app.get("/draws/look/tickets/3").await,
        StatusCode::NOT_FOUND,
        "ticket_not_sold",
    );
    assert_problem(
        &app.get("/draws/look/tickets/0").await,
        StatusCode::BAD_REQUEST,
        "ticket_out_of_range",
    );
    assert_problem(
        &app.get("/draws/look/tickets/11").await,
        StatusCode::BAD_REQUEST,
        "ticket_out_of_range",
    );
    assert_problem(
        &app.get("/draws/look/tickets/abc").await,
        StatusCode::BAD_REQUEST,
        "invalid_ticket_number",
    );
    assert_problem(
        &app.get("/draws/nope/tickets/1").await,
        StatusCode::NOT_FOUND,
        "draw_not_found",
    );
    assert_problem(
        &app.get("/draws/look/purchases/p%231").await,
        StatusCode::BAD_REQUEST,
        "invalid_payment_id",
    );
}

#[tokio::test]
async fn claims_hand_out_each_stripe_end_once_and_return_the_draw_and_its_sold_out_stripes() {
    let app = spawn_app().await;
    create_draw(&app, "claims", 1_000, json!({"stripes": 40})).await;
    let draw = tally_domain::ids::DrawId::parse("claims").unwrap();
    // 24 processes claiming 1, 2 or 3 ends at once get 48 distinct counter values.
    let claims = (0..24u32).map(|i| {
        let (store, draw) = (app.store.clone(), draw.clone());
        tokio::spawn(async move { store.claim_stripes(&draw, 1 + i % 3, &[]).await })
    });
    let mut values = Vec::new();
    for claim in claims {
        let claim = claim.await.unwrap().unwrap().expect("the draw exists");
        assert_eq!(claim.draw.draw_id, draw);
        assert_eq!(claim.draw.config.stripes(), 40);
        values.extend(claim.first..claim.first + u64::from(claim.count));
    }
    values.sort_unstable();
    assert_eq!(values, (0..48).collect::<Vec<u64>>());

    // Stripes named as sold out stay recorded, and every later claim returns them all.
    let first = app
        .store
        .claim_stripes(&draw, 1, &[3, 7])
        .await
        .unwrap()
        .unwrap();
    assert_eq!((first.first, first.count), (48, 1));
    let later = app
        .store
        .claim_stripes(&draw, 2, &[7, 1])
        .await
        .unwrap()
        .unwrap();
    let mut sold_out = later.sold_out.clone();
    sold_out.sort_unstable();
    assert_eq!((later.first, sold_out), (49, vec![1, 3, 7]));

    let missing = tally_domain::ids::DrawId::parse("missing").unwrap();
    assert!(
        app.store
            .claim_stripes(&missing, 1, &[])
            .await
            .unwrap()
            .is_none()
    );
    assert!(app.store.get_draw(&missing).await.unwrap().is_none());
}

#[tokio::test]
async fn a_read_of_the_cursors_ends_with_the_purchase_record_in_one_snapshot() {
    use tally::store::purchases::PurchaseRead;
    use tally_domain::ids::{DrawId, PaymentId};

    let app = spawn_app().await;
    create_draw(&app, "wide", 1_000, json!({"stripes": 150})).await;
    let bought = app
        .post(
            "/draws/wide/purchases",
            &json!({"payment_id": "paid", "quantity": 7}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED);
    let counter = tally::store::RequestCounter::default();
    let store = crate::helpers::store_on(app.store.table(), Some(counter.clone())).await;
    let draw = DrawId::parse("wide").unwrap();
    let all: Vec<u32> = (0..150).collect();

    // 51 cursors in a batch read, then 99 cursors and the record in one snapshot.
    let read = store
        .read_cursors_then_purchase(&draw, &all, &PaymentId::parse("paid").unwrap())
        .await
        .unwrap();
    let sent = counter.snapshot();
    assert_eq!(read.requests, 2);
    assert_eq!(
        (sent.of("BatchGetItem"), sent.of("TransactGetItems")),
        (1, 1),
        "{sent}"
    );
    let stripes: Vec<u32> = read.stripes.iter().map(|(s, _)| *s).collect();
    assert_eq!(stripes, all);
    assert_eq!(
        read.stripes
            .iter()
            .map(|(_, s)| s.sold(u64::MAX))
            .sum::<u64>(),
        7
    );
    match read.purchase {
        PurchaseRead::Found(purchase) => assert_eq!(purchase.tickets, tickets_of(&bought)),
        other => panic!("expected the purchase, got {other:?}"),
    }

    let few = store
        .read_cursors_then_purchase(&draw, &all[..10], &PaymentId::parse("unpaid").unwrap())
        .await
        .unwrap();
    assert_eq!(few.requests, 1);
    assert_eq!(counter.snapshot().since(&sent).of("TransactGetItems"), 1);
    assert_eq!(few.stripes.len(), 10);
    assert!(
        matches!(few.purchase, PurchaseRead::Absent),
        "{:?}",
        few.purchase
    );
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
