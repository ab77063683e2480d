//! What a careful user or an attacker tries: a process that serves many draws, creates re-sent after a lost answer, a close cut short, purchases no transaction
//! can hold, requests the HTTP layer refuses, and order data that JSON would round.

use std::num::NonZeroUsize;

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::{Value, json};
use tally::store::orders::SeriesInsert;
use tally::store::{Inserted, RequestCounter, Store};
use tally::tickets::{NewDraw, TicketError, TicketService};
use tally_domain::draw::{Draw, DrawConfig, DrawStatus};
use tally_domain::ids::{DrawId, IssuerId, PaymentId, SeriesId};
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::permutation::PermutationKey;
use tally_domain::purchase::PurchaseRequest;
use tally_domain::seed::DrawSeed;
use tally_domain::series::issuer::Issuer;
use tally_domain::series::{Reset, Series, SeriesDefinition};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{
    Item, fresh_store, of_kind, post_json, post_raw, router, spawn_app, store_on,
};

#[tokio::test]
async fn a_process_keeps_a_bounded_number_of_draws_and_reopens_one_it_forgot() {
    let counter = RequestCounter::default();
    let (store, _table) = fresh_store(Some(counter.clone())).await;
    let seller = TicketService::with_cached_draws(store.clone(), NonZeroUsize::new(2).unwrap());
    let buy = |draw: &str, payment: &str| PurchaseRequest {
        draw_id: DrawId::parse(draw).unwrap(),
        payment_id: PaymentId::parse(payment).unwrap(),
        quantity: 1,
        numbers: None,
        payer_id: None,
        token: None,
        channel: Default::default(),
        amount: None,
    };
    for draw in ["a", "b", "c"] {
        seller
            .create_draw(NewDraw::new(
                DrawId::parse(draw).unwrap(),
                DrawConfig::new(100, None, None).unwrap(),
            ))
            .await
            .unwrap();
        seller
            .purchase(buy(draw, &format!("{draw}1")))
            .await
            .unwrap();
    }
    // "c" is still known: one transaction, no claim.
    let before = counter.snapshot();
    seller.purchase(buy("c", "c2")).await.unwrap();
    let warm = counter.snapshot().since(&before);
    assert_eq!((warm.of("UpdateItem"), warm.total()), (0, 1), "{warm}");
    // "a" was forgotten for "c": it is opened again with a claim.
    let before = counter.snapshot();
    seller.purchase(buy("a", "a2")).await.unwrap();
    let reopened = counter.snapshot().since(&before);
    assert_eq!(reopened.of("UpdateItem"), 1, "{reopened}");
}

