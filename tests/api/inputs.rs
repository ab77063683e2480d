//! What a caller sends that must not be kept as sent: a leap second that other parsers
//! refuse, a payer id that passes for another, free text that breaks lines or reorders
//! what it shows, query parameters a route does not take.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};

use crate::helpers::{TestApp, assert_problem, of_kind, send, spawn_app};

/// The reply's `detail`.
fn detail(reply: &crate::helpers::Reply) -> &str {
    reply.body["detail"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_leap_second_is_refused_wherever_a_time_is_given() {
    let app = spawn_app().await;
    let leap = "2099-06-30T23:59:60.5Z";
    let closes = app
        .post(
            "/draws",
            &json!({"draw_id": "d1", "total_tickets": 10, "closes_at": leap}),
        )
        .await;
    assert_problem(&closes, StatusCode::BAD_REQUEST, "invalid_closes_at");
    assert!(detail(&closes).contains("leap second"), "{}", closes.body);
    let opens = app
        .post(
            "/draws",
            &json!({"draw_id": "d2", "total_tickets": 10, "opens_at": leap,
                    "closes_at": "2099-07-01T00:00:00Z"}),
        )
        .await;
    assert_problem(&opens, StatusCode::BAD_REQUEST, "invalid_opens_at");
    let ranges = json!({"format": "R{seq:4}", "reset": "never", "ranges": [
        {"from": 1, "to": 100, "authority_ref": "CAF-1", "valid_until": leap}]});
    let series = app.put("/series/R", &ranges).await;
    assert_problem(&series, StatusCode::BAD_REQUEST, "invalid_ranges");
    assert!(detail(&series).contains("leap second"), "{}", series.body);

    // A millisecond earlier is taken, and answered as it was sent.
    let before = "2099-06-30T23:59:59.999Z";
    let draw = app
        .create_draw(&json!({"draw_id": "d3", "total_tickets": 10, "closes_at": before}))
        .await;
    assert_eq!(draw.body["closes_at"], before);
    assert_eq!(of_kind(&app.scan().await, "draw").len(), 1);
}

/// A draw that caps tickets per payer, and one purchase of `payer`.
async fn capped_draw_with_a_purchase(app: &TestApp, payer: &str) {
    app.create_draw(&json!({"draw_id": "capped", "total_tickets": 100, "max_per_payer": 2}))
        .await;
    let first = app
        .post(
            "/draws/capped/purchases",
            &json!({"payment_id": "p0", "quantity": 2, "payer_id": payer}),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
}

#[tokio::test]
async fn a_payer_id_that_looks_like_another_is_refused_not_counted_apart() {
    let app = spawn_app().await;
    capped_draw_with_a_purchase(&app, "cust").await;
    // Each looks like `cust` (or like `cust 1`) and would be another payer with a cap of
    // its own.
    for (k, look_alike) in [
        "cust\u{2800}",
        "cust\u{00A0}",
        "\u{FF43}ust",
        "cust\u{3000}1",
        "cust\u{2003}1",
        "cu\u{200B}st",
        "cu\u{FB06}",
    ]
    .into_iter()
    .enumerate()
    {
        let body =
            json!({"payment_id": format!("p{}", k + 1), "quantity": 1, "payer_id": look_alike});
        let reply = app.post("/draws/capped/purchases", &body).await;
        assert_problem(&reply, StatusCode::BAD_REQUEST, "invalid_payer_id");
        assert!(detail(&reply).contains("U+"), "{}", reply.body);
        let hold = json!({"hold_id": format!("h{k}"), "quantity": 1, "payer_id": look_alike});
        let held = app.post("/draws/capped/holds", &hold).await;
        assert_problem(&held, StatusCode::BAD_REQUEST, "invalid_payer_id");
    }
    let listed = app
        .get("/draws/capped/payers/cust%E2%A0%80/purchases")
        .await;
    assert_problem(&listed, StatusCode::BAD_REQUEST, "invalid_payer_id");
    // The payer is at its cap, whatever it calls itself.
    let again = json!({"payment_id": "p9", "quantity": 1, "payer_id": "cust"});
    let capped = app.post("/draws/capped/purchases", &again).await;
    assert_problem(&capped, StatusCode::CONFLICT, "payer_limit");
    assert_eq!(of_kind(&app.scan().await, "purchase").len(), 1);
}

#[tokio::test]
async fn free_text_with_a_line_separator_or_a_bidirectional_control_is_refused_everywhere() {
    let app = spawn_app().await;
    app.create_draw(&json!({"draw_id": "d", "total_tickets": 10}))
        .await;
    let bought = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "p1", "quantity": 1}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    app.define_series("S", &json!({"format": "S{seq:4}", "reset": "never"}))
        .await;
    let order = app
        .post(
            "/orders",
            &json!({"series": "S", "source": "erp", "external_ref": "o1"}),
        )
        .await;
    let number = order.body["order_number"].as_str().unwrap().to_owned();

    for bad in [
        "line\u{2028}break",
        "\u{202E}fdp.exe",
        "isolate\u{2066}d\u{2069}",
        "mark\u{200F}",
    ] {
        let refused: Vec<(Value, &str)> = vec![
            (
                app.post(
                    "/draws",
                    &json!({"draw_id": "n", "total_tickets": 10, "name": bad}),
                )
                .await
                .body,
                "invalid_name",
            ),
            (
                app.post(
                    "/draws",
                    &json!({"draw_id": "i", "total_tickets": 10,
                            "instant_wins": [{"prize": bad, "count": 1}]}),
                )
                .await
                .body,
                "invalid_instant_wins",
            ),
            (
                app.post(
                    "/draws/d/purchases",
                    &json!({"payment_id": "p2", "quantity": 1, "token": bad}),
                )
                .await
                .body,
                "invalid_token",
            ),
            (
                app.post("/draws/d/purchases/p1/void", &json!({"reason": bad}))
                    .await
                    .body,
                "invalid_reason",
            ),
            (
                app.post(
                    &format!("/series/S/orders/{number}/void"),
                    &json!({"reason": bad}),
                )
                .await
                .body,
                "invalid_reason",
            ),
            (
                app.patch("/series/S", &json!({"next": 10, "reason": bad}))
                    .await
                    .body,
                "invalid_reason",
            ),
            (
                app.put(
                    "/series/T",
                    &json!({"format": "T{seq:4}", "reset": "never",
                            "ranges": [{"from": 1, "to": 9, "authority_ref": bad}]}),
                )
                .await
                .body,
                "invalid_ranges",
            ),
        ];
        for (body, code) in refused {
            assert_eq!(
                (body["status"].as_u64(), body["code"].as_str()),
                (Some(400), Some(code)),
                "{bad:?}: {body}"
            );
        }
    }
    // Nothing of it was kept: one draw and its purchase, live; the order live; no series T.
    let items = app.scan().await;
    assert_eq!(of_kind(&items, "draw").len(), 1);
    assert_eq!(
        app.get("/draws/d/purchases/p1").await.body["status"],
        "active"
    );
    assert_eq!(
        app.get(&format!("/series/S/orders/{number}")).await.body["status"],
        "active"
    );
    assert_eq!(app.get("/series/T").await.status, StatusCode::NOT_FOUND);
    // Text of any script, with its own marks, is taken.
    let named = app
        .create_draw(
            &json!({"draw_id": "named", "total_tickets": 10, "name": "سحب الصيف – Été 2026"}),
        )
        .await;
    assert_eq!(named.body["name"], "سحب الصيف – Été 2026");
}

#[tokio::test]
async fn every_route_refuses_a_query_parameter_it_does_not_take() {
    let app = spawn_app().await;
    let document = serde_json::to_value(tally::api::openapi()).unwrap();
    let mut refused = 0;
    for (route, item) in document["paths"].as_object().unwrap() {
        // Any value of the right shape: the query is refused before the path is read.
        let path: Vec<&str> = route
            .split('/')
            .map(|part| if part.starts_with('{') { "1" } else { part })
            .collect();
        for method in item.as_object().unwrap().keys() {
            let request = Request::builder()
                .method(method.to_ascii_uppercase().as_str())
                .uri(format!("{}?unknown=1", path.join("/")))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from("{}"))
                .unwrap();
            let reply = send(&app.router, request).await;
            assert_problem(&reply, StatusCode::BAD_REQUEST, "invalid_query");
            assert!(detail(&reply).ends_with("not `unknown`"), "{}", reply.body);
            refused += 1;
        }
    }
    assert!(refused >= 28, "only {refused} operations");
    assert!(
        app.scan().await.is_empty(),
        "a refused request wrote something"
    );

    // What a route takes it still takes; an empty query is no parameter.
    for path in ["/draws?limit=5&status=open", "/draws?", "/draws?&"] {
        assert_eq!(app.get(path).await.status, StatusCode::OK, "{path}");
    }
    let listed = app.get("/draws?limit=5&x=1").await;
    assert_problem(&listed, StatusCode::BAD_REQUEST, "invalid_query");
    assert!(detail(&listed).contains("`status`"), "{}", listed.body);
}

#[tokio::test]
async fn a_payer_id_of_dots_alone_is_refused_as_a_url_would_resolve_it_away() {
    let app = spawn_app().await;
    capped_draw_with_a_purchase(&app, "cust").await;
    for (k, dots) in [".", ".."].into_iter().enumerate() {
        let body = json!({"payment_id": format!("d{k}"), "quantity": 1, "payer_id": dots});
        let reply = app.post("/draws/capped/purchases", &body).await;
        assert_problem(&reply, StatusCode::BAD_REQUEST, "invalid_payer_id");
        let limits = json!({"limits": {"GBP": {"day": 1}}});
        let path = format!("/payers/{}/limits", dots.replace('.', "%2E"));
        let set = app.put(&path, &limits).await;
        assert_problem(&set, StatusCode::BAD_REQUEST, "invalid_payer_id");
    }
}
