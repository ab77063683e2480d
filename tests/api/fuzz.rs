//! Nested, long and malformed input through every way in: each route of the OpenAPI
//! document with bodies and query strings, SQS messages, and import files (JSON lines and
//! CSV). Every answer is a 2xx, a 4xx problem of a few KiB or a 503 with `Retry-After`,
//! never a 500, and the process survives: a stack overflow would abort this test binary.
//!
//! A fixed set of cases runs in `make test`; `TALLY_FUZZ_CASES=N` adds N random ones
//! (`scripts/fuzz.sh` runs many).

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use tally::orders::OrderService;
use tally::queue::handle_delivery;
use tower::ServiceExt;

use crate::helpers::{TestApp, spawn_app};
use crate::queue::{a_minute, delivery};

/// `depth` levels of arrays around `leaf`.
fn arrays(depth: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", "[".repeat(depth), "]".repeat(depth))
}

/// `depth` levels of objects around `leaf`.
fn objects(depth: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

/// Values that are deep, long or out of every range, for any one field.
fn hostile_values() -> Vec<String> {
    let mut values = Vec::new();
    for depth in [33, 129, 600, 5_000, 30_000] {
        values.push(arrays(depth, "1"));
        values.push(objects(depth, "1"));
    }
    values.extend([
        format!("\"{}\"", "x".repeat(70_000)),
        format!("\"{}\"", "\\u0000".repeat(1_000)),
        "\"\\ud800\"".to_owned(),
        "-1e999999".to_owned(),
        "18446744073709551616".to_owned(),
        format!("{{{}\"a\": 1}}", r#""a": 1, "#.repeat(5_000)),
        "null".to_owned(),
    ]);
    values
}

/// Whole bodies that are not what any route takes.
fn hostile_bodies() -> Vec<Vec<u8>> {
    let mut bodies: Vec<Vec<u8>> = hostile_values()
        .into_iter()
        .map(String::into_bytes)
        .collect();
    bodies.extend([
        b"".to_vec(),
        b"\xff\xfe\x00{".to_vec(),
        b"{\"a\": 1,}".to_vec(),
        "[".repeat(70_000).into_bytes(),
        r#"{"a":"#.repeat(20_000).into_bytes(),
        format!("{{\"k\": \"{}", "\\".repeat(10_001)).into_bytes(),
    ]);
    bodies
}

/// Every field a route's body names in the OpenAPI document.
fn body_fields(document: &Value, operation: &Value) -> Vec<String> {
    let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
    let schema = match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap();
            &document["components"]["schemas"][name]
        }
        None => schema,
    };
    schema["properties"]
        .as_object()
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// Each route of the document: method, path with the test's ids, and body fields.
fn routes() -> Vec<(Method, String, Vec<String>)> {
    let document: Value = serde_json::from_str(&tally::api::openapi_json()).unwrap();
    let mut routes = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        let path = path
            .replace("{draw_id}", "fz")
            .replace("{payment_id}", "p1")
            .replace("{hold_id}", "h1")
            .replace("{payer_id}", "ann")
            .replace("{number}", "1")
            .replace("{prize}", "1")
            .replace("{series_id}", "FZ")
            .replace("{order_number}", "FZ0001")
            .replace("{source}", "shop")
            .replace("{external_ref}", "r1");
        assert!(
            !path.contains('{'),
            "a path parameter without a test value: {path}"
        );
        for (method, operation) in item.as_object().unwrap() {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            routes.push((method, path.clone(), body_fields(&document, operation)));
        }
    }
    routes
}

/// The most a problem document weighs, whatever the request held.
const MAX_PROBLEM_BYTES: usize = 4 * 1024;

