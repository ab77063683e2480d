//! What responses say of a draw: its settings, beacon and instant prizes, and its live
//! counts.

use serde::Serialize;
use utoipa::ToSchema;

use super::super::super::timestamp;
use super::super::facts::EntriesBody;
use super::InstantPrizeBody;
use crate::tickets::DrawSummary;
use tally_domain::draw::{Draw, DrawStatus};
use tally_domain::winners::BeaconNetwork;

/// The draw's instant prizes, never their numbers, and the commitment to the key the
/// numbers derive from: keep it, the winners reveal the key.
#[derive(Serialize, ToSchema)]
pub(in crate::api::tickets) struct InstantWinsFields {
    prizes: Vec<InstantPrizeBody>,
    /// Hex SHA-256 of the instant-win key, from the first response on.
    commitment: String,
}

/// The draw's drand network and, from the close on, the round its winners use.
#[derive(Serialize, ToSchema)]
pub(in crate::api::tickets) struct BeaconFields {
    network: String,
    scheme: &'static str,
    /// Hex, as the network's chain information publishes it.
    public_key: String,
    /// Unix seconds of round 1.
    genesis_time: i64,
    /// Seconds between rounds.
    period: u32,
    /// Fixed at the close: the first round published more than 30 s after `frozen_at`.
    #[schema(required = true)]
    round: Option<u64>,
    /// When `round` is published.
    #[schema(required = true, format = DateTime)]
    round_published_at: Option<String>,
}

impl BeaconFields {
    pub(in crate::api::tickets) fn new(network: &BeaconNetwork, round: Option<u64>) -> Self {
        Self {
            network: network.name().to_owned(),
            scheme: network.scheme().as_str(),
            public_key: network.public_key_hex(),
            genesis_time: network.genesis_time(),
            period: network.period(),
            round,
            round_published_at: round.and_then(|r| {
                tally_domain::time::from_epoch_millis(network.published_at_ms(r)).map(timestamp)
            }),
        }
    }
}

/// What every response says of a draw, lists included.
#[derive(Serialize, ToSchema)]
pub(in crate::api::tickets) struct DrawFields {
    draw_id: String,
    #[schema(required = true)]
    name: Option<String>,
    total_tickets: u64,
    max_per_purchase: u32,
    #[schema(required = true)]
    max_per_payer: Option<u64>,
    hold_seconds: u32,
    max_held_per_payer: u64,
    max_held_percent: u8,
    /// What one ticket costs, in minor units of `currency`; `null` without a price.
    #[schema(required = true)]
    ticket_price: Option<u64>,
    #[schema(required = true, pattern = "^[A-Z]{3}$")]
    currency: Option<String>,
    stripes: u32,
    status: DrawStatus,
    #[schema(required = true, format = DateTime)]
    opens_at: Option<String>,
    #[schema(required = true, format = DateTime)]
    closes_at: Option<String>,
    #[schema(required = true)]
    beacon: Option<BeaconFields>,
    /// Hex SHA-256 of the secret seed, from the first response on.
    seed_commitment: String,
    /// Present when the draw was created with instant wins.
    #[serde(skip_serializing_if = "Option::is_none")]
    instant_wins: Option<InstantWinsFields>,
    /// Tickets voided before the freeze: never sold again, never winning.
    voided: u64,
    /// Tickets voided after the freeze: recorded, still in the frozen list; a winner
    /// among them is flagged and redrawn with a reason.
    late_voided: u64,
    /// When the eligible list was frozen, at the close.
    #[schema(required = true, format = DateTime)]
    frozen_at: Option<String>,
    /// The eligible tickets, fixed at the close.
    #[schema(required = true)]
    eligible_count: Option<u64>,
    /// Hex SHA-256 of the eligible bitmap, fixed at the close: keep this answer.
    #[schema(required = true)]
    eligible_digest: Option<String>,
    /// The number of prizes the winners draw: declared at the create, or else fixed at the
    /// close with the list (when the close named it), before the beacon round is out.
    #[schema(required = true)]
    prizes: Option<u32>,
    /// When the winners were drawn.
    #[schema(required = true, format = DateTime)]
    drawn_at: Option<String>,
    #[schema(format = DateTime)]
    created_at: String,
}

impl DrawFields {
    pub(in crate::api::tickets) fn new(draw: Draw, status: DrawStatus) -> Self {
        Self {
            draw_id: draw.draw_id.to_string(),
            name: draw.name,
            total_tickets: draw.config.total_tickets(),
            max_per_purchase: draw.config.max_per_purchase(),
            max_per_payer: draw.config.max_per_payer(),
            hold_seconds: draw.config.hold_seconds(),
            max_held_per_payer: draw.config.max_held_per_payer(),
            max_held_percent: draw.config.max_held_percent(),
            ticket_price: draw.config.price().map(|p| p.minor),
            currency: draw.config.price().map(|p| p.currency.to_string()),
            stripes: draw.config.stripes(),
            status,
            opens_at: draw.schedule.opens_at().map(timestamp),
            closes_at: draw.schedule.closes_at().map(timestamp),
            beacon: draw
                .beacon
                .as_ref()
                .map(|n| BeaconFields::new(n, draw.frozen.as_ref().and_then(|f| f.beacon_round))),
            seed_commitment: draw.seed.commitment(),
            instant_wins: draw.instant_wins.map(|i| InstantWinsFields {
                prizes: i
                    .prizes()
                    .iter()
                    .map(|p| InstantPrizeBody::new(&p.prize, p.count))
                    .collect(),
                commitment: i.commitment,
            }),
            voided: draw.voided,
            late_voided: draw.late_voided,
            frozen_at: draw.frozen.as_ref().map(|f| timestamp(f.frozen_at)),
            eligible_count: draw.frozen.as_ref().map(|f| f.eligible_count),
            eligible_digest: draw.frozen.as_ref().map(|f| f.eligible_digest.clone()),
            prizes: draw
                .frozen
                .as_ref()
                .and_then(|f| f.prizes)
                .or(draw.config.prizes()),
            drawn_at: draw.winners.map(|w| timestamp(w.drawn_at)),
            created_at: timestamp(draw.created_at),
        }
    }
}

/// A draw with its live counts.
#[derive(Serialize, ToSchema)]
pub(in crate::api::tickets) struct DrawBody {
    #[serde(flatten)]
    draw: DrawFields,
    /// Tickets sold, voided ones included.
    sold: u64,
    /// Numbers that live holds keep: neither sold nor free until their holds end.
    held: u64,
    /// Numbers free: neither sold nor held.
    remaining: u64,
    entries: EntriesBody,
}

impl From<DrawSummary> for DrawBody {
    fn from(summary: DrawSummary) -> Self {
        Self {
            sold: summary.sold,
            held: summary.held,
            remaining: summary.remaining(),
            entries: summary.entries().into(),
            draw: DrawFields::new(summary.draw, summary.status),
        }
    }
}
