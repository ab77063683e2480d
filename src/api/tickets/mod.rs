//! Ticket routes: draws, purchases and voids, lists, winners.

mod draws;
mod lists;
mod purchases;
mod winners;

use axum::Extension;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

use super::AppState;
use super::extract::{BodyLimit, MAX_BODY_BYTES};
use super::problem::Problem;

/// Routes that compute a draw's whole eligible list, and so get the longer deadline.
pub(super) const DRAWING_ROUTES: [&str; 3] = [
    "/draws/{draw_id}/winners",
    "/draws/{draw_id}/winners/{prize}/redraw",
    "/draws/{draw_id}/eligible",
];

pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/draws", post(draws::create_draw).get(lists::list_draws))
        .route(
            "/draws/{draw_id}",
            get(draws::get_draw).patch(draws::patch_draw),
        )
        .route("/draws/{draw_id}/close", post(draws::close_draw))
        .route("/draws/{draw_id}/purchases", post(purchases::purchase))
        .route(
            "/draws/{draw_id}/purchases/{payment_id}",
            get(purchases::get_purchase),
        )
        .route(
            "/draws/{draw_id}/purchases/{payment_id}/void",
            post(purchases::void_purchase),
        )
        .route(
            "/draws/{draw_id}/payers/{payer_id}/purchases",
            get(lists::payer_purchases),
        )
        .route(
            "/draws/{draw_id}/tickets/{number}",
            get(purchases::get_ticket),
        )
        .route(
            DRAWING_ROUTES[0],
            post(winners::draw_winners).get(winners::get_winners),
        )
        .route(DRAWING_ROUTES[1], post(winners::redraw))
        .route(DRAWING_ROUTES[2], get(winners::get_eligible))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(Extension(BodyLimit(MAX_BODY_BYTES)))
}

/// Free text that is stored and echoed: bounded, and without control characters.
pub(super) fn free_text(
    field: &str,
    value: Option<String>,
    max_len: usize,
) -> Result<Option<String>, Problem> {
    match value {
        Some(v)
            if v.is_empty() || v.chars().count() > max_len || v.chars().any(char::is_control) =>
        {
            Err(Problem::bad_request(
                format!("invalid_{field}"),
                format!("`{field}` must be 1 to {max_len} characters without control characters"),
            ))
        }
        other => Ok(other),
    }
}

/// Free text that must be given.
pub(super) fn required_text(
    field: &str,
    value: Option<String>,
    max_len: usize,
) -> Result<String, Problem> {
    free_text(field, value, max_len)?.ok_or_else(|| {
        Problem::bad_request(
            format!("invalid_{field}"),
            format!("`{field}` is required: 1 to {max_len} characters"),
        )
    })
}
