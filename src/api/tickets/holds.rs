//! Holding numbers while a buyer pays: make a hold, read it, release it. A hold is paid
//! for through the purchase route, with `hold_id`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::{Code, Problem};
use super::super::timestamp;
use super::DrawPath;
use super::purchases::selection;
use tally_domain::hold::{Hold, HoldEnd, HoldRequest, HoldStatus};
use tally_domain::ids::{DrawId, HoldId, PayerId};

/// A hold: `quantity` numbers by lucky dip, or the `numbers` the buyer chose.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HoldBody {
    /// The idempotency key: the same id with the same body answers the same hold.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    hold_id: String,
    /// A lucky dip of 1 to the draw's `max_per_purchase` numbers; give this or `numbers`.
    #[schema(minimum = 1)]
    quantity: Option<u32>,
    /// 1 to `max_per_purchase` distinct numbers of the draw, all or nothing (`409
    /// numbers_taken` lists those sold or held); give this or `quantity`.
    #[schema(min_items = 1, max_items = 500)]
    numbers: Option<Vec<u64>>,
    /// Who holds them, as for a purchase: every hold names its payer, whose live holds
    /// the draw caps (`max_held_per_payer`); in a draw with `max_per_payer` a live hold
    /// counts toward that cap too.
    #[schema(
        pattern = "^[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0](?:[^\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0]{0,254}[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0])?$"
    )]
    payer_id: String,
}

/// A hold and its numbers.
#[derive(Serialize, ToSchema)]
pub(super) struct HoldResponse {
    draw_id: String,
    hold_id: String,
    payer_id: String,
    /// The numbers held (ascending when chosen).
    tickets: Vec<u64>,
    /// `true` when the buyer chose the numbers, `false` for a lucky dip.
    chosen: bool,
    /// `held` until `expires_at` or until the close, whichever comes first, then
    /// `expired`; `released` or `converted` once a call ended it.
    status: HoldStatus,
    /// The payment that converted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    payment_id: Option<String>,
    created_at: String,
    /// When the hold ends: `hold_seconds` after it was made, never after `closes_at`. A
    /// close before then ends it too (`status` says so).
    expires_at: String,
}

impl HoldResponse {
    fn new(hold: Hold, status: HoldStatus) -> Self {
        Self {
            draw_id: hold.draw_id.to_string(),
            hold_id: hold.hold_id.to_string(),
            payer_id: hold.payer_id.to_string(),
            tickets: hold.tickets,
            chosen: hold.chosen,
            status,
            payment_id: match hold.end {
                HoldEnd::Converted(payment) => Some(payment.to_string()),
                _ => None,
            },
            created_at: timestamp(hold.created_at),
            expires_at: timestamp(hold.expires_at),
        }
    }
}

/// A hold of a draw.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct HoldPath {
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    draw_id: String,
    /// The hold's idempotency key.
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    hold_id: String,
}

pub(super) const CREATE_HOLD_CODES: &[Code] = &[
    Code::InvalidQuantity,
    Code::InvalidNumbers,
    Code::DrawNotFound,
    Code::IdempotencyConflict,
    Code::NumbersTaken,
    Code::SoldOut,
    Code::TicketsHeld,
    Code::HoldsFull,
    Code::SpendLimit,
    Code::PayerExcluded,
    Code::TicketsFragmented,
    Code::DrawClosed,
    Code::DrawNotOpen,
    Code::PayerLimit,
    Code::PayerHoldLimit,
];

/// Hold numbers
///
/// Keeps numbers for one buyer while they pay, until `expires_at` (the draw's
/// `hold_seconds`, never past the close); pay with `POST /draws/{draw_id}/purchases`
/// `{"payment_id", "hold_id"}`. All or nothing; `hold_id` is the idempotency key.
#[utoipa::path(
    post,
    path = "/draws/{draw_id}/holds",
    tag = "holds",
    params(DrawPath),
    request_body = HoldBody,
    responses(
        (status = 201, description = "Held", body = HoldResponse),
        (status = 200, description = "A repeat of this hold", body = HoldResponse),
    )
)]
pub(super) async fn create_hold(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
    JsonBody(body): JsonBody<HoldBody>,
) -> Result<impl IntoResponse, Problem> {
    let (quantity, numbers) = selection(body.quantity, body.numbers)?;
    let request = HoldRequest {
        draw_id: DrawId::parse(&draw_id)?,
        hold_id: HoldId::parse(&body.hold_id)?,
        quantity,
        numbers,
        payer_id: PayerId::parse(&body.payer_id)?,
    };
    let receipt = state.tickets.hold(request).await?;
    let status = if receipt.replayed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let now = if receipt.replayed {
        state.tickets.hold_status(&receipt.hold).await?
    } else {
        state.tickets.new_hold_status(&receipt.hold)
    };
    Ok((status, Json(HoldResponse::new(receipt.hold, now))))
}

pub(super) const GET_HOLD_CODES: &[Code] = &[Code::HoldNotFound, Code::DrawNotFound];

/// Read a hold
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/holds/{hold_id}",
    tag = "holds",
    params(HoldPath),
    responses(
        (status = 200, description = "The hold", body = HoldResponse),
    )
)]
pub(super) async fn get_hold(
    State(state): State<AppState>,
    PathParams(HoldPath { draw_id, hold_id }): PathParams<HoldPath>,
) -> Result<Json<HoldResponse>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let hold_id = HoldId::parse(&hold_id)?;
    let hold = state.tickets.get_hold(&draw_id, &hold_id).await?;
    let status = state.tickets.hold_status(&hold).await?;
    Ok(Json(HoldResponse::new(hold, status)))
}

pub(super) const RELEASE_HOLD_CODES: &[Code] = &[Code::HoldNotFound, Code::DrawNotFound];

/// Release a hold
///
/// Gives a live hold's numbers back at once. Releasing again, or a hold that expired or
/// was converted, answers it as it is.
#[utoipa::path(
    delete,
    path = "/draws/{draw_id}/holds/{hold_id}",
    tag = "holds",
    params(HoldPath),
    responses(
        (status = 200, description = "The hold, released unless it had ended otherwise", body = HoldResponse),
    )
)]
pub(super) async fn release_hold(
    State(state): State<AppState>,
    PathParams(HoldPath { draw_id, hold_id }): PathParams<HoldPath>,
) -> Result<Json<HoldResponse>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let hold_id = HoldId::parse(&hold_id)?;
    let hold = state.tickets.release_hold(&draw_id, &hold_id).await?;
    let status = state.tickets.hold_status(&hold).await?;
    Ok(Json(HoldResponse::new(hold, status)))
}
