//! Purchases and tickets: distinct numbers, replays, refusals, the sell-out, lookups.

use super::*;

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
