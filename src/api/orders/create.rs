//! Numbering orders: one, or a batch; with the series in the body, or in the path (so
//! that an IAM policy can allow a caller one series only). The caller must be allowed to
//! act as the body's `source`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;

use super::super::AppState;
use super::super::caller::Caller;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::{Code, Problem};
use super::{OrderResponse, SeriesPath};
use crate::orders::requests::{
    OrderBatch, OrderRequest, RequestError, SeriesOrder, SeriesOrderBatch, SingleOrder,
};
use crate::orders::{ItemOutcome, OrderService, Rejection};

impl From<RequestError> for Problem {
    fn from(err: RequestError) -> Self {
        match err {
            RequestError::Id(err) => err.into(),
            RequestError::Order(rejection) => rejection.into(),
            RequestError::BatchSize => Problem::new(Code::InvalidBatchSize, err.to_string()),
            RequestError::Shape(detail) => Problem::new(Code::InvalidBody, detail),
        }
    }
}

impl From<Rejection> for Problem {
    fn from(rejection: Rejection) -> Self {
        let problem = Problem::new(rejection.code.into(), rejection.detail);
        if rejection.code.is_retryable() {
            problem.retry_after(rejection.retry_after.unwrap_or(1))
        } else {
            problem
        }
    }
}

/// Numbers one order and answers it.
async fn number_one(
    state: &AppState,
    caller: &Caller,
    request: OrderRequest,
) -> Result<(StatusCode, Json<OrderResponse>), Problem> {
    OrderService::check_source(&caller.0, &request.source)?;
    let outcome = state
        .orders
        .create_request(request, &caller.0)
        .await?
        .pop()
        .expect("one outcome per input");
    match outcome {
        ItemOutcome::Created(order) => Ok((StatusCode::CREATED, Json(OrderResponse::from(order)))),
        ItemOutcome::Existing(order) => Ok((StatusCode::OK, Json(OrderResponse::from(order)))),
        ItemOutcome::Rejected(rejection) => Err(rejection.into()),
    }
}

/// The codes of `create_order`'s own errors (the document adds those of its parameters and body).
pub(super) const CREATE_ORDER_CODES: &[Code] = &[
    // The body's `series` is read as a series id.
    Code::member("series_id"),
    Code::InvalidExternalRef,
    Code::InvalidData,
    Code::DataTooLarge,
    Code::CorrectsRequired,
    Code::InvalidCorrects,
    Code::SourceNotAllowed,
    Code::SeriesNotFound,
    Code::IdempotencyConflict,
    Code::InvoiceNotFound,
    Code::InvoiceVoid,
    Code::CreditNotesFull,
    Code::SeriesExhausted,
    Code::RangeExhausted,
    Code::RangeExpired,
];

/// Number an order
///
/// The same (`source`, `external_ref`) again with the same series and data answers `200`
/// with the original order, void or not.
#[utoipa::path(
    post,
    path = "/orders",
    tag = "orders",
    request_body = SingleOrder,
    responses(
        (status = 201, description = "Numbered", body = OrderResponse),
        (status = 200, description = "The reference's existing order", body = OrderResponse),
    )
)]
pub(super) async fn create_order(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody<SingleOrder>,
) -> Result<impl IntoResponse, Problem> {
    number_one(&state, &caller, body.into_request()?).await
}

/// The codes of `create_series_order`'s own errors: those of `create_order`.
pub(super) const CREATE_SERIES_ORDER_CODES: &[Code] = CREATE_ORDER_CODES;

/// Number an order in a series
///
/// As `POST /orders`, with the series in the path: an IAM policy can allow a caller this
/// route for one series only.
#[utoipa::path(
    post,
    path = "/series/{series_id}/orders",
    tag = "orders",
    params(SeriesPath),
    request_body = SeriesOrder,
    responses(
        (status = 201, description = "Numbered", body = OrderResponse),
        (status = 200, description = "The reference's existing order", body = OrderResponse),
    )
)]
pub(super) async fn create_series_order(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(SeriesPath { series_id }): PathParams<SeriesPath>,
    JsonBody(body): JsonBody<SeriesOrder>,
) -> Result<impl IntoResponse, Problem> {
    let request = body.into_request(&series_id)?;
    number_one(&state, &caller, request).await
}

/// `created` (numbered now), `existing` (the reference's order, numbered before) or
/// `rejected` (with a `code`).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum BatchStatus {
    Created,
    Existing,
    Rejected,
}

