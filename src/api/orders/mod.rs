//! Series and order routes.

mod create;
mod ledger;
mod lookup;
mod series;

pub use ledger::AUDIT_PART_LISTED;

use axum::Extension;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::{IntoParams, ToSchema};

use super::AppState;
use super::caller::Caller;
use super::extract::BodyLimit;
use super::problem::Code;
use super::timestamp;
use tally_domain::order::Order;

/// The largest order request. Behind API Gateway the body travels as a JSON string in the
/// event, where each `"` and `\` is escaped: twice this, with the event's headers, stays
/// within Lambda's request payload of 6 MiB, so a body Tally takes always reaches it.
pub const MAX_ORDER_BODY_BYTES: usize = 3 * 1024 * 1024 - 64 * 1024;

super::routes::route_table!(
    Orders:
    series::get_series,
    series::put_series,
    series::patch_series,
    ledger::list_orders,
    ledger::audit,
    lookup::get_series_order,
    lookup::void_order,
    create::create_order,
    create::create_batch,
    create::create_series_order,
    create::create_series_batch,
    lookup::get_order,
    lookup::get_order_by_ref;
);

/// The order routes. Each extracts the [`Caller`] first, before its path and body, so
/// that with source bindings no route serves a request without an IAM identity.
pub(super) fn routes(state: &AppState) -> Router<AppState> {
    served()
        .route_layer(middleware::from_extractor_with_state::<Caller, _>(
            state.clone(),
        ))
        .layer(DefaultBodyLimit::max(MAX_ORDER_BODY_BYTES))
        .layer(Extension(BodyLimit(MAX_ORDER_BODY_BYTES)))
}

/// The codes every order route may answer, besides its own: the caller's.
pub(super) const SHARED_CODES: &[Code] = &[Code::IdentityRequired];

/// The series of a route.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct SeriesPath {
    /// The series' id.
    #[param(pattern = "^[A-Za-z0-9_-]{1,32}$")]
    series_id: String,
}

/// `active`, or `void` with the reason and time; a void order keeps its number.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum OrderStatus {
    Active,
    Void,
}

/// An order as every route answers it.
#[derive(Serialize, ToSchema)]
pub(super) struct OrderResponse {
    order_number: String,
    series: String,
    /// `all`, `2026`, `2026-11`, `2026-11-29` or `FY2027`, by the series' reset.
    period: String,
    counter: u64,
    source: String,
    external_ref: String,
    /// As it was posted (`{}` when none was).
    #[schema(value_type = Object)]
    data: Box<RawValue>,
    #[schema(format = DateTime)]
    created_at: String,
    status: OrderStatus,
    #[schema(required = true)]
    void_reason: Option<String>,
    #[schema(required = true, format = DateTime)]
    voided_at: Option<String>,
    /// Its link in the period's hash chain (gapless series).
    #[schema(required = true)]
    hash: Option<String>,
    /// A credit note: the number of the invoice it corrects.
    #[schema(required = true)]
    corrects: Option<String>,
    /// An invoice: the numbers of the credit notes that correct it, oldest first (shown
    /// where the invoice is read by its number and in listings).
    credit_notes: Vec<String>,
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
                OrderStatus::Void
            } else {
                OrderStatus::Active
            },
            void_reason: order.void.as_ref().map(|v| v.reason.as_str().to_owned()),
            voided_at: order.void.as_ref().map(|v| timestamp(v.at)),
            hash: order.hash,
            corrects: order.corrects,
            credit_notes: order.credit_notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MAX_ORDER_BODY_BYTES;

    /// Lambda's request payload, in bytes.
    const LAMBDA_PAYLOAD: usize = 6 * 1024 * 1024;

    #[test]
    fn the_largest_order_body_escaped_in_a_gateway_event_fits_lambdas_payload() {
        // The worst body: every byte one that the event escapes.
        let body = "\"".repeat(MAX_ORDER_BODY_BYTES);
        // API Gateway's headers are at most 10 KB; the rest of the event is far below.
        let headers = serde_json::json!({"x-padding": "h".repeat(10 * 1024)});
        let event = serde_json::json!({
            "version": "2.0",
            "routeKey": "POST /orders/batch",
            "rawPath": "/orders/batch",
            "headers": headers,
            "requestContext": {"http": {"method": "POST", "path": "/orders/batch"}},
            "body": body,
            "isBase64Encoded": false,
        });
        let size = serde_json::to_vec(&event).unwrap().len();
        assert!(size <= LAMBDA_PAYLOAD, "{size}");
    }
}
