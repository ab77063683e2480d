//! Numbering orders: one, or a batch.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;

use super::super::AppState;
use super::super::extract::JsonBody;
use super::super::problem::Problem;
use super::OrderResponse;
use crate::orders::requests::{OrderBatch, RequestError, SingleOrder};
use crate::orders::{ItemOutcome, Rejection, RejectionCode};

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
            RejectionCode::IdempotencyConflict => StatusCode::CONFLICT,
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
        (status = 400, description = "`invalid_external_ref`, `invalid_source`, `invalid_series`, `invalid_data` (not an object, nested deeper than 32 levels, or a key given twice), `data_too_large`"),
        (status = 404, description = "`series_not_found`"),
        (status = 409, description = "`idempotency_conflict`: the reference has an order with another body"),
    )
)]
pub(super) async fn create_order(
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

/// What one order of a batch became.
#[derive(Serialize, ToSchema)]
struct BatchResult {
    /// Its place in the request.
    index: usize,
    /// `null` when the item had none that is a string.
    external_ref: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    order_number: Option<String>,
    /// `created`, `existing` or `rejected`.
    status: &'static str,
    /// Why it was rejected: `invalid_external_ref`, `invalid_data`, `data_too_large`,
    /// `invalid_order`, `idempotency_conflict` or `contention` (only this one may pass
    /// when posted again).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    detail: Option<String>,
    /// A known reference whose order was voided.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    voided: bool,
}

/// One result per order, in request order.
#[derive(Serialize, ToSchema)]
pub(super) struct BatchResponse {
    results: Vec<BatchResult>,
}

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
        (status = 400, description = "`invalid_batch_size` (1 to 1,000 orders), `invalid_source`, `invalid_series`"),
        (status = 404, description = "`series_not_found`"),
    )
)]
pub(super) async fn create_batch(
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
            let (order, status, rejection) = match outcome {
                ItemOutcome::Created(order) => (Some(order), "created", None),
                ItemOutcome::Existing(order) => (Some(order), "existing", None),
                ItemOutcome::Rejected(rejection) => (None, "rejected", Some(rejection)),
            };
            let voided = order.as_ref().is_some_and(|o| o.void.is_some());
            BatchResult {
                index,
                external_ref,
                order_number: order.map(|o| o.order_number),
                status,
                code: rejection.as_ref().map(|r| r.code.as_str()),
                detail: rejection.map(|r| r.detail),
                voided,
            }
        })
        .collect();
    Ok(Json(BatchResponse { results }))
}