#[tokio::test]
async fn a_create_re_sent_after_a_lost_answer_is_its_own_and_a_repeated_create_is_answered() {
    let app = spawn_app().await;
    // The SDK re-sends the very same PutItem when an answer is lost: the item it finds is
    // its own.
    let draw = Draw {
        draw_id: DrawId::parse("resent").unwrap(),
        name: None,
        config: DrawConfig::new(10, None, None).unwrap(),
        schedule: Default::default(),
        beacon: Some(tally_domain::winners::BeaconNetwork::quicknet()),
        created_beacon: Some("quicknet".into()),
        key: PermutationKey::generate(),
        seed: DrawSeed::generate(),
        instant_wins: None,
        status: DrawStatus::Open,
        voided: 0,
        late_voided: 0,
        voiding: Vec::new(),
        frozen: None,
        postal_voided: 0,
        winners: None,
        pending_redraw: None,
        sold_out_at: None,
        created_at: Timestamp::now(),
    };
    let entry = |action, target: &str| {
        Draft::new(
            Timestamp::now(),
            &Operator::local(),
            action,
            target.to_owned(),
            &json!({}),
        )
    };
    let created = entry(Action::DrawCreated, "draw/resent");
    for _ in 0..2 {
        assert!(matches!(
            app.store.insert_draw(&draw, &created).await.unwrap(),
            Inserted::New
        ));
    }
    let series = Series::new(
        SeriesId::parse("RESENT").unwrap(),
        SeriesDefinition::new("R{seq:3}", Reset::Never, true, 1).unwrap(),
        Timestamp::now(),
    );
    // Written with its issuer's item, in one transaction: the same call again finds its
    // own series (the issuer's item has moved on, as the first call left it).
    let issuer = Issuer::new(IssuerId::deployment())
        .enter_existing(&series)
        .unwrap();
    let defined = entry(Action::SeriesDefined, "series/RESENT");
    for _ in 0..2 {
        assert!(matches!(
            app.store
                .insert_series(&series, Some(&issuer), &defined)
                .await
                .unwrap(),
            SeriesInsert::New
        ));
    }
    // J1: each write, repeated, is journalled once.
    assert_eq!(app.store.journal_head().await.unwrap().last, 2);
    // A client repeating its create after a 503 gets the draw; other settings conflict.
    let body = json!({"draw_id": "again", "name": "Spring", "total_tickets": 40});
    let first = app.create_draw(&body).await;
    let bought = json!({"payment_id": "p", "quantity": 1});
    assert!(
        app.post("/draws/again/purchases", &bought)
            .await
            .status
            .is_success()
    );
    let repeated = app.post("/draws", &body).await;
    assert_eq!(repeated.status, StatusCode::OK, "{}", repeated.body);
    assert_eq!(repeated.body["sold"], 1);
    assert_eq!(repeated.body["created_at"], first.body["created_at"]);
    let other = json!({"draw_id": "again", "name": "Autumn", "total_tickets": 40});
    assert_eq!(app.post("/draws", &other).await.code(), "draw_exists");
}

#[tokio::test]
async fn a_close_cut_short_reads_closing_until_a_repeat_finishes_it() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "half", "total_tickets": 400, "stripes": 8});
    app.create_draw(&draw).await;
    let warm = router(store_on(app.store.table(), None).await);
    let buy = |payment: &str| json!({"payment_id": payment, "quantity": 1});
    assert_eq!(
        post_json(&warm, "/draws/half/purchases", &buy("w1"))
            .await
            .status,
        StatusCode::CREATED
    );
    // A close that died after its first step and 3 of 8 stripes.
    let id = DrawId::parse("half").unwrap();
    app.store.set_draw_closing(&id).await.unwrap().unwrap();
    for stripe in [5, 6, 7] {
        app.store.close_stripe(&id, stripe).await.unwrap();
    }
    assert_eq!(app.get("/draws/half").await.body["status"], "closing");
    // A process that learns of the draw now refuses; none reads "closed" yet.
    let fresh = router(store_on(app.store.table(), None).await);
    let refused = post_json(&fresh, "/draws/half/purchases", &buy("n1")).await;
    assert_eq!(refused.code(), "draw_closed", "{}", refused.body);
    // The repeat finishes the job: every stripe is closed, then the draw.
    let closed = app.post("/draws/half/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK);
    assert_eq!(closed.body["status"], "closed");
    let items = app.scan().await;
    let stripes: Vec<&Item> = items
        .iter()
        .filter(|i| matches!(i.get("pk"), Some(AttributeValue::S(pk)) if pk.contains("#STRIPE#")))
        .collect();
    assert_eq!(stripes.len(), 8);
    assert!(
        stripes
            .iter()
            .all(|s| s.get("closed") == Some(&AttributeValue::Bool(true)))
    );
    let sold_before = of_kind(&items, "purchase").len();
    for (seller, payment) in [(&warm, "w2"), (&fresh, "n2")] {
        let late = post_json(seller, "/draws/half/purchases", &buy(payment)).await;
        assert_eq!(late.code(), "draw_closed", "{}", late.body);
    }
    assert_eq!(of_kind(&app.scan().await, "purchase").len(), sold_before);
}

