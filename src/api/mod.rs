//! The HTTP API: one router, served by Lambda and by the local server alike.

mod extract;
mod orders;
mod problem;
mod tickets;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use tracing::{Instrument, info, info_span};

pub use extract::MAX_BODY_BYTES;
pub use orders::MAX_ORDER_BODY_BYTES;
pub use problem::Problem;

use crate::orders::OrderService;
use crate::store::{Store, StoreConfig};
use crate::tickets::TicketService;

/// What the handlers share: one service per process.
#[derive(Clone)]
pub struct AppState {
    pub tickets: Arc<TicketService>,
    pub orders: Arc<OrderService>,
}

impl AppState {
    pub fn new(store: Store) -> Self {
        Self {
            tickets: Arc::new(TicketService::new(store.clone())),
            orders: Arc::new(OrderService::new(store)),
        }
    }

    /// Reads `TABLE_NAME` and `DYNAMODB_ENDPOINT` and builds the SDK client, once per process.
    pub async fn from_env() -> Result<Self, String> {
        let config = StoreConfig::from_env()?;
        Ok(Self::new(Store::connect(&config, None).await))
    }
}

/// Every route.
pub fn router(state: AppState) -> Router {
    finish(tickets::routes().merge(orders::routes()), state)
}

/// The ticket routes alone, for the ticket function.
pub fn tickets_router(state: AppState) -> Router {
    finish(tickets::routes(), state)
}

/// The series and order routes alone, for the order function.
pub fn orders_router(state: AppState) -> Router {
    finish(orders::routes(), state)
}

/// RFC 3339 in UTC with milliseconds, as every response writes times.
fn timestamp(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn finish(routes: Router<AppState>, state: AppState) -> Router {
    routes
        .fallback(|| async {
            Problem::new(StatusCode::NOT_FOUND, "route_not_found", "no such route")
        })
        .method_not_allowed_fallback(|| async {
            Problem::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this route does not take that method",
            )
        })
        .layer(middleware::from_fn(log_request))
        .with_state(state)
}

/// One span per request; the handlers add their ids to it through their own spans.
async fn log_request(request: Request, next: Next) -> Response {
    let span = info_span!("request", method = %request.method(), path = %request.uri().path());
    async move {
        let started = Instant::now();
        let response = next.run(request).await;
        info!(
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "request handled"
        );
        response
    }
    .instrument(span)
    .await
}
