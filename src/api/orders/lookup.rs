//! Finding an order by its number or its reference, and voiding it.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;

use super::super::AppState;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::Problem;
use super::OrderResponse;
use crate::domain::ids::{ExternalRef, SeriesId, SourceId};
use crate::domain::order::Reason;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VoidBody {
    reason: String,
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

pub(super) async fn get_order(
    State(state): State<AppState>,
    PathParams(number): PathParams<String>,
) -> Result<Json<OrderResponse>, Problem> {
    let order = state.orders.find_anywhere(order_number(&number)?).await?;
    Ok(Json(order.into()))
}

pub(super) async fn get_series_order(
    State(state): State<AppState>,
    PathParams((series_id, number)): PathParams<(String, String)>,
) -> Result<Json<OrderResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let order = state
        .orders
        .find_in_series(&series_id, order_number(&number)?)
        .await?;
    Ok(Json(order.into()))
}

pub(super) async fn void_order(
    State(state): State<AppState>,
    PathParams((series_id, number)): PathParams<(String, String)>,
    JsonBody(body): JsonBody<VoidBody>,
) -> Result<Json<OrderResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let number = order_number(&number)?.to_owned();
    let reason = Reason::parse(&body.reason)?;
    let order = state.orders.void_order(&series_id, &number, reason).await?;
    Ok(Json(order.into()))
}

pub(super) async fn get_order_by_ref(
    State(state): State<AppState>,
    PathParams((source, external_ref)): PathParams<(String, String)>,
) -> Result<Json<OrderResponse>, Problem> {
    let source = SourceId::parse(&source)?;
    let external_ref = ExternalRef::parse(&external_ref)?;
    let order = state.orders.get_by_ref(&source, &external_ref).await?;
    Ok(Json(order.into()))
}
