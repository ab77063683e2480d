//! Callers bound to their sources: behind API Gateway, the IAM identity of the request
//! context decides which sources a caller may post, repost and read as, and no route
//! shows it another source's orders or lets it correct them. Without bindings (the local
//! server) everything stays allowed; with bindings, a request without an identity is
//! refused.

mod sources;
mod tokens;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use lambda_http::RequestExt;
use lambda_http::request::RequestContext;
use serde_json::{Value, json};
use tally::api::{self, AppState};
use tally::settings::SourceBindings;
use tally::store::Store;

use crate::events::invoke;
use crate::helpers::assert_problem;
use crate::helpers::{
    Reply, TestTable, fresh_store, get, of_kind, patch, post_json, put_json, scan, send,
};

const BINDINGS: &str = "arn:aws:iam::123456789012:role/erp-connector=erp-1;\
                        arn:aws:iam::123456789012:role/web-shop=shop;\
                        arn:aws:iam::123456789012:role/raffle-operator=*;\
                        jwt:https://auth.example.com/#shop-backend=shop";

/// The role of the ERP connector, bound to `erp-1`, and that of the web shop, bound to
/// `shop`: event files whose request context carries each identity. A token of the shop's
/// backend (outside AWS), bound to `shop` too.
const ERP: &str = "get-order-by-ref.json";
const SHOP: &str = "get-order-by-ref-foreign.json";
const SHOP_TOKEN: &str = "get-order-by-ref-jwt.json";
/// The operators' role, bound to every source: it defines and changes series.
const OPS: &str = "patch-draw.json";

/// A request as the caller of the event file `as_of` (its request context, so its
/// identity), with `body` as JSON when there is one.
async fn send_as(
    router: &axum::Router,
    as_of: &str,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Reply {
    let file = format!("{}/events/{as_of}", env!("CARGO_MANIFEST_DIR"));
    let event = lambda_http::request::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let context = event.request_context();
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.map_or_else(Body::empty, |body| Body::from(body.to_string())))
        .unwrap()
        .with_request_context(context);
    send(router, request).await
}

/// A GET as the caller of the event file `as_of`.
async fn get_as(router: &axum::Router, as_of: &str, path: &str) -> Reply {
    send_as(router, as_of, Method::GET, path, None).await
}

/// A POST of `body` as the caller of the event file `as_of`.
async fn post_as(router: &axum::Router, as_of: &str, path: &str, body: &Value) -> Reply {
    send_as(router, as_of, Method::POST, path, Some(body)).await
}

/// Voids invoice `number` of series `UA` as the caller of the event file `as_of`.
async fn void_as(router: &axum::Router, as_of: &str, number: &str) -> Reply {
    let path = format!("/series/UA/orders/{number}/void");
    post_as(router, as_of, &path, &json!({"reason": "cancelled"})).await
}

/// The order router of a deployment that binds the ERP's and the web shop's roles.
async fn bound_router() -> (axum::Router, Store, TestTable) {
    let (store, table) = fresh_store(None).await;
    let mut state = AppState::new(store.clone());
    state.sources = Arc::new(SourceBindings::parse(BINDINGS).unwrap());
    (api::orders_router(state), store, table)
}
