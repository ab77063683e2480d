//! Drawing the winners, redrawing a prize, reading the winners with their proof, and the
//! eligible list in its public form. What the winners' answer says is in `response.rs`.

mod response;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::caller::Acting;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::{Code, Problem};
use super::{DrawPath, required_text, valid_prizes};
use crate::tickets::BeaconInput;
use tally_domain::draw::MAX_SIGNATURE_HEX_LEN;
use tally_domain::hex;
use tally_domain::ids::DrawId;
use tally_domain::purchase::MAX_REASON_LEN;

use response::WinnersBody;

/// How many prizes to draw, and the signature of the draw's beacon round when it has a
/// beacon.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DrawWinnersBody {
    /// 1 to 97: the number the draw declared or its close fixed (`prizes` of the draw),
    /// which may be left out. Required when neither did; a call that closes such a draw
    /// fixes it.
    #[schema(minimum = 1, maximum = 97)]
    prizes: Option<u32>,
    /// The signature of the draw's round (`beacon.round` of the draw), in hex as drand
    /// publishes it: required when the draw has a beacon, refused otherwise.
    #[schema(pattern = "^(?:[0-9a-fA-F]{2}){1,96}$")]
    beacon_signature: Option<String>,
    /// The round the signature is of, if you want it checked: it must be the draw's.
    beacon_round: Option<u64>,
}

/// A beacon signature as a body gives it: bytes in hex (two digits each), at most a G2
/// signature's length.
fn beacon_input(
    signature: Option<String>,
    round: Option<u64>,
) -> Result<Option<BeaconInput>, Problem> {
    match signature {
        Some(signature)
            if signature.is_empty()
                || signature.len() % 2 != 0
                || signature.len() > MAX_SIGNATURE_HEX_LEN
                || !signature.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Err(Problem::new(
                Code::InvalidBeaconSignature,
                format!(
                    "`beacon_signature` is bytes in hex: an even number of digits, at most {MAX_SIGNATURE_HEX_LEN}"
                ),
            ))
        }
        Some(signature) => Ok(Some(BeaconInput { signature, round })),
        None if round.is_some() => Err(Problem::new(
            Code::BeaconSignatureRequired,
            "`beacon_round` comes with `beacon_signature`",
        )),
        None => Ok(None),
    }
}

/// The codes of `draw_winners`'s own errors (the document adds those of its parameters and body).
pub(super) const DRAW_WINNERS_CODES: &[Code] = &[
    Code::InvalidPrizes,
    Code::PrizesFixed,
    Code::BeaconSignatureRequired,
    Code::InvalidBeaconSignature,
    Code::WrongBeaconRound,
    Code::BeaconNotDeclared,
    Code::DrawNotFound,
    Code::DrawOpen,
    Code::BeaconNotPublished,
    Code::WinnersDrawn,
    Code::NotEnoughEligible,
];

/// Draw the winners
///
/// Once, from the list frozen at the close and, with a beacon, the randomness of the
/// draw's round: the same body again answers `200` with the same winners. A draw past its
/// `closes_at` is closed first.
#[utoipa::path(
    post,
    path = "/draws/{draw_id}/winners",
    tag = "winners",
    params(DrawPath),
    request_body = DrawWinnersBody,
    responses(
        (status = 201, description = "Drawn now", body = WinnersBody),
        (status = 200, description = "Drawn before with this body", body = WinnersBody),
    )
)]
pub(super) async fn draw_winners(
    State(state): State<AppState>,
    Acting(by): Acting,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
    JsonBody(body): JsonBody<DrawWinnersBody>,
) -> Result<impl IntoResponse, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let prizes = body.prizes.map(valid_prizes).transpose()?;
    let beacon = beacon_input(body.beacon_signature, body.beacon_round)?;
    let winners = state
        .tickets
        .draw_winners(&draw_id, prizes, beacon, &by)
        .await?;
    let status = if winners.drawn_now {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(WinnersBody::new(
            &winners,
            state.tickets.eligible_postal(&winners.draw).await?,
        )),
    ))
}

/// The codes of `get_winners`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_WINNERS_CODES: &[Code] = &[Code::WinnersNotDrawn, Code::DrawNotFound];

/// Read the winners
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/winners",
    tag = "winners",
    params(DrawPath),
    responses(
        (status = 200, description = "The winners", body = WinnersBody),
    )
)]
pub(super) async fn get_winners(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
) -> Result<Json<WinnersBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let winners = state.tickets.get_winners(&draw_id).await?;
    Ok(Json(WinnersBody::new(
        &winners,
        state.tickets.eligible_postal(&winners.draw).await?,
    )))
}

