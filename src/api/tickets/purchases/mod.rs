//! Buying tickets, reading a purchase or a ticket, voiding a purchase; what a purchase's
//! answer says is in `response.rs`.

mod response;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::caller::Acting;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::{Code, Problem};
use super::{DrawPath, free_text, required_text};
use crate::tickets::ConvertRequest;
use tally_domain::ids::{DrawId, HoldId, PayerId, PaymentId};
use tally_domain::purchase::{
    Channel, MAX_FREE_TEXT_LEN, MAX_REASON_LEN, PaymentToken, PurchaseRequest, PurchaseStatus,
};

pub(super) use response::PurchaseResponse;
use response::{PurchaseAnswer, answer};

/// A paid purchase: `quantity` tickets by lucky dip, or the `numbers` the buyer chose.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PurchaseBody {
    /// The idempotency key: the same id with the same body answers the same tickets.
    /// Letters, digits, `.`, `_`, `:` and `-`, as payment providers write their ids (not
    /// dots alone).
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,64}$")]
    payment_id: String,
    /// A live hold to pay for: the purchase gets exactly its numbers, once (give no
    /// `quantity` nor `numbers` with it).
    #[schema(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    hold_id: Option<String>,
    /// A lucky dip of 1 to the draw's `max_per_purchase` tickets; give this, `numbers` or
    /// `hold_id`.
    #[schema(minimum = 1)]
    quantity: Option<u32>,
    /// The numbers the buyer chose: 1 to `max_per_purchase` distinct numbers of the draw,
    /// all or nothing (`409 numbers_taken` lists those sold); give this or `quantity`.
    #[schema(min_items = 1, max_items = 500)]
    numbers: Option<Vec<u64>>,
    /// Who paid, best a stable account id: 1 to 256 characters, compared in Unicode NFC
    /// (case counts), without control, invisible, bidirectional-control or
    /// line-separator characters, spaces other than U+0020 (no-break, ideographic...),
    /// blanks such as U+2800, characters Unicode compatibility (NFKC) spells otherwise
    /// (fullwidth letters, ligatures) or whitespace at either end; required by a draw
    /// with `max_per_payer`.
    #[schema(
        pattern = "^[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0](?:[^\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0]{0,254}[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0])?$"
    )]
    payer_id: Option<String>,
    /// Opaque to Tally and never stored (only a keyed fingerprint of the body is).
    #[schema(
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069]{1,256}$"
    )]
    token: Option<String>,
    /// `online` (the default) or `postal`: a free entry by post, which takes part in the
    /// draw like any other and counts toward caps.
    #[schema(value_type = Option<Channel>)]
    channel: Option<String>,
    /// What the buyer was charged, in minor units of the draw's currency, when it is not
    /// `quantity` × `ticket_price` (a bundle, a discount): at most that. Only in a draw
    /// with a price; a postal entry is always 0.
    #[schema(minimum = 0)]
    amount: Option<u64>,
}

/// A purchase of a draw.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct PurchasePath {
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    draw_id: String,
    /// The purchase's idempotency key.
    #[param(pattern = "^[A-Za-z0-9._:-]{1,64}$")]
    payment_id: String,
}

/// A ticket of a draw.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct TicketPath {
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    draw_id: String,
    /// 1 to the draw's `total_tickets`.
    #[param(value_type = u64, minimum = 1)]
    number: String,
}

/// The codes of `purchase`'s own errors (the document adds those of its parameters and body).
pub(super) const PURCHASE_CODES: &[Code] = &[
    Code::InvalidQuantity,
    Code::InvalidNumbers,
    Code::InvalidChannel,
    Code::PayerIdRequired,
    Code::DrawNotFound,
    Code::IdempotencyConflict,
    Code::NumbersTaken,
    Code::SoldOut,
    Code::TicketsHeld,
    Code::TicketsFragmented,
    Code::DrawClosed,
    Code::DrawNotOpen,
    Code::PayerLimit,
    Code::SpendLimit,
    Code::PayerExcluded,
    Code::HoldNotFound,
    Code::HoldExpired,
    Code::HoldUsed,
];

