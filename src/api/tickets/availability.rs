//! The grid of a number picker.

use axum::Json;
use axum::extract::State;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use utoipa::ToSchema;

use super::super::AppState;
use super::super::extract::PathParams;
use super::super::problem::{Code, Problem};
use super::super::timestamp;
use super::DrawPath;
use tally_domain::ids::DrawId;

/// Which numbers are free right now: one bit per number, set when it is free.
#[derive(Serialize, ToSchema)]
pub(super) struct AvailabilityBody {
    draw_id: String,
    total_tickets: u64,
    /// Numbers anyone may buy now.
    free: u64,
    /// Numbers held by live holds: neither free nor sold.
    held: u64,
    /// Numbers sold, voided ones included (they are never sold again).
    sold: u64,
    /// Always `bitmap-lsb0-base64`, as the eligible list: bit `n - 1` (byte `(n - 1) / 8`,
    /// least significant bit first) is number `n`.
    encoding: &'static str,
    /// `ceil(total_tickets / 8)` bytes, base64.
    bitmap: String,
    /// When the stripes were read (strongly consistent): what was sold then is shown sold.
    #[schema(format = DateTime)]
    read_at: String,
}

/// The codes of `get_availability`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_AVAILABILITY_CODES: &[Code] = &[Code::member("draw_id"), Code::DrawNotFound];

/// Free numbers
///
/// What a number picker draws: a bitmap of the free numbers, read fresh from the table on
/// each call. A number shown free may be sold a moment later; buying it then answers
/// `409 numbers_taken`.
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/availability",
    tag = "purchases",
    params(DrawPath),
    responses(
        (status = 200, description = "One bit per number, set when free", body = AvailabilityBody),
    )
)]
pub(super) async fn get_availability(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
) -> Result<Json<AvailabilityBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let grid = state.tickets.availability(&draw_id).await?;
    let availability = grid.availability;
    Ok(Json(AvailabilityBody {
        draw_id: grid.draw_id.to_string(),
        total_tickets: availability.total,
        free: availability.free,
        held: availability.held,
        sold: availability.sold,
        encoding: "bitmap-lsb0-base64",
        bitmap: STANDARD.encode(&availability.bitmap),
        read_at: timestamp(grid.read_at),
    }))
}
