//! Series and order routes.

mod create;
mod ledger;
mod lookup;
mod series;

use axum::Extension;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use serde::Serialize;
use serde_json::value::RawValue;

use super::AppState;
use super::extract::BodyLimit;
use super::timestamp;
use crate::domain::order::Order;

/// The largest order request: a full batch of large orders, within Lambda's 6 MB payload.
pub const MAX_ORDER_BODY_BYTES: usize = 6 * 1024 * 1024;

pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/series/{series_id}",
            get(series::get_series)
                .put(series::put_series)
                .patch(series::patch_series),
        )
        .route("/series/{series_id}/orders", get(ledger::list_orders))
        .route("/series/{series_id}/audit", get(ledger::audit))
        .route(
            "/series/{series_id}/orders/{order_number}",
            get(lookup::get_series_order),
        )
        .route(
            "/series/{series_id}/orders/{order_number}/void",
            post(lookup::void_order),
        )
        .route("/orders", post(create::create_order))
        .route("/orders/batch", post(create::create_batch))
        .route("/orders/{order_number}", get(lookup::get_order))
        .route(
            "/sources/{source}/orders/{external_ref}",
            get(lookup::get_order_by_ref),
        )
        .layer(DefaultBodyLimit::max(MAX_ORDER_BODY_BYTES))
        .layer(Extension(BodyLimit(MAX_ORDER_BODY_BYTES)))
}

/// An order as every route answers it.
#[derive(Serialize)]
pub(super) struct OrderResponse {
    order_number: String,
    series: String,
    period: String,
    counter: u64,
    source: String,
    external_ref: String,
    data: Box<RawValue>,
    created_at: String,
    /// `active` or `void`.
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    void_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    voided_at: Option<String>,
    /// Its link in the period's hash chain (gapless series).
    #[serde(skip_serializing_if = "Option::is_none")]
    hash: Option<String>,
}

impl From<Order> for OrderResponse {
    fn from(order: Order) -> Self {
        Self {
            order_number: order.order_number,
            series: order.series.to_string(),
            period: order.period,
            counter: order.counter,
            source: order.source.to_string(),
            external_ref: order.external_ref.to_string(),
            data: order.data.to_raw_value(),
            created_at: timestamp(order.created_at),
            status: if order.void.is_some() {
                "void"
            } else {
                "active"
            },
            void_reason: order.void.as_ref().map(|v| v.reason.as_str().to_owned()),
            voided_at: order.void.as_ref().map(|v| timestamp(v.at)),
            hash: order.hash,
        }
    }
}