/// Buy tickets
///
/// A lucky dip (`quantity`), the numbers the buyer chose (`numbers`, all or nothing), or
/// the numbers of a live hold (`hold_id`: once, before it expires).
/// `payment_id` is the idempotency key: the same body again answers `200` with the same
/// tickets and allocates nothing; a voided purchase replays as voided.
#[utoipa::path(
    post,
    path = "/draws/{draw_id}/purchases",
    tag = "purchases",
    params(DrawPath),
    request_body = PurchaseBody,
    responses(
        (status = 201, description = "Sold", body = PurchaseAnswer),
        (status = 200, description = "A replay of this purchase", body = PurchaseAnswer),
    )
)]
pub(super) async fn purchase(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
    JsonBody(body): JsonBody<PurchaseBody>,
) -> Result<impl IntoResponse, Problem> {
    if let Some(hold_id) = body.hold_id.clone() {
        return convert_hold(&state, draw_id, hold_id, body).await;
    }
    let (quantity, numbers) = selection(body.quantity, body.numbers)?;
    let request = PurchaseRequest {
        draw_id: DrawId::parse(&draw_id)?,
        payment_id: PaymentId::parse(&body.payment_id)?,
        quantity,
        numbers,
        payer_id: body.payer_id.as_deref().map(PayerId::parse).transpose()?,
        token: free_text("token", body.token, MAX_FREE_TEXT_LEN)?.map(PaymentToken),
        channel: match body.channel.as_deref() {
            None => Channel::Online,
            Some(raw) => Channel::parse(raw).ok_or_else(|| {
                Problem::new(Code::InvalidChannel, "`channel` must be online or postal")
            })?,
        },
        amount: body.amount,
    };
    let receipt = state.tickets.purchase(request).await?;
    Ok(answer(receipt))
}

/// Pays for a hold: the body names the hold and nothing it would choose.
async fn convert_hold(
    state: &AppState,
    draw_id: String,
    hold_id: String,
    body: PurchaseBody,
) -> Result<(StatusCode, Json<PurchaseAnswer>), Problem> {
    if body.quantity.is_some()
        || body.numbers.is_some()
        || body.channel.is_some()
        || body.amount.is_some()
    {
        return Err(Problem::new(
            Code::member("hold_id"),
            "a purchase of a hold gets exactly its numbers at the draw's price: give no `quantity`, `numbers`, `channel` or `amount` with `hold_id`",
        ));
    }
    if body.payer_id.is_some() {
        return Err(Problem::new(
            Code::member("payer_id"),
            "a purchase of a hold is the hold's payer's: give no `payer_id` with `hold_id`",
        ));
    }
    let request = ConvertRequest {
        draw_id: DrawId::parse(&draw_id)?,
        payment_id: PaymentId::parse(&body.payment_id)?,
        hold_id: HoldId::parse(&hold_id)?,
        token: free_text("token", body.token, MAX_FREE_TEXT_LEN)?.map(PaymentToken),
    };
    Ok(answer(state.tickets.convert(request).await?))
}

/// A lucky dip's quantity, or the chosen numbers (sorted) and their count: one of the two.
pub(super) fn selection(
    quantity: Option<u32>,
    numbers: Option<Vec<u64>>,
) -> Result<(u32, Option<Vec<u64>>), Problem> {
    match (quantity, numbers) {
        (Some(quantity), None) => Ok((quantity, None)),
        (None, Some(mut numbers)) => {
            numbers.sort_unstable();
            let count = u32::try_from(numbers.len()).unwrap_or(u32::MAX);
            Ok((count, Some(numbers)))
        }
        (Some(_), Some(_)) => Err(Problem::new(
            Code::InvalidNumbers,
            "give `quantity` for a lucky dip or `numbers` for chosen numbers, not both",
        )),
        (None, None) => Err(Problem::new(
            Code::InvalidQuantity,
            "`quantity` (a lucky dip) or `numbers` (chosen numbers) is required",
        )),
    }
}

