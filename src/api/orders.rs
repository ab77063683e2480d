//! Series and order routes.

use axum::Extension;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::AppState;
use super::extract::{BodyLimit, JsonBody, PathParams};
use super::problem::Problem;
use super::timestamp;
use crate::domain::ids::{ExternalRef, SeriesId, SourceId};
use crate::domain::order::Order;
use crate::domain::series::{DEFAULT_FORMAT, Reset, Series, SeriesDefinition};
use crate::orders::requests::{OrderBatch, RequestError, SingleOrder};
use crate::orders::{ItemOutcome, Rejection, RejectionCode, SeriesStatus};

/// The largest order request: a full batch of large orders, within Lambda's 6 MB payload.
pub const MAX_ORDER_BODY_BYTES: usize = 6 * 1024 * 1024;

pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/series/{series_id}", get(get_series).put(put_series))
        .route("/orders", post(create_order))
        .route("/orders/batch", post(create_batch))
        .route("/orders/{order_number}", get(get_order))
        .route(
            "/sources/{source}/orders/{external_ref}",
            get(get_order_by_ref),
        )
        .layer(DefaultBodyLimit::max(MAX_ORDER_BODY_BYTES))
        .layer(Extension(BodyLimit(MAX_ORDER_BODY_BYTES)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeriesBody {
    format: Option<String>,
    reset: Option<String>,
    gapless: Option<bool>,
    start: Option<u64>,
}

#[derive(Serialize)]
struct SeriesResponse {
    series_id: String,
    format: String,
    reset: &'static str,
    gapless: bool,
    start: u64,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    period: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_counter: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_number: Option<Option<String>>,
}

impl From<Series> for SeriesResponse {
    fn from(series: Series) -> Self {
        let d = series.definition;
        Self {
            series_id: series.series_id.to_string(),
            format: d.format.as_str().to_owned(),
            reset: d.reset.as_str(),
            gapless: d.gapless,
            start: d.start,
            created_at: timestamp(series.created_at),
            period: None,
            last_counter: None,
            last_number: None,
        }
    }
}

impl From<SeriesStatus> for SeriesResponse {
    fn from(status: SeriesStatus) -> Self {
        Self {
            period: Some(status.period),
            last_counter: Some(status.last_counter),
            last_number: Some(status.last_number),
            ..status.series.into()
        }
    }
}

async fn put_series(
    State(state): State<AppState>,
    PathParams(series_id): PathParams<String>,
    JsonBody(body): JsonBody<SeriesBody>,
) -> Result<impl IntoResponse, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let reset = Reset::parse(body.reset.as_deref().unwrap_or("yearly"))?;
    let definition = SeriesDefinition::new(
        body.format.as_deref().unwrap_or(DEFAULT_FORMAT),
        reset,
        body.gapless.unwrap_or(true),
        body.start.unwrap_or(1),
    )?;
    let (series, created) = state.orders.define_series(&series_id, definition).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(SeriesResponse::from(series))))
}

async fn get_series(
    State(state): State<AppState>,
    PathParams(series_id): PathParams<String>,
) -> Result<Json<SeriesResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    Ok(Json(state.orders.series_status(&series_id).await?.into()))
}

#[derive(Serialize)]
struct OrderResponse {
    order_number: String,
    series: String,
    source: String,
    external_ref: String,
    data: Box<RawValue>,
    created_at: String,
}

impl From<Order> for OrderResponse {
    fn from(order: Order) -> Self {
        Self {
            order_number: order.order_number,
            series: order.series.to_string(),
            source: order.source.to_string(),
            external_ref: order.external_ref.to_string(),
            data: order.data.to_raw_value(),
            created_at: timestamp(order.created_at),
        }
    }
}

impl From<RequestError> for Problem {
    fn from(err: RequestError) -> Self {
        match err {
            RequestError::Id(err) => err.into(),
            RequestError::Order(rejection) => rejection.into(),
            RequestError::BatchSize => Problem::bad_request("invalid_batch_size", err.to_string()),
            RequestError::Shape(detail) => Problem::bad_request("invalid_body", detail),
        }
    }
}

