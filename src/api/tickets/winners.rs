//! Drawing the winners, redrawing a prize, reading the winners with their proof, and the
//! eligible list in its public form.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::Problem;
use super::super::timestamp;
use super::{DrawPath, free_text, required_text};
use crate::domain::draw::MAX_BEACON_VALUE_LEN;
use crate::domain::ids::DrawId;
use crate::domain::purchase::{MAX_REASON_LEN, hex};
use crate::domain::winners::{ALGORITHM, MAX_PRIZES};
use crate::store::winners::PickItem;
use crate::tickets::Winners;

/// How many prizes to draw, and the beacon's value when the draw declared a beacon.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DrawWinnersBody {
    /// 1 to 99.
    #[schema(minimum = 1, maximum = 99)]
    prizes: u32,
    /// The declared beacon's published value (1 to 1,024 characters): required when the
    /// draw declared a beacon, refused otherwise.
    #[schema(pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]{1,1024}$")]
    beacon_value: Option<String>,
}

/// A prize and the ticket that holds it now.
#[derive(Serialize, ToSchema)]
struct PrizeBody {
    prize: u32,
    ticket: u64,
    payment_id: String,
    payer_id: Option<String>,
    pick: u64,
    drawn_at: String,
}

/// A winner that a redraw replaced.
#[derive(Serialize, ToSchema)]
struct ReplacedBody {
    prize: u32,
    ticket: u64,
    payment_id: String,
    payer_id: Option<String>,
    pick: u64,
    replaced_by_pick: u64,
    reason: Option<String>,
    replaced_at: String,
}

/// One pick of the procedure: the first ones go to the prizes, each later one is a
/// redraw.
#[derive(Serialize, ToSchema)]
struct PickBody {
    pick: u64,
    prize: u32,
    ticket: u64,
}

/// Everything needed to recompute the winners, with the eligible list of
/// `GET /draws/{draw_id}/eligible`.
#[derive(Serialize, ToSchema)]
struct ProofBody {
    /// `tally-draw-v1`.
    algorithm: &'static str,
    seed: String,
    seed_commitment: String,
    beacon: Option<String>,
    beacon_value: Option<String>,
    total_tickets: u64,
    prizes: u32,
    eligible_count: u64,
    eligible_digest: String,
    picks: Vec<PickBody>,
}

/// Eligible entries by channel: `online` and free `postal` ones, which had the same chance.
#[derive(Serialize, ToSchema)]
struct EligibleEntries {
    online: u64,
    postal: u64,
}

/// The winners with the proof that anyone can recompute them from.
#[derive(Serialize, ToSchema)]
pub(super) struct WinnersBody {
    draw_id: String,
    prizes: Vec<PrizeBody>,
    history: Vec<ReplacedBody>,
    proof: ProofBody,
    /// The proof's `eligible_count` by channel.
    eligible_entries: EligibleEntries,
}

fn payer(pick: &PickItem) -> Option<String> {
    pick.payer_id.as_ref().map(|p| p.to_string())
}

impl WinnersBody {
    /// The winners, with `postal` of their eligible entries postal.
    fn new(winners: &Winners, postal: u64) -> Self {
        let draw = &winners.draw;
        Self {
            eligible_entries: EligibleEntries {
                online: winners.record.eligible_count - postal,
                postal,
            },
            draw_id: draw.draw_id.to_string(),
            prizes: winners
                .prizes()
                .into_iter()
                .map(|p| PrizeBody {
                    prize: p.prize,
                    ticket: p.pick.ticket,
                    payment_id: p.pick.payment_id.to_string(),
                    payer_id: payer(p.pick),
                    pick: p.pick.pick,
                    drawn_at: timestamp(p.pick.at),
                })
                .collect(),
            history: winners
                .history()
                .into_iter()
                .map(|r| ReplacedBody {
                    prize: r.pick.prize,
                    ticket: r.pick.ticket,
                    payment_id: r.pick.payment_id.to_string(),
                    payer_id: payer(r.pick),
                    pick: r.pick.pick,
                    replaced_by_pick: r.replaced_by.pick,
                    reason: r.replaced_by.reason.clone(),
                    replaced_at: timestamp(r.replaced_by.at),
                })
                .collect(),
            proof: ProofBody {
                algorithm: ALGORITHM,
                seed: draw.seed.reveal(),
                seed_commitment: draw.seed.commitment(),
                beacon: draw.beacon.clone(),
                beacon_value: winners.record.beacon_value.clone(),
                total_tickets: draw.config.total_tickets(),
                prizes: winners.record.prizes,
                eligible_count: winners.record.eligible_count,
                eligible_digest: winners.record.eligible_digest.clone(),
                picks: winners
                    .picks
                    .iter()
                    .map(|p| PickBody {
                        pick: p.pick,
                        prize: p.prize,
                        ticket: p.ticket,
                    })
                    .collect(),
            },
        }
    }
}