/// What one order of a batch became.
#[derive(Serialize, ToSchema)]
struct BatchResult {
    /// Its place in the request.
    index: usize,
    /// `null` when the item had none that is a string; one that is not a valid reference
    /// is cut to its first 32 characters and `…`.
    #[schema(required = true)]
    external_ref: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    order_number: Option<String>,
    status: BatchStatus,
    /// Why it was rejected: `invalid_external_ref`, `invalid_data`, `data_too_large`,
    /// `invalid_order`, `idempotency_conflict`, `corrects_required`, `invalid_corrects`,
    /// `invoice_not_found`, `invoice_void`, `series_exhausted`, `range_exhausted`,
    /// `range_expired` or `contention` (only this one may pass when posted again).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    detail: Option<String>,
    /// With `contention`: seconds after which posting the item again can pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    retry_after: Option<u32>,
    /// A known reference whose order was voided.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    voided: bool,
}

/// One result per order, in request order.
#[derive(Serialize, ToSchema)]
pub(super) struct BatchResponse {
    results: Vec<BatchResult>,
}

/// The codes of `create_batch`'s own errors (the document adds those of its parameters and body).
pub(super) const CREATE_BATCH_CODES: &[Code] = &[
    // The body's `series` is read as a series id.
    Code::member("series_id"),
    Code::InvalidBatchSize,
    Code::SourceNotAllowed,
    Code::SeriesNotFound,
];

/// Number a batch
///
/// New orders get increasing numbers in request order; known references are `existing`;
/// an invalid item is `rejected` and does not fail the others.
#[utoipa::path(
    post,
    path = "/orders/batch",
    tag = "orders",
    request_body = OrderBatch,
    responses(
        (status = 200, description = "One result per order", body = BatchResponse),
    )
)]
pub(super) async fn create_batch(
    State(state): State<AppState>,
    caller: Caller,
    JsonBody(body): JsonBody<OrderBatch>,
) -> Result<Json<BatchResponse>, Problem> {
    number_batch(&state, &caller, body.into_request()?).await
}

/// The codes of `create_series_batch`'s own errors: those of `create_batch`.
pub(super) const CREATE_SERIES_BATCH_CODES: &[Code] = CREATE_BATCH_CODES;

/// Number a batch in a series
///
/// As `POST /orders/batch`, with the series in the path.
#[utoipa::path(
    post,
    path = "/series/{series_id}/orders/batch",
    tag = "orders",
    params(SeriesPath),
    request_body = SeriesOrderBatch,
    responses(
        (status = 200, description = "One result per order", body = BatchResponse),
    )
)]
pub(super) async fn create_series_batch(
    State(state): State<AppState>,
    caller: Caller,
    PathParams(SeriesPath { series_id }): PathParams<SeriesPath>,
    JsonBody(body): JsonBody<SeriesOrderBatch>,
) -> Result<Json<BatchResponse>, Problem> {
    let request = body.into_request(&series_id)?;
    number_batch(&state, &caller, request).await
}

async fn number_batch(
    state: &AppState,
    caller: &Caller,
    request: OrderRequest,
) -> Result<Json<BatchResponse>, Problem> {
    OrderService::check_source(&caller.0, &request.source)?;
    let refs: Vec<Option<String>> = request
        .inputs
        .iter()
        .map(|i| i.external_ref.clone())
        .collect();
    let outcomes = state.orders.create_request(request, &caller.0).await?;
    let results = outcomes
        .into_iter()
        .zip(refs)
        .enumerate()
        .map(|(index, (outcome, external_ref))| {
            let (order, status, rejection) = match outcome {
                ItemOutcome::Created(order) => (Some(order), BatchStatus::Created, None),
                ItemOutcome::Existing(order) => (Some(order), BatchStatus::Existing, None),
                ItemOutcome::Rejected(rejection) => (None, BatchStatus::Rejected, Some(rejection)),
            };
            let voided = order.as_ref().is_some_and(|o| o.void.is_some());
            BatchResult {
                index,
                external_ref,
                order_number: order.map(|o| o.order_number),
                status,
                code: rejection.as_ref().map(|r| r.code.as_str()),
                retry_after: rejection.as_ref().and_then(|r| r.retry_after),
                detail: rejection.map(|r| r.detail),
                voided,
            }
        })
        .collect();
    Ok(Json(BatchResponse { results }))
}
