//! The HTTP API: one router, served by Lambda and by the local server alike.

mod caller;
mod deadline;
mod extract;
mod gateway_path;
mod journal;
pub mod local_server;
mod loopback;
mod openapi;
mod orders;
mod page_token;
pub(crate) mod problem;
mod query;
mod request_log;
mod routes;
mod tickets;

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use axum::Router;
use axum::http::header;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

pub use deadline::GATEWAY_WAIT;
pub use extract::{BodyLimit, MAX_BODY_BYTES};
pub use openapi::{openapi, openapi_json};
pub use orders::{AUDIT_PART_LISTED, MAX_ORDER_BODY_BYTES};
/// An audit part run through the service goes on through the API with this token.
pub use page_token::audit_page_token;
pub use page_token::{MAX_LIST_TOKEN_CHARS, MAX_PURCHASES_TOKEN_CHARS};
pub use problem::{Code, Problem};
pub use query::MAX_PAGE_BYTES;

use crate::orders::OrderService;
use crate::settings::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_DRAWING_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, HttpSettings,
    SourceBindings,
};
use crate::store::Store;
use crate::tickets::TicketService;
use tally_domain::secret::DeploymentSecret;
use tally_domain::time::rfc3339_millis as timestamp;

/// What the handlers share: one service per process.
#[derive(Clone)]
pub struct AppState {
    pub tickets: Arc<TicketService>,
    pub orders: Arc<OrderService>,
    /// A request still running after this answers `503 outcome_unknown`.
    pub request_timeout: Duration,
    /// The same for the routes that compute a whole eligible list.
    pub drawing_timeout: Duration,
    /// Which IAM identities may act as which order sources.
    pub sources: Arc<SourceBindings>,
    /// A body still arriving after this answers `408` (at most the request timeout).
    pub body_timeout: Duration,
}

impl AppState {
    pub fn new(store: Store) -> Self {
        Self {
            tickets: Arc::new(TicketService::new(store.clone())),
            orders: Arc::new(OrderService::new(store)),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            drawing_timeout: DEFAULT_DRAWING_TIMEOUT,
            sources: Arc::new(SourceBindings::open()),
            body_timeout: DEFAULT_BODY_TIMEOUT,
        }
    }

    /// The services on `store` as `settings` say, with the deployment `secret` when the
    /// process serves the ticket routes (the order routes do not use it, and their
    /// function does not load it).
    pub fn configured(
        store: Store,
        secret: Option<DeploymentSecret>,
        settings: &HttpSettings,
    ) -> Self {
        let tickets = TicketService::with_cached_draws(store.clone(), settings.cached_draws)
            .with_networks(settings.networks.clone())
            .with_spend_rules(settings.spend.clone());
        Self {
            tickets: Arc::new(match secret {
                Some(secret) => tickets.with_deployment_secret(secret),
                None => tickets,
            }),
            orders: Arc::new(OrderService::new(store)),
            request_timeout: settings.request_timeout,
            drawing_timeout: settings.drawing_timeout,
            sources: Arc::new(settings.sources.clone()),
            body_timeout: settings.body_timeout,
        }
    }
}

/// Every route.
pub fn router(state: AppState) -> Router {
    finish(tickets::routes().merge(orders::routes(&state)), state)
}

/// Every route, `GET /openapi.json` (the document of the others) and `GET /verify` (the
/// browser verifier), for `tally serve`.
pub fn local_router(state: AppState, verify_page: String) -> Router {
    let verify_page = Arc::new(verify_page);
    finish(
        tickets::routes()
            .merge(orders::routes(&state))
            .route(
                "/openapi.json",
                get(serve_openapi)
                    .route_layer(middleware::from_fn(|r, n| query::only_taken(None, r, n))),
            )
            .route(
                "/verify",
                get(move || serve_verify_page(Arc::clone(&verify_page)))
                    .route_layer(middleware::from_fn(|r, n| query::only_taken(None, r, n))),
            ),
        state,
    )
}

/// The browser verifier: one static file (`TALLY_VERIFY_PAGE`), read when asked for, so a rebuilt page is served
/// without a restart.
async fn serve_verify_page(path: Arc<String>) -> Response {
    match tokio::fs::read(path.as_str()).await {
        Ok(page) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response(),
        Err(_) => Problem::new(
            Code::VerifyPageNotBuilt,
            "the verifier page is not built: run scripts/verify-page.sh (make run does)",
        )
        .into_response(),
    }
}

async fn serve_openapi() -> impl IntoResponse {
    static DOCUMENT: LazyLock<String> = LazyLock::new(openapi_json);
    (
        [(header::CONTENT_TYPE, "application/json")],
        DOCUMENT.as_str(),
    )
}

/// The ticket routes alone, for the ticket function.
pub fn tickets_router(state: AppState) -> Router {
    finish(tickets::routes(), state)
}

/// The series and order routes alone, for the order function.
pub fn orders_router(state: AppState) -> Router {
    finish(orders::routes(&state), state)
}

/// The router of `routes`, behind the step that rebuilds the path API Gateway decoded
/// (before any route is matched).
fn finish(routes: Router<AppState>, state: AppState) -> Router {
    let routed = served(routes, state);
    Router::new().fallback_service(
        tower::ServiceBuilder::new()
            .map_request(gateway_path::restore)
            .service(routed),
    )
}

fn served(routes: Router<AppState>, state: AppState) -> Router {
    routes
        .fallback(|| async { Problem::new(Code::RouteNotFound, "no such route") })
        .method_not_allowed_fallback(|| async {
            Problem::new(
                Code::MethodNotAllowed,
                "this route does not take that method",
            )
        })
        .layer(middleware::from_fn_with_state(
            state.clone(),
            deadline::deadline,
        ))
        .layer(middleware::from_fn(request_log::log_request))
        .with_state(state)
}