impl From<Rejection> for Problem {
    fn from(rejection: Rejection) -> Self {
        let status = match rejection.code {
            RejectionCode::IdempotencyConflict | RejectionCode::OrderNumberTaken => {
                StatusCode::CONFLICT
            }
            RejectionCode::Contention => StatusCode::SERVICE_UNAVAILABLE,
            RejectionCode::InvalidExternalRef
            | RejectionCode::InvalidData
            | RejectionCode::DataTooLarge
            | RejectionCode::InvalidOrder => StatusCode::BAD_REQUEST,
        };
        let problem = Problem::new(status, rejection.code.as_str(), rejection.detail);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            problem.retry_after(1)
        } else {
            problem
        }
    }
}

async fn create_order(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<SingleOrder>,
) -> Result<impl IntoResponse, Problem> {
    let request = body.into_request()?;
    let outcome = state
        .orders
        .create_orders(&request.series, &request.source, request.inputs)
        .await?
        .pop()
        .expect("one outcome per input");
    match outcome {
        ItemOutcome::Created(order) => Ok((StatusCode::CREATED, Json(OrderResponse::from(order)))),
        ItemOutcome::Existing(order) => Ok((StatusCode::OK, Json(OrderResponse::from(order)))),
        ItemOutcome::Rejected(rejection) => Err(rejection.into()),
    }
}

#[derive(Serialize)]
struct BatchResult {
    index: usize,
    external_ref: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    order_number: Option<String>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
}

#[derive(Serialize)]
struct BatchResponse {
    results: Vec<BatchResult>,
}

async fn create_batch(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<OrderBatch>,
) -> Result<Json<BatchResponse>, Problem> {
    let request = body.into_request()?;
    let refs: Vec<Option<String>> = request
        .inputs
        .iter()
        .map(|i| i.external_ref.clone())
        .collect();
    let outcomes = state
        .orders
        .create_orders(&request.series, &request.source, request.inputs)
        .await?;
    let results = outcomes
        .into_iter()
        .zip(refs)
        .enumerate()
        .map(|(index, (outcome, external_ref))| {
            let (order_number, status, rejection) = match outcome {
                ItemOutcome::Created(order) => (Some(order.order_number), "created", None),
                ItemOutcome::Existing(order) => (Some(order.order_number), "existing", None),
                ItemOutcome::Rejected(rejection) => (None, "rejected", Some(rejection)),
            };
            BatchResult {
                index,
                external_ref,
                order_number,
                status,
                code: rejection.as_ref().map(|r| r.code.as_str()),
                detail: rejection.map(|r| r.detail),
            }
        })
        .collect();
    Ok(Json(BatchResponse { results }))
}

/// Order numbers hold letters, digits and `-_/.` (a `/` travels as `%2F` in the path).
fn order_number(raw: &str) -> Result<&str, Problem> {
    let valid = (1..=256).contains(&raw.len())
        && raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'));
    if valid {
        Ok(raw)
    } else {
        Err(Problem::bad_request(
            "invalid_order_number",
            "an order number holds 1 to 256 letters, digits, '-', '_', '/' and '.'",
        ))
    }
}

async fn get_order(
    State(state): State<AppState>,
    PathParams(number): PathParams<String>,
) -> Result<Json<OrderResponse>, Problem> {
    let order = state.orders.get_by_number(order_number(&number)?).await?;
    Ok(Json(order.into()))
}

async fn get_order_by_ref(
    State(state): State<AppState>,
    PathParams((source, external_ref)): PathParams<(String, String)>,
) -> Result<Json<OrderResponse>, Problem> {
    let source = SourceId::parse(&source)?;
    let external_ref = ExternalRef::parse(&external_ref)?;
    let order = state.orders.get_by_ref(&source, &external_ref).await?;
    Ok(Json(order.into()))
}