/// Draw the winners
///
/// Once: the same body again answers `200` with the same winners. A draw past its
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
        (status = 400, description = "`invalid_prizes`, `beacon_value_required`, `beacon_not_declared`, `invalid_beacon_value`, `invalid_draw_id`"),
        (status = 404, description = "`draw_not_found`"),
        (status = 409, description = "`draw_open` (close it first), `winners_drawn` (with another body), `not_enough_eligible` (with `eligible`)"),
    )
)]
pub(super) async fn draw_winners(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
    JsonBody(body): JsonBody<DrawWinnersBody>,
) -> Result<impl IntoResponse, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    if !(1..=MAX_PRIZES).contains(&body.prizes) {
        return Err(Problem::bad_request(
            "invalid_prizes",
            format!("`prizes` must be between 1 and {MAX_PRIZES}"),
        ));
    }
    let beacon_value = free_text("beacon_value", body.beacon_value, MAX_BEACON_VALUE_LEN)?;
    let winners = state
        .tickets
        .draw_winners(&draw_id, body.prizes, beacon_value)
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

/// Read the winners
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/winners",
    tag = "winners",
    params(DrawPath),
    responses(
        (status = 200, description = "The winners", body = WinnersBody),
        (status = 400, description = "`invalid_draw_id`"),
        (status = 404, description = "`winners_not_drawn`, `draw_not_found`"),
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

/// Why a prize is drawn again.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RedrawBody {
    /// Required: 1 to 500 characters without control characters. The prize's latest
    /// redraw with the same reason makes the request a repeat.
    #[schema(pattern = "^[^\\x00-\\x1f\\x7f-\\x9f]{1,500}$")]
    reason: Option<String>,
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

/// Redraw a prize
///
/// The prize's winner is replaced by the next pick of the same procedure; `history`
/// keeps the replaced winner.
#[utoipa::path(
    post,
    path = "/draws/{draw_id}/winners/{prize}/redraw",
    tag = "winners",
    params(PrizePath),
    request_body = RedrawBody,
    responses(
        (status = 201, description = "Redrawn now", body = WinnersBody),
        (status = 200, description = "The prize's latest redraw had this reason", body = WinnersBody),
        (status = 400, description = "`invalid_reason`, `invalid_prize`, `invalid_draw_id`"),
        (status = 404, description = "`prize_not_found`, `winners_not_drawn`, `draw_not_found`"),
        (status = 409, description = "`winner_changed` (another redraw replaced that winner meanwhile), `not_enough_eligible` (with `eligible`)"),
    )
)]
pub(super) async fn redraw(
    State(state): State<AppState>,
    PathParams(PrizePath { draw_id, prize }): PathParams<PrizePath>,
    JsonBody(body): JsonBody<RedrawBody>,
) -> Result<impl IntoResponse, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let prize: u32 = prize.parse().map_err(|_| {
        Problem::bad_request("invalid_prize", "the prize must be a positive integer")
    })?;
    let reason = required_text("reason", body.reason, MAX_REASON_LEN)?;
    let winners = state.tickets.redraw(&draw_id, prize, &reason).await?;
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

/// The eligible list
///
/// Once the winners are drawn, the very list they were drawn from.
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/eligible",
    tag = "winners",
    params(DrawPath),
    responses(
        (status = 200, description = "One bit per ticket", body = EligibleBody),
        (status = 400, description = "`invalid_draw_id`"),
        (status = 404, description = "`draw_not_found`"),
        (status = 409, description = "`draw_open`: not closed yet"),
    )
)]
pub(super) async fn get_eligible(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
) -> Result<Json<EligibleBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let (draw, set) = state.tickets.get_eligible(&draw_id).await?;
    Ok(Json(EligibleBody {
        draw_id: draw.draw_id.to_string(),
        total_tickets: set.total(),
        eligible_count: set.count(),
        eligible_digest: hex(&set.digest()),
        encoding: "bitmap-lsb0-base64",
        bitmap: STANDARD.encode(set.to_bitmap()),
    }))
}