/// Sets every stripe of a draw to one ticket left and every stripe end handed out, as the
/// end of a long sale leaves it (item attributes as the store writes them).
async fn leave_one_ticket_per_stripe(store: &Store, draw: &str, config: DrawConfig) {
    let layout = config.layout();
    for stripe in 0..config.stripes() {
        store
            .client()
            .put_item()
            .table_name(store.table())
            .item(
                "pk",
                AttributeValue::S(format!("DRAW#{draw}#STRIPE#{stripe}")),
            )
            .item("c", AttributeValue::N((layout.len(stripe) - 1).to_string()))
            .send()
            .await
            .unwrap();
    }
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key("pk", AttributeValue::S(format!("DRAW#{draw}")))
        .update_expression("SET opened = :all")
        .expression_attribute_values(
            ":all",
            AttributeValue::N((2 * config.stripes()).to_string()),
        )
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_purchase_no_transaction_can_hold_is_refused_without_a_write() {
    let (store, _table) = fresh_store(None).await;
    let config = DrawConfig::new(200, Some(50), Some(100)).unwrap();
    TicketService::new(store.clone())
        .create_draw(NewDraw::new(DrawId::parse("crumbs").unwrap(), config))
        .await
        .unwrap();
    leave_one_ticket_per_stripe(&store, "crumbs", config).await;
    let counter = RequestCounter::default();
    let seller = TicketService::new(store_on(store.table(), Some(counter.clone())).await);
    let request = |payment: &str, quantity| PurchaseRequest {
        draw_id: DrawId::parse("crumbs").unwrap(),
        payment_id: PaymentId::parse(payment).unwrap(),
        quantity,
        numbers: None,
        payer_id: None,
        token: None,
        channel: Default::default(),
        amount: None,
    };
    // 100 tickets left, one per stripe: 50 need 50 cursors, 50 tickets and the record.
    let refused = seller.purchase(request("whale", 50)).await;
    assert!(
        matches!(refused, Err(TicketError::TooFragmented { remaining: 100 })),
        "{refused:?}"
    );
    let sent = counter.snapshot();
    // The claim that reads the draw for a new process, then reads only.
    assert_eq!(
        (sent.of("UpdateItem"), sent.of("TransactWriteItems")),
        (1, 0),
        "{sent}"
    );
    let bought = seller.purchase(request("smaller", 49)).await.unwrap();
    assert_eq!(bought.purchase.tickets.len(), 49);
}

/// Sends raw bytes to a server and reads its whole answer (the request closes the
/// connection); an empty body reads as null.
async fn raw_exchange(address: std::net::SocketAddr, request: &[u8]) -> (u16, String, Value) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(body).unwrap()
    };
    (status, head.to_owned(), body)
}

#[tokio::test]
async fn requests_the_http_layer_refuses_get_a_bare_status_and_the_rest_problems() {
    let app = spawn_app().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(tally::api::local_server::serve(
        listener,
        router(app.store.clone()),
        std::future::pending(),
        tally::api::local_server::DEFAULT_HEADER_READ_TIMEOUT,
    ));
    let long = format!(
        "GET /draws/{} HTTP/1.1\r\nhost: {address}\r\n\r\n",
        "a".repeat(100_000)
    );
    let (status, head, body) = raw_exchange(address, long.as_bytes()).await;
    // hyper refuses it before the router, with a bare status as API Gateway would.
    assert_eq!(status, 414);
    assert!(head.contains("content-length: 0"), "{head}");
    assert_eq!(body, serde_json::Value::Null);
    let (status, _, body) = raw_exchange(
        address,
        format!("GET /draws/%FF HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\r\n")
            .as_bytes(),
    )
    .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (400, Some("invalid_draw_id"))
    );
    server.abort();
    // The order routes take up to 6 MiB, and their 413 says so.
    let huge = format!(
        r#"{{"series": "S", "orders": ["{}"]}}"#,
        "x".repeat(7 << 20)
    );
    let reply = post_raw(&app.router, "/orders/batch", "application/json", huge).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(reply.body["limit"], 6 * 1024 * 1024);
    assert!(reply.body["detail"].as_str().unwrap().contains("6291456"));
}

