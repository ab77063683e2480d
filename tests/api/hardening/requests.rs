//! Requests an attacker sends: ones the HTTP layer refuses, order data that JSON would
//! round, cursors the API never gave or gave for another series, period or route.

use super::*;

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
    // The order routes take up to their own limit, and their 413 says so.
    let limit = tally::api::MAX_ORDER_BODY_BYTES;
    let huge = format!(r#"{{"series": "S", "orders": ["{}"]}}"#, "x".repeat(limit));
    let reply = post_raw(&app.router, "/orders/batch", "application/json", huge).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(reply.body["limit"], limit);
    assert!(
        reply.body["detail"]
            .as_str()
            .unwrap()
            .contains(&limit.to_string())
    );
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
    // Well formed, but with an id a payment may have and a draw may not.
    let dotted = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        "2026-11-29T10:15:02.318Z#a.b",
    );
    let before = counter.snapshot();
    for (path, cursor) in [
        ("/draws", "abc"),
        ("/draws", long_time.as_str()),
        ("/draws", dotted.as_str()),
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

/// A cursor given for another series, period or route is refused once the request's period
/// is known: a process that has read the series knows it without the table, and sends
/// nothing.
#[tokio::test]
async fn a_cursor_given_elsewhere_is_refused_before_any_query() {
    let counter = RequestCounter::default();
    let (store, _table) = fresh_store(Some(counter.clone())).await;
    let router = router(store);
    for id in ["F", "G"] {
        let format = format!("{id}{{yyyy}}{{mm}}{{dd}}-{{seq:3}}");
        let series = json!({"format": format, "reset": "daily", "gapless": false});
        let defined = crate::helpers::put_json(&router, &format!("/series/{id}"), &series).await;
        assert_eq!(defined.status, StatusCode::CREATED, "{}", defined.body);
        let orders = json!({"series": id, "source": "shop", "orders": [
            {"external_ref": "a"}, {"external_ref": "b"}
        ]});
        let created = post_json(&router, "/orders/batch", &orders).await;
        assert_eq!(created.status, StatusCode::OK, "{}", created.body);
    }
    let first = crate::helpers::get(&router, "/series/F/orders?limit=1").await;
    let cursor = first.body["next_cursor"].as_str().unwrap();
    let today = first.body["period"].as_str().unwrap();
    let other_day = if today == "2026-01-01" {
        "2026-01-02"
    } else {
        "2026-01-01"
    };
    // An audit of F's period from its start.
    let start = tally_domain::audit::AuditState {
        expected: 1,
        orders: 0,
        voided: 0,
        links: 0,
        previous: tally_domain::chain::GENESIS,
        broken_at: None,
    };
    let period = tally_domain::series::Period::parse(Reset::Daily, today).unwrap();
    let audit = tally::api::audit_page_token(&SeriesId::parse("F").unwrap(), &period, &start);
    // G read once, as by any earlier request of the process.
    crate::helpers::get(&router, "/series/G/orders?limit=1").await;
    let before = counter.snapshot();
    for path in [
        format!("/series/G/orders?cursor={cursor}"),
        format!("/series/F/orders?period={other_day}&cursor={cursor}"),
        format!("/series/F/audit?cursor={cursor}"),
        format!("/series/G/audit?cursor={audit}"),
        format!("/series/F/audit?period={other_day}&cursor={audit}"),
        format!("/series/F/orders?cursor={audit}"),
    ] {
        let reply = crate::helpers::get(&router, &path).await;
        assert_eq!(
            (reply.status, reply.code()),
            (StatusCode::BAD_REQUEST, "invalid_cursor"),
            "{path}: {}",
            reply.body
        );
    }
    let sent = counter.snapshot().since(&before);
    assert_eq!(sent.total(), 0, "{sent}");
}
