//! A request's clocks start when API Gateway received it (`timeEpoch`): a cold start's
//! initialisation counts, so the answer comes within the 30 s API Gateway waits. A stored
//! event's old `timeEpoch` (a test's, `sam local invoke`'s) starts them on arrival.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use lambda_http::RequestExt;
use lambda_http::aws_lambda_events::apigw::ApiGatewayV2httpRequestContext;
use lambda_http::request::RequestContext;

use tally::api::{self, AppState};

use crate::helpers::{assert_problem, fresh_store, send};

/// `GET /draws/missing` as API Gateway received it `ago_ms` milliseconds ago.
fn received(ago_ms: i64) -> Request<Body> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mut context = ApiGatewayV2httpRequestContext::default();
    context.time_epoch = now - ago_ms;
    Request::builder()
        .uri("/draws/missing")
        .body(Body::empty())
        .unwrap()
        .with_request_context(RequestContext::ApiGatewayV2(context))
}

#[tokio::test]
async fn the_request_timeout_runs_from_when_api_gateway_received_the_request() {
    let (store, _table) = fresh_store(None).await;
    let state = AppState {
        request_timeout: Duration::from_secs(20),
        ..AppState::new(store)
    };
    let router = api::router(state);
    // Received 25 s ago: its 20 s were spent before the router had it.
    let late = send(&router, received(25_000)).await;
    assert_problem(&late, StatusCode::SERVICE_UNAVAILABLE, "outcome_unknown");
    assert!(late.headers.contains_key("retry-after"));
    let fresh = send(&router, received(100)).await;
    assert_problem(&fresh, StatusCode::NOT_FOUND, "draw_not_found");
    // A stored event's time, days old: its clocks start now.
    let stored = send(&router, received(5 * 24 * 3_600_000)).await;
    assert_problem(&stored, StatusCode::NOT_FOUND, "draw_not_found");
}