#[tokio::test]
async fn order_data_is_kept_and_compared_as_it_was_sent() {
    let app = spawn_app().await;
    let series = app
        .put(
            "/series/D",
            &json!({"format": "D{seq:4}", "reset": "never", "gapless": false}),
        )
        .await;
    assert_eq!(series.status, StatusCode::CREATED);
    let post = |data: &str| {
        format!(r#"{{"series": "D", "source": "shop", "external_ref": "r1", "data": {data}}}"#)
    };
    let sent = r#"{"n": 123456789012345678901234567890, "x": 1.0}"#;
    let created = post_raw(&app.router, "/orders", "application/json", post(sent)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert!(created.raw.contains(sent), "{}", created.raw);
    let read = app.get("/sources/shop/orders/r1").await;
    assert!(read.raw.contains(sent), "{}", read.raw);
    // The same data with its keys in another order and other spacing is the same order.
    let reordered = r#"{ "x":1.0 , "n":123456789012345678901234567890 }"#;
    let again = post_raw(&app.router, "/orders", "application/json", post(reordered)).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body["order_number"], created.body["order_number"]);
    // 1 is not 1.0, and a key given twice is refused.
    let other = r#"{"n": 123456789012345678901234567890, "x": 1}"#;
    let changed = post_raw(&app.router, "/orders", "application/json", post(other)).await;
    assert_eq!(changed.code(), "idempotency_conflict");
    let twice = post_raw(
        &app.router,
        "/orders",
        "application/json",
        r#"{"series": "D", "source": "shop", "external_ref": "r2", "data": {"a": 1, "a": 2}}"#
            .into(),
    )
    .await;
    assert_eq!(twice.code(), "invalid_data");
}

#[tokio::test]
async fn a_cursor_the_api_never_gave_is_refused_before_any_request_to_the_table() {
    let counter = RequestCounter::default();
    let (store, _table) = fresh_store(Some(counter.clone())).await;
    let router = router(store);
    let draw = post_json(
        &router,
        "/draws",
        &json!({"draw_id": "c", "total_tickets": 10}),
    )
    .await;
    assert_eq!(draw.status, StatusCode::CREATED);
    let series = crate::helpers::send_raw(
        &router,
        axum::http::Method::PUT,
        "/series/C",
        "application/json",
        json!({"format": "C{seq:3}", "reset": "never", "gapless": false}).to_string(),
    )
    .await;
    assert_eq!(series.status, StatusCode::CREATED);
    // A time written with 39,000 digits of fraction (a 53 KB cursor) reads as the same
    // instant: DynamoDB
    // Local takes such a start key, DynamoDB refuses a sort key over 1,024 bytes.
    let long_time = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        format!("2026-11-29T10:15:02.{}Z#c", "0".repeat(39_000)),
    );
    let long_counter = "0".repeat(53_000);
    let before = counter.snapshot();
    for (path, cursor) in [
        ("/draws", "abc"),
        ("/draws", long_time.as_str()),
        ("/draws/c/payers/ann/purchases", "abc"),
        ("/draws/c/payers/ann/purchases", long_time.as_str()),
        ("/series/C/orders", "abc"),
        ("/series/C/orders", "64"),
        ("/series/C/orders", long_counter.as_str()),
    ] {
        let reply = crate::helpers::get(&router, &format!("{path}?cursor={cursor}")).await;
        assert_eq!(
            (reply.status, reply.code()),
            (StatusCode::BAD_REQUEST, "invalid_cursor"),
            "{path} {cursor:.40}: {}",
            reply.body
        );
    }
    let sent = counter.snapshot().since(&before);
    assert_eq!(sent.total(), 0, "{sent}");
}
