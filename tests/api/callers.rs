//! Callers bound to their sources: behind API Gateway, the IAM identity of the request
//! context decides which sources a caller may post, repost and read as, and no route
//! shows it another source's orders. Without IAM (the local server) everything stays
//! allowed.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use lambda_http::RequestExt;
use tally::api::{self, AppState, SourceBindings};

use crate::events::invoke;
use crate::helpers::assert_problem;
use crate::helpers::{Reply, fresh_store, send};

const BINDINGS: &str = "arn:aws:iam::123456789012:role/erp-connector=erp-1;\
                        arn:aws:iam::123456789012:role/web-shop=shop";

/// A GET as the caller of the event file `as_of` (its request context, so its identity).
async fn get_as(router: &axum::Router, as_of: &str, path: &str) -> Reply {
    let file = format!("{}/events/{as_of}", env!("CARGO_MANIFEST_DIR"));
    let event = lambda_http::request::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let context = event.request_context();
    let request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .body(Body::empty())
        .unwrap()
        .with_request_context(context);
    send(router, request).await
}

#[tokio::test]
async fn a_foreign_caller_is_refused_another_sources_post_repost_and_read() {
    let (store, _table) = fresh_store(None).await;
    let mut state = AppState::new(store);
    state.sources = Arc::new(SourceBindings::parse(BINDINGS).unwrap());
    let router = api::orders_router(state);
    assert_eq!(
        invoke(&router, "put-series.json").await.status,
        StatusCode::CREATED
    );
    let order = invoke(&router, "create-order.json").await;
    assert_eq!(order.status, StatusCode::CREATED, "{}", order.body);
    let by_path = invoke(&router, "create-series-order.json").await;
    assert_eq!(by_path.status, StatusCode::CREATED, "{}", by_path.body);
    assert_eq!(by_path.body["series"], "UABC");
    let batch = invoke(&router, "create-series-order-batch.json").await;
    let created: Vec<&str> = batch.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(created, ["created", "created"], "{}", batch.body);

    // The web shop's role posts, reposts and reads as erp-1: refused each time.
    let post = invoke(&router, "create-series-order-foreign.json").await;
    assert_problem(&post, StatusCode::FORBIDDEN, "source_not_allowed");
    let repost = invoke(&router, "create-order-foreign.json").await;
    assert_problem(&repost, StatusCode::FORBIDDEN, "source_not_allowed");
    let read = invoke(&router, "get-order-by-ref-foreign.json").await;
    assert_problem(&read, StatusCode::FORBIDDEN, "source_not_allowed");
    assert!(!read.raw.contains("C-1042"), "{}", read.raw);
    // The ERP's own role reads its order.
    let own = invoke(&router, "get-order-by-ref.json").await;
    assert_eq!(own.body, order.body);

    // By number and in listings, erp-1's orders do not exist for the web shop.
    let number = order.body["order_number"].as_str().unwrap();
    let foreign = "get-order-by-ref-foreign.json";
    for path in [
        format!("/orders/{number}"),
        format!("/series/UABC/orders/{number}"),
    ] {
        let reply = get_as(&router, foreign, &path).await;
        assert_problem(&reply, StatusCode::NOT_FOUND, "order_not_found");
        let mine = get_as(&router, "get-order-by-ref.json", &path).await;
        assert_eq!(mine.status, StatusCode::OK, "{path}: {}", mine.body);
    }
    let listed = get_as(&router, foreign, "/series/UABC/orders").await;
    assert_eq!(
        listed.body["orders"],
        serde_json::json!([]),
        "{}",
        listed.body
    );
    let listed = get_as(&router, "get-order-by-ref.json", "/series/UABC/orders").await;
    assert_eq!(listed.body["orders"].as_array().unwrap().len(), 4);
    // Nothing was written for the web shop.
    let repost_again = invoke(&router, "create-order-foreign.json").await;
    assert_eq!(repost_again.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn without_bindings_or_without_iam_every_source_is_allowed() {
    let (store, _table) = fresh_store(None).await;
    let router = api::orders_router(AppState::new(store));
    assert_eq!(
        invoke(&router, "put-series.json").await.status,
        StatusCode::CREATED
    );
    let post = invoke(&router, "create-series-order-foreign.json").await;
    assert_eq!(post.status, StatusCode::CREATED, "{}", post.body);
    // The local server's requests carry no IAM identity.
    let (store, _other_table) = fresh_store(None).await;
    let mut state = AppState::new(store);
    state.sources = Arc::new(SourceBindings::parse(BINDINGS).unwrap());
    let router = api::orders_router(state);
    let series = serde_json::json!({"format": "L{seq:3}", "reset": "never"});
    let reply = crate::helpers::send_raw(
        &router,
        Method::PUT,
        "/series/L",
        "application/json",
        series.to_string(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let order = serde_json::json!({"source": "anyone", "external_ref": "x"});
    let posted = crate::helpers::post_json(&router, "/series/L/orders", &order).await;
    assert_eq!(posted.status, StatusCode::CREATED, "{}", posted.body);
}