/// Sends one request and checks the answer's shape; panics with the case on a 500, an
/// answer that is not a problem document or one past [`MAX_PROBLEM_BYTES`].
async fn exchange(app: &TestApp, method: &Method, uri: &str, body: Vec<u8>) -> StatusCode {
    let request = Request::builder()
        .method(method.clone())
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap();
    let response = app.router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let retry_after = response.headers().contains_key(header::RETRY_AFTER);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let shown = || {
        format!(
            "{method} {:.200}: {status} {:.300}",
            uri,
            String::from_utf8_lossy(&bytes)
        )
    };
    assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{}", shown());
    if status.is_client_error() || status.is_server_error() {
        assert_eq!(content_type, "application/problem+json", "{}", shown());
        // What was sent is shown back cut: a problem never grows with it.
        assert!(bytes.len() <= MAX_PROBLEM_BYTES, "{}", shown());
        let problem: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(problem["code"].is_string(), "{}", shown());
    }
    if status == StatusCode::SERVICE_UNAVAILABLE {
        assert!(retry_after, "{}", shown());
    }
    status
}

/// The draw, purchase, series and order the routes' ids name, so that requests reach past
/// the lookups.
async fn furnish(app: &TestApp) {
    let draw = app
        .post("/draws", &json!({"draw_id": "fz", "total_tickets": 100}))
        .await;
    assert_eq!(draw.status, StatusCode::CREATED, "{}", draw.body);
    let bought = app
        .post(
            "/draws/fz/purchases",
            &json!({"payment_id": "p1", "quantity": 1, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let series = app
        .put(
            "/series/FZ",
            &json!({"format": "FZ{seq:4}", "reset": "never", "gapless": false}),
        )
        .await;
    assert_eq!(series.status, StatusCode::CREATED, "{}", series.body);
    let order = app
        .post(
            "/orders",
            &json!({"series": "FZ", "source": "shop", "external_ref": "r1"}),
        )
        .await;
    assert_eq!(order.status, StatusCode::CREATED, "{}", order.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_long_and_malformed_requests_on_every_route_are_answered() {
    let app = spawn_app().await;
    furnish(&app).await;
    let routes = routes();
    assert!(routes.len() >= 20, "{} routes", routes.len());
    let values = hostile_values();
    let bodies = hostile_bodies();
    let queries = [
        format!("cursor={}", "A".repeat(60_000)),
        format!("limit={}", "[".repeat(1_000)),
        "cursor=%FF%FE&limit=-1".to_owned(),
        "a[b][c][d]=1&a[b][c][d]=2".to_owned(),
        format!("period={}", "9".repeat(5_000)),
    ];
    let mut sent = 0;
    for (method, path, fields) in &routes {
        for body in &bodies {
            exchange(&app, method, path, body.clone()).await;
            sent += 1;
        }
        for field in fields {
            for value in &values {
                let body = format!("{{\"{field}\": {value}}}");
                exchange(&app, method, path, body.into_bytes()).await;
                sent += 1;
            }
        }
        for query in &queries {
            exchange(&app, method, &format!("{path}?{query}"), Vec::new()).await;
            sent += 1;
        }
    }
    let extra = std::env::var("TALLY_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let mut rng = StdRng::seed_from_u64(18);
    for _ in 0..extra {
        let (method, path, fields) = &routes[rng.random_range(0..routes.len())];
        exchange(&app, method, path, random_body(&mut rng, fields)).await;
        sent += 1;
    }
    // Still serving, and nothing the cases sent was numbered twice or left half-written.
    let draw = app.get("/draws/fz").await;
    assert_eq!(
        draw.status,
        StatusCode::OK,
        "after {sent} requests: {}",
        draw.body
    );
    let audit = app.get("/series/FZ/audit?period=all").await;
    assert_eq!(audit.status, StatusCode::OK, "{}", audit.body);
    assert!(
        audit.body["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["cause"] != "missing")
    );
}

/// A random mix of JSON fragments, known field names, deep openings and stray bytes.
fn random_body(rng: &mut StdRng, fields: &[String]) -> Vec<u8> {
    let mut body = b"{".to_vec();
    let pieces = rng.random_range(1..200);
    for _ in 0..pieces {
        match rng.random_range(0..9) {
            0 if !fields.is_empty() => {
                let field = &fields[rng.random_range(0..fields.len())];
                body.extend(format!("\"{field}\":").bytes());
            }
            1 => body.extend("[".repeat(rng.random_range(1..2_000)).bytes()),
            2 => body.extend(r#"{"k":"#.repeat(rng.random_range(1..500)).bytes()),
            3 => body.extend("]}".repeat(rng.random_range(1..50)).bytes()),
            4 => body.extend("x".repeat(rng.random_range(1..20_000)).bytes()),
            5 => body.extend(br#""\ud800\\\"""#),
            6 => body.push(rng.random()),
            7 => body.extend(b"1e99999,"),
            _ => body.extend(b"\"s\","),
        }
    }
    body
}

#[tokio::test]
async fn nested_long_and_malformed_messages_are_rejected_alone() {
    let app = spawn_app().await;
    furnish(&app).await;
    let orders = OrderService::new(app.store.clone());
    let deep_data = |depth: usize| {
        format!(
            r#"{{"series": "FZ", "source": "q", "external_ref": "d{depth}", "data": {{"k": {}}}}}"#,
            arrays(depth, "1")
        )
    };
    let mut bodies: Vec<String> = hostile_values();
    bodies.extend([deep_data(560), deep_data(8_000), deep_data(31)]);
    bodies.push(format!(
        r#"{{"series": "FZ", "source": "q", "orders": [{{"external_ref": "b1"}}, {{"external_ref": "b2", "data": {{"k": {}}}}}]}}"#,
        arrays(600, "1")
    ));
    let response = handle_delivery(&orders, delivery(&bodies), a_minute()).await;
    // Nothing here may pass later: no message is sent back for redelivery.
    assert!(
        response.batch_item_failures.is_empty(),
        "{:?}",
        response.batch_item_failures
    );
    // Only the order within the limit and the batch's valid item were numbered.
    for (reference, status) in [
        ("d31", StatusCode::OK),
        ("b1", StatusCode::OK),
        ("d560", StatusCode::NOT_FOUND),
        ("b2", StatusCode::NOT_FOUND),
    ] {
        let found = app.get(&format!("/sources/q/orders/{reference}")).await;
        assert_eq!(found.status, status, "{reference}: {}", found.body);
    }
}

#[tokio::test]
async fn order_data_nested_past_the_limit_is_invalid_data_naming_it() {
    let app = spawn_app().await;
    furnish(&app).await;
    // 560 levels in 1.1 KB once took the process down.
    let deep = format!(
        r#"{{"series": "FZ", "source": "shop", "external_ref": "deep", "data": {{"k": {}}}}}"#,
        arrays(560, "1")
    );
    let refused = crate::helpers::post_raw(&app.router, "/orders", "application/json", deep).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(refused.code(), "invalid_data");
    assert!(
        refused.body["detail"]
            .as_str()
            .unwrap()
            .contains("32 levels"),
        "{}",
        refused.body
    );
    // In a batch, the deep item alone is rejected.
    let batch = format!(
        r#"{{"series": "FZ", "source": "shop", "orders": [{{"external_ref": "ok"}}, {{"external_ref": "deep", "data": {{"k": {}}}}}]}}"#,
        arrays(600, "1")
    );
    let reply =
        crate::helpers::post_raw(&app.router, "/orders/batch", "application/json", batch).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["results"][0]["status"], "created");
    assert_eq!(reply.body["results"][1]["code"], "invalid_data");
    // 32 levels, the object itself included, pass.
    let limit = format!(
        r#"{{"series": "FZ", "source": "shop", "external_ref": "edge", "data": {{"k": {}}}}}"#,
        arrays(31, "1")
    );
    let created = crate::helpers::post_raw(&app.router, "/orders", "application/json", limit).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
}