/// Why a prize is drawn again, and (to make the pick of a redraw asked for) the
/// signature of its round.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RedrawBody {
    /// Required: 1 to 500 characters without control characters, line or
    /// paragraph separators or bidirectional controls. The prize's latest
    /// redraw with the same reason makes the request a repeat.
    #[schema(
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069]{1,500}$"
    )]
    reason: Option<String>,
    /// The signature of `pending_redraw.beacon_round`, in hex: makes the pick.
    #[schema(pattern = "^(?:[0-9a-fA-F]{2}){1,96}$")]
    beacon_signature: Option<String>,
    /// The round the signature is of, if you want it checked.
    beacon_round: Option<u64>,
}

/// A prize of a draw.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct PrizePath {
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    draw_id: String,
    /// 1 to the number of prizes drawn.
    #[param(value_type = u32, minimum = 1)]
    prize: String,
}

/// The codes of `redraw`'s own errors (the document adds those of its parameters and body).
pub(super) const REDRAW_CODES: &[Code] = &[
    Code::InvalidReason,
    Code::InvalidPrize,
    Code::InvalidBeaconSignature,
    Code::WrongBeaconRound,
    Code::BeaconSignatureRequired,
    Code::BeaconNotDeclared,
    Code::PrizeNotFound,
    Code::WinnersNotDrawn,
    Code::DrawNotFound,
    Code::WinnerChanged,
    Code::RedrawPending,
    Code::RedrawNotRequested,
    Code::BeaconNotPublished,
    Code::NotEnoughEligible,
];

/// Redraw a prize
///
/// The prize's winner is replaced by the next pick of the same procedure; `history`
/// keeps the replaced winner. In a draw with a beacon, the first call (a reason, no
/// signature) asks for the redraw and answers `202` with `pending_redraw`, whose round is
/// fixed then; the same reason with that round's signature makes the pick.
#[utoipa::path(
    post,
    path = "/draws/{draw_id}/winners/{prize}/redraw",
    tag = "winners",
    params(PrizePath),
    request_body = RedrawBody,
    responses(
        (status = 201, description = "Redrawn now", body = WinnersBody),
        (status = 202, description = "Asked for now: `pending_redraw` names the round", body = WinnersBody),
        (status = 200, description = "The prize's latest redraw had this reason, or it waits for its round", body = WinnersBody),
    )
)]
pub(super) async fn redraw(
    State(state): State<AppState>,
    Acting(by): Acting,
    PathParams(PrizePath { draw_id, prize }): PathParams<PrizePath>,
    JsonBody(body): JsonBody<RedrawBody>,
) -> Result<impl IntoResponse, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let prize: u32 = prize
        .parse()
        .map_err(|_| Problem::new(Code::InvalidPrize, "the prize must be a positive integer"))?;
    let reason = required_text("reason", body.reason, MAX_REASON_LEN)?;
    let beacon = beacon_input(body.beacon_signature, body.beacon_round)?;
    let winners = state
        .tickets
        .redraw(&draw_id, prize, &reason, beacon, &by)
        .await?;
    let status = match (winners.drawn_now, &winners.draw.pending_redraw) {
        (true, Some(_)) => StatusCode::ACCEPTED,
        (true, None) => StatusCode::CREATED,
        (false, _) => StatusCode::OK,
    };
    Ok((
        status,
        Json(WinnersBody::new(
            &winners,
            state.tickets.eligible_postal(&winners.draw).await?,
        )),
    ))
}

/// The eligible list: `bitmap` is the base64 (RFC 4648, with padding) of
/// `ceil(total_tickets / 8)` bytes, bit `i % 8` (least significant first) of byte `i / 8`
/// standing for ticket `i + 1`.
#[derive(Serialize, ToSchema)]
pub(super) struct EligibleBody {
    draw_id: String,
    total_tickets: u64,
    eligible_count: u64,
    eligible_digest: String,
    /// `bitmap-lsb0-base64`.
    encoding: &'static str,
    bitmap: String,
}

/// The codes of `get_eligible`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_ELIGIBLE_CODES: &[Code] = &[
    Code::member("draw_id"),
    Code::DrawNotFound,
    Code::DrawOpen,
    Code::NotFrozen,
];

/// The eligible list
///
/// The list frozen at the close: the very list the winners are drawn from. A draw past
/// its `closes_at` is closed and frozen first if it declared its number of prizes; one
/// that did not answers `409 not_frozen` until a close or winners call names it.
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/eligible",
    tag = "winners",
    params(DrawPath),
    responses(
        (status = 200, description = "One bit per ticket", body = EligibleBody),
    )
)]
pub(super) async fn get_eligible(
    State(state): State<AppState>,
    Acting(by): Acting,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
) -> Result<Json<EligibleBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let (draw, set) = state.tickets.get_eligible(&draw_id, &by).await?;
    Ok(Json(EligibleBody {
        draw_id: draw.draw_id.to_string(),
        total_tickets: set.total(),
        eligible_count: set.count(),
        eligible_digest: hex::encode(&set.digest()),
        encoding: "bitmap-lsb0-base64",
        bitmap: STANDARD.encode(set.to_bitmap()),
    }))
}
