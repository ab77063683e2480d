//! A draw's instant wins: the prizes won so far and, once the winners are drawn, the
//! whole map with the key that proves it (`tally-instant-v1`, docs/winners.md).

use axum::Json;
use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;

use super::super::AppState;
use super::super::extract::PathParams;
use super::super::problem::{Code, Problem};
use super::super::timestamp;
use super::DrawPath;
use super::draws::InstantPrizeBody;
use crate::tickets::{InstantReveal, InstantWinsView};
use tally_domain::ids::DrawId;
use tally_domain::instant::{InstantAward, InstantWin};
use tally_domain::winners::INSTANT_ALGORITHM;

/// A ticket of a purchase that wins an instant prize.
#[derive(Serialize, ToSchema)]
pub(super) struct InstantWinBody {
    ticket: u64,
    prize: String,
}

impl InstantWinBody {
    pub(super) fn list(wins: &[InstantWin]) -> Vec<Self> {
        wins.iter()
            .map(|w| Self {
                ticket: w.ticket,
                prize: w.prize.clone(),
            })
            .collect()
    }
}

/// `active`, or `void` when its purchase was voided.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum AwardStatus {
    Active,
    Void,
}

impl AwardStatus {
    fn of(award: &InstantAward) -> Self {
        if award.voided {
            Self::Void
        } else {
            Self::Active
        }
    }
}

/// An instant prize won: the ticket, the purchase and payer that bought it, when.
#[derive(Serialize, ToSchema)]
struct WonBody {
    ticket: u64,
    prize: String,
    payment_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    payer_id: Option<String>,
    status: AwardStatus,
    awarded_at: String,
}

/// An award as the public proof names it: never the payer.
#[derive(Serialize, ToSchema)]
pub(super) struct ProofAwardBody {
    ticket: u64,
    prize: String,
    payment_id: String,
    status: AwardStatus,
}

/// A winning number of the map, slot by slot.
#[derive(Serialize, ToSchema)]
struct MapBody {
    ticket: u64,
    prize: String,
}

/// What proves the instant wins once the winners are drawn: the key (its SHA-256 is the
/// commitment shown from the creation on), the prizes, the map it gives and every award.
#[derive(Serialize, ToSchema)]
pub(super) struct InstantProofBody {
    /// `tally-instant-v1`.
    algorithm: &'static str,
    /// The instant-win key, in hex.
    key: String,
    commitment: String,
    prizes: Vec<InstantPrizeBody>,
    map: Vec<MapBody>,
    awards: Vec<ProofAwardBody>,
}

impl InstantProofBody {
    pub(super) fn new(reveal: &InstantReveal) -> Self {
        Self {
            algorithm: INSTANT_ALGORITHM,
            key: reveal.key.clone(),
            commitment: reveal.commitment.clone(),
            prizes: reveal
                .prizes
                .iter()
                .map(|p| InstantPrizeBody::new(&p.prize, p.count))
                .collect(),
            map: reveal
                .map
                .iter()
                .map(|(ticket, prize)| MapBody {
                    ticket: *ticket,
                    prize: prize.clone(),
                })
                .collect(),
            awards: reveal
                .awards
                .iter()
                .flat_map(|award| {
                    award.wins.iter().map(|win| ProofAwardBody {
                        ticket: win.ticket,
                        prize: win.prize.clone(),
                        payment_id: award.payment_id.to_string(),
                        status: AwardStatus::of(award),
                    })
                })
                .collect(),
        }
    }
}

/// The instant prizes won so far and, after the winners, the proof of the whole map.
#[derive(Serialize, ToSchema)]
pub(super) struct InstantWinsBody {
    draw_id: String,
    /// Every prize won so far, by ticket.
    won: Vec<WonBody>,
    /// Present once the winners are drawn: the map and what proves it.
    proof: Option<InstantProofBody>,
}

impl From<InstantWinsView> for InstantWinsBody {
    fn from(view: InstantWinsView) -> Self {
        let mut won: Vec<WonBody> = view
            .awards
            .iter()
            .flat_map(|award| {
                award.wins.iter().map(|win| WonBody {
                    ticket: win.ticket,
                    prize: win.prize.clone(),
                    payment_id: award.payment_id.to_string(),
                    payer_id: award.payer_id.as_ref().map(ToString::to_string),
                    status: AwardStatus::of(award),
                    awarded_at: timestamp(award.awarded_at),
                })
            })
            .collect();
        won.sort_by_key(|w| w.ticket);
        Self {
            draw_id: view.draw.draw_id.to_string(),
            won,
            proof: view.reveal.as_ref().map(InstantProofBody::new),
        }
    }
}

/// Read the instant wins
///
/// The prizes won so far (a purchase just made may take a moment to appear). Which
/// unsold numbers win is never shown before the winners are drawn; from then on the
/// answer carries the whole map and its key, which anyone checks against the draw's
/// `instant_wins.commitment`.
pub(super) const GET_INSTANT_WINS_CODES: &[Code] = &[Code::DrawNotFound, Code::NoInstantWins];

#[utoipa::path(
    get,
    path = "/draws/{draw_id}/instant-wins",
    tag = "winners",
    params(DrawPath),
    responses(
        (status = 200, description = "The instant wins", body = InstantWinsBody),
    )
)]
pub(super) async fn get_instant_wins(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
) -> Result<Json<InstantWinsBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let view = state.tickets.get_instant_wins(&draw_id).await?;
    Ok(Json(InstantWinsBody::from(view)))
}
