//! Finding an order by its number or its reference, and voiding it.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::caller::{Acting, Caller};
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::{Code, Problem};
use super::OrderResponse;
use tally_domain::ids::{ExternalRef, SeriesId, SourceId};
use tally_domain::order::{MAX_NUMBER_TEXT, Reason, is_number_text};

/// Why an order is voided.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct OrderVoidBody {
    /// 1 to 200 characters without control characters, line or
    /// paragraph separators or bidirectional controls.
    #[schema(
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069]{1,200}$"
    )]
    reason: String,
}

/// An order number, in whichever series has it.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct OrderPath {
    /// 1 to 256 letters, digits, `-`, `_`, `/` (as `%2F`) and `.`.
    #[param(pattern = "^[A-Za-z0-9_./-]{1,256}$")]
    order_number: String,
}

/// An order number within a series.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct SeriesOrderPath {
    #[param(pattern = "^[A-Za-z0-9_-]{1,32}$")]
    series_id: String,
    /// 1 to 256 letters, digits, `-`, `_`, `/` (as `%2F`) and `.`.
    #[param(pattern = "^[A-Za-z0-9_./-]{1,256}$")]
    order_number: String,
}

/// An order by its source's reference.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct ReferencePath {
    #[param(pattern = "^[A-Za-z0-9._:-]{1,128}$")]
    source: String,
    /// The reference as the order was posted with it, a `/` as `%2F` (`SO%2F2026%2F0001`).
    #[param(pattern = "^[A-Za-z0-9._~!$&'()*+,;=:@/-]{1,128}$")]
    external_ref: String,
}

/// Order numbers hold letters, digits and `-_/.` (a `/` travels as `%2F` in the path).
fn order_number(raw: &str) -> Result<&str, Problem> {
    if is_number_text(raw) {
        Ok(raw)
    } else {
        Err(Problem::new(
            Code::InvalidOrderNumber,
            format!(
                "an order number holds 1 to {MAX_NUMBER_TEXT} letters, digits, '-', '_', '/' and '.'"
            ),
        ))
    }
}

/// The codes of `get_order`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_ORDER_CODES: &[Code] = &[
    Code::InvalidOrderNumber,
    Code::OrderNotFound,
    Code::AmbiguousOrderNumber,
];

/// Look an order up in whichever series has it
#[utoipa::path(
    get,
    path = "/orders/{order_number}",
    tag = "orders",
    params(OrderPath),
    responses(
        (status = 200, description = "The order", body = OrderResponse),
    )
)]
pub(super) async fn get_order(
    State(state): State<AppState>,
    Caller(access): Caller,
    PathParams(OrderPath {
        order_number: number,
    }): PathParams<OrderPath>,
) -> Result<Json<OrderResponse>, Problem> {
    let order = state
        .orders
        .find_anywhere(order_number(&number)?, &access)
        .await?;
    Ok(Json(order.into()))
}

/// The codes of `get_series_order`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_SERIES_ORDER_CODES: &[Code] = &[
    Code::InvalidOrderNumber,
    Code::OrderNotFound,
    Code::SeriesNotFound,
    Code::AmbiguousOrderNumber,
];

/// Look an order up within a series
#[utoipa::path(
    get,
    path = "/series/{series_id}/orders/{order_number}",
    tag = "orders",
    params(SeriesOrderPath),
    responses(
        (status = 200, description = "The order", body = OrderResponse),
    )
)]
pub(super) async fn get_series_order(
    State(state): State<AppState>,
    Caller(access): Caller,
    PathParams(SeriesOrderPath {
        series_id,
        order_number: number,
    }): PathParams<SeriesOrderPath>,
) -> Result<Json<OrderResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let order = state
        .orders
        .find_in_series(&series_id, order_number(&number)?, &access)
        .await?;
    Ok(Json(order.into()))
}

/// The codes of `void_order`'s own errors (the document adds those of its parameters and body).
pub(super) const VOID_ORDER_CODES: &[Code] = &[
    Code::InvalidReason,
    Code::InvalidOrderNumber,
    Code::OrderNotFound,
    Code::SeriesNotFound,
    Code::AlreadyVoided,
    Code::InvoiceCredited,
    Code::AmbiguousOrderNumber,
];

/// Void an order
///
/// It keeps its number and its link in the chain; voiding again with the same reason
/// answers the same void.
#[utoipa::path(
    post,
    path = "/series/{series_id}/orders/{order_number}/void",
    tag = "orders",
    params(SeriesOrderPath),
    request_body = OrderVoidBody,
    responses(
        (status = 200, description = "The voided order", body = OrderResponse),
    )
)]
pub(super) async fn void_order(
    State(state): State<AppState>,
    Caller(access): Caller,
    Acting(by): Acting,
    PathParams(SeriesOrderPath {
        series_id,
        order_number: number,
    }): PathParams<SeriesOrderPath>,
    JsonBody(body): JsonBody<OrderVoidBody>,
) -> Result<Json<OrderResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let number = order_number(&number)?.to_owned();
    let reason = Reason::parse(&body.reason)?;
    let order = state
        .orders
        .void_order(&series_id, &number, reason, &access, &by)
        .await?;
    Ok(Json(order.into()))
}

/// The codes of `get_order_by_ref`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_ORDER_BY_REF_CODES: &[Code] = &[
    Code::InvalidExternalRef,
    Code::SourceNotAllowed,
    Code::OrderNotFound,
];

/// Look an order up by its reference
#[utoipa::path(
    get,
    path = "/sources/{source}/orders/{external_ref}",
    tag = "orders",
    params(ReferencePath),
    responses(
        (status = 200, description = "The order", body = OrderResponse),
    )
)]
pub(super) async fn get_order_by_ref(
    State(state): State<AppState>,
    Caller(access): Caller,
    PathParams(ReferencePath {
        source,
        external_ref,
    }): PathParams<ReferencePath>,
) -> Result<Json<OrderResponse>, Problem> {
    let source = SourceId::parse(&source)?;
    let external_ref = ExternalRef::parse(&external_ref)?;
    let order = state
        .orders
        .get_by_ref(&source, &external_ref, &access)
        .await?;
    Ok(Json(order.into()))
}
