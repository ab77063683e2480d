//! A draw's public facts: what a player may be shown of it at any moment, cheap enough to
//! poll. No secret, no payer, no winning number.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderName;
use axum::http::header::CACHE_CONTROL;
use serde::Serialize;
use utoipa::ToSchema;

use super::super::AppState;
use super::super::extract::PathParams;
use super::super::problem::{Code, Problem};
use super::super::timestamp;
use super::DrawPath;
use crate::tickets::FactsAnswer;
use tally_domain::draw::DrawStatus;
use tally_domain::draw::facts::{Entries, Odds};
use tally_domain::ids::DrawId;

/// Entries in the draw by channel: tickets sold and not voided before the freeze (at the
/// close).
#[derive(Serialize, ToSchema)]
pub(super) struct EntriesBody {
    /// Bought online: lucky dips, chosen numbers, paid holds and bundles alike.
    online: u64,
    /// Free entries by post, which take part like paid ones.
    postal: u64,
}

impl From<Entries> for EntriesBody {
    fn from(entries: Entries) -> Self {
        Self {
            online: entries.online,
            postal: entries.postal,
        }
    }
}

/// One ticket's chance of a prize: `chances` in `out_of`.
#[derive(Serialize, ToSchema)]
pub(super) struct OddsBody {
    chances: u64,
    out_of: u64,
}

impl OddsBody {
    fn of(odds: Option<Odds>) -> Option<Self> {
        odds.map(|o| Self {
            chances: o.chances,
            out_of: o.out_of,
        })
    }
}

/// An instant prize and how many of its winning numbers are unsold: counts, never
/// numbers.
#[derive(Serialize, ToSchema)]
pub(super) struct InstantPrizeFacts {
    prize: String,
    /// Numbers that win it, as created.
    count: u32,
    /// Of those, numbers not sold yet (held ones included: they win nothing until paid
    /// for). A prize of a voided purchase is not offered again.
    remaining: u32,
    /// The chance that one number not sold yet wins it: `remaining` in the numbers not
    /// sold (`remaining` plus `held` of the draw). `null` once every number is sold.
    #[schema(required = true)]
    odds: Option<OddsBody>,
}

/// What anyone may know of a draw right now.
#[derive(Serialize, ToSchema)]
pub(super) struct FactsBody {
    draw_id: String,
    status: DrawStatus,
    total_tickets: u64,
    /// Numbers sold, voided ones included (they are never sold again).
    sold: u64,
    /// Numbers that live holds keep: neither sold nor free until their holds end.
    held: u64,
    /// Numbers free: neither sold nor held. `sold + held + remaining = total_tickets`.
    remaining: u64,
    /// Tickets voided before the freeze (at the close): out of the draw.
    voided: u64,
    entries: EntriesBody,
    /// The chance that one entry wins a given prize of the draw, were the winners drawn
    /// now: one in the entries (each prize goes to a different entry, every entry alike).
    /// `null` while there is no entry.
    #[schema(required = true)]
    prize_odds: Option<OddsBody>,
    /// The draw's instant prizes in their order; absent from a draw without.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    instant_prizes: Option<Vec<InstantPrizeFacts>>,
    /// What one ticket costs, in minor units of `currency`; `null` without a price.
    #[schema(required = true)]
    ticket_price: Option<u64>,
    /// The ISO 4217 code of `ticket_price`'s currency; `null` without a price.
    #[schema(required = true, pattern = "^[A-Z]{3}$")]
    currency: Option<String>,
    #[schema(required = true, format = DateTime)]
    closes_at: Option<String>,
    /// When the stripes were counted (strongly consistent): every figure is exact as of
    /// then, with the holds live at that moment. At most a few seconds old.
    #[schema(format = DateTime)]
    read_at: String,
}

impl From<FactsAnswer> for FactsBody {
    fn from(answer: FactsAnswer) -> Self {
        let facts = answer.facts;
        let standings = facts.standings;
        let unsold = standings.held + standings.free;
        let instant_prizes = facts.instant.map(|prizes| {
            prizes
                .into_iter()
                .map(|prize| InstantPrizeFacts {
                    odds: OddsBody::of(Odds::of(u64::from(prize.remaining), unsold)),
                    prize: prize.prize,
                    count: prize.count,
                    remaining: prize.remaining,
                })
                .collect()
        });
        Self {
            draw_id: facts.draw_id.to_string(),
            status: answer.status,
            total_tickets: facts.total_tickets,
            ticket_price: facts.price.map(|p| p.minor),
            currency: facts.price.map(|p| p.currency.to_string()),
            sold: standings.sold,
            held: standings.held,
            remaining: standings.free,
            voided: facts.voided,
            entries: facts.entries.into(),
            prize_odds: OddsBody::of(Odds::of(1, facts.entries.total())),
            instant_prizes,
            closes_at: facts.schedule.closes_at().map(timestamp),
            read_at: timestamp(facts.read_at),
        }
    }
}

/// The codes of `get_facts`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_FACTS_CODES: &[Code] = &[Code::member("draw_id"), Code::DrawNotFound];

/// Public facts
///
/// Entries so far by channel, numbers sold, held and remaining, the odds of the draw's
/// prizes and of each instant prize, and `closes_at`: what a player may be shown at any
/// moment, and what an operator's page may poll. Exact as of `read_at`, which is at most
/// a few seconds old: a poll reads the draw's published facts (one item by key), and only
/// a poll that finds them stale counts the draw's stripes again. `status` is as of the
/// answer: past `closes_at` the draw reads closed at once. `Cache-Control` says how long
/// the answer stays fresh, so a cache in front may answer too. No scan, no payer, no
/// secret, and of instant prizes only counts, never which numbers win.
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/facts",
    tag = "draws",
    params(DrawPath),
    responses(
        (status = 200, description = "The draw's facts at one moment", body = FactsBody,
            headers(("cache-control" = String,
                description = "`public, max-age=<seconds>`: how long these facts stay fresh"))),
    )
)]
pub(super) async fn get_facts(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
) -> Result<([(HeaderName, String); 1], Json<FactsBody>), Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let answer = state.tickets.draw_facts(&draw_id).await?;
    let cache = format!("public, max-age={}", answer.fresh_for.as_secs());
    Ok(([(CACHE_CONTROL, cache)], Json(answer.into())))
}