/// The codes of `get_purchase`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_PURCHASE_CODES: &[Code] = &[Code::PurchaseNotFound, Code::DrawNotFound];

/// Read a purchase
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/purchases/{payment_id}",
    tag = "purchases",
    params(PurchasePath),
    responses(
        (status = 200, description = "The purchase", body = PurchaseResponse),
    )
)]
pub(super) async fn get_purchase(
    State(state): State<AppState>,
    PathParams(PurchasePath {
        draw_id,
        payment_id,
    }): PathParams<PurchasePath>,
) -> Result<Json<PurchaseResponse>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let payment_id = PaymentId::parse(&payment_id)?;
    let purchase = state.tickets.get_purchase(&draw_id, &payment_id).await?;
    Ok(Json(purchase.into()))
}

/// Why a purchase is voided.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct VoidBody {
    /// Required: 1 to 500 characters without control characters, line or
    /// paragraph separators or bidirectional controls.
    #[schema(
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069]{1,500}$"
    )]
    reason: Option<String>,
}

/// The codes of `void_purchase`'s own errors (the document adds those of its parameters and body).
pub(super) const VOID_PURCHASE_CODES: &[Code] = &[
    Code::InvalidReason,
    Code::PurchaseNotFound,
    Code::DrawNotFound,
];

/// Void a purchase
///
/// A refund or a chargeback: the purchase and its tickets become `void`; they are never
/// sold again. Before the draw's freeze (at its close) they leave the eligible list and
/// cannot win; after it they stay in the frozen list and may still be drawn, flagged
/// `voided` among the winners for the operator to redraw. `voided_after_freeze` says
/// which. Voiding again answers the purchase as voided first.
#[utoipa::path(
    post,
    path = "/draws/{draw_id}/purchases/{payment_id}/void",
    tag = "purchases",
    params(PurchasePath),
    request_body = VoidBody,
    responses(
        (status = 200, description = "The voided purchase", body = PurchaseResponse),
    )
)]
pub(super) async fn void_purchase(
    State(state): State<AppState>,
    Acting(by): Acting,
    PathParams(PurchasePath {
        draw_id,
        payment_id,
    }): PathParams<PurchasePath>,
    JsonBody(body): JsonBody<VoidBody>,
) -> Result<impl IntoResponse, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let payment_id = PaymentId::parse(&payment_id)?;
    let reason = required_text("reason", body.reason, MAX_REASON_LEN)?;
    let purchase = state
        .tickets
        .void_purchase(&draw_id, &payment_id, &reason, &by)
        .await?;
    Ok(Json(PurchaseResponse::from(purchase)))
}

/// Who holds a ticket.
#[derive(Serialize, ToSchema)]
pub(super) struct TicketBody {
    draw_id: String,
    number: u64,
    payment_id: String,
    #[schema(required = true)]
    payer_id: Option<String>,
    status: PurchaseStatus,
}

/// The codes of `get_ticket`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_TICKET_CODES: &[Code] = &[
    Code::InvalidTicketNumber,
    Code::TicketOutOfRange,
    Code::TicketNotSold,
    Code::DrawNotFound,
];

/// Who holds a ticket
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/tickets/{number}",
    tag = "purchases",
    params(TicketPath),
    responses(
        (status = 200, description = "The ticket's purchase", body = TicketBody),
    )
)]
pub(super) async fn get_ticket(
    State(state): State<AppState>,
    PathParams(TicketPath { draw_id, number }): PathParams<TicketPath>,
) -> Result<Json<TicketBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let number: u64 = number.parse().map_err(|_| {
        Problem::new(
            Code::InvalidTicketNumber,
            "the ticket number must be a positive integer",
        )
    })?;
    let ticket = state.tickets.get_ticket(&draw_id, number).await?;
    Ok(Json(TicketBody {
        draw_id: ticket.draw_id.to_string(),
        number: ticket.number,
        payment_id: ticket.payment_id.to_string(),
        payer_id: ticket.payer_id.map(|p| p.to_string()),
        status: if ticket.voided {
            PurchaseStatus::Void
        } else {
            PurchaseStatus::Active
        },
    }))
}
