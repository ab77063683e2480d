//! What the winners' answer says: the prizes and the tickets that hold them, the history
//! of redraws, and the proof anyone can recompute them from.

use serde::Serialize;
use utoipa::ToSchema;

use super::super::super::timestamp;
use super::super::draws::BeaconFields;
use super::super::instant::InstantProofBody;
use crate::store::winners::PickItem;
use crate::tickets::Winners;
use tally_domain::winners::ALGORITHM;

/// A prize and the ticket that holds it now.
#[derive(Serialize, ToSchema)]
struct PrizeBody {
    prize: u32,
    ticket: u64,
    /// The purchase that holds the ticket: the buyer recognises their own.
    payment_id: String,
    pick: u64,
    #[schema(format = DateTime)]
    drawn_at: String,
    /// The ticket was voided after the freeze: the operator redraws the prize with a
    /// reason.
    voided: bool,
}

/// A winner that a redraw replaced.
#[derive(Serialize, ToSchema)]
struct ReplacedBody {
    prize: u32,
    ticket: u64,
    payment_id: String,
    pick: u64,
    replaced_by_pick: u64,
    #[schema(required = true)]
    reason: Option<String>,
    #[schema(format = DateTime)]
    replaced_at: String,
}

/// A redraw asked for, whose pick waits for its round.
#[derive(Serialize, ToSchema)]
struct PendingRedrawBody {
    prize: u32,
    pick: u64,
    reason: String,
    #[schema(format = DateTime)]
    requested_at: String,
    /// The first round published more than 30 s after `requested_at`: give its
    /// signature to make the pick.
    beacon_round: u64,
    #[schema(required = true, format = DateTime)]
    round_published_at: Option<String>,
}

/// A picked ticket voided after the freeze: it stays in the list, and a prize it holds is
/// flagged `voided`.
#[derive(Serialize, ToSchema)]
struct LateVoidBody {
    ticket: u64,
    payment_id: String,
}

/// One pick of the procedure: the first ones go to the prizes, each later one is a
/// redraw, with its reason, request time and (with a beacon) its own round.
#[derive(Serialize, ToSchema)]
struct PickBody {
    pick: u64,
    prize: u32,
    ticket: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime)]
    requested_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    beacon_round: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    beacon_signature: Option<String>,
}

/// The draw's beacon in the proof: the network, the round and its signature.
#[derive(Serialize, ToSchema)]
struct ProofBeaconBody {
    #[serde(flatten)]
    network: BeaconFields,
    signature: String,
}

/// Everything needed to recompute the winners, with the eligible list of
/// `GET /draws/{draw_id}/eligible`; no personal data.
#[derive(Serialize, ToSchema)]
struct ProofBody {
    /// `tally-draw-v2`.
    algorithm: &'static str,
    seed: String,
    seed_commitment: String,
    total_tickets: u64,
    prizes: u32,
    eligible_count: u64,
    eligible_digest: String,
    #[schema(format = DateTime)]
    frozen_at: String,
    /// When the winners were drawn: every redraw is asked for later.
    #[schema(format = DateTime)]
    drawn_at: String,
    #[schema(required = true)]
    beacon: Option<ProofBeaconBody>,
    picks: Vec<PickBody>,
    /// How many tickets were voided after the freeze, picked or not (the draw's
    /// `late_voided`).
    late_voided: u64,
    /// The picked tickets (winners, redrawn or replaced) voided after the freeze, in
    /// ticket order: never more than the picks; the others are only counted.
    late_voids: Vec<LateVoidBody>,
    /// The instant wins' map and awards, in a draw created with some.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    instant_wins: Option<InstantProofBody>,
}

/// Eligible entries by channel: `online` and free `postal` ones, which had the same chance.
#[derive(Serialize, ToSchema)]
struct EligibleEntries {
    online: u64,
    postal: u64,
}

/// The winners with the proof that anyone can recompute them from. It names tickets and
/// purchases, never payers: it is meant to be published.
#[derive(Serialize, ToSchema)]
pub(in crate::api::tickets) struct WinnersBody {
    draw_id: String,
    prizes: Vec<PrizeBody>,
    history: Vec<ReplacedBody>,
    #[schema(required = true)]
    pending_redraw: Option<PendingRedrawBody>,
    proof: ProofBody,
    /// The proof's `eligible_count` by channel.
    eligible_entries: EligibleEntries,
}

impl WinnersBody {
    /// The winners, with `postal` of their eligible entries postal.
    pub(super) fn new(winners: &Winners, postal: u64) -> Self {
        let draw = &winners.draw;
        let frozen_at = draw
            .frozen
            .as_ref()
            .map_or(winners.record.drawn_at, |f| f.frozen_at);
        let published = |round: u64| {
            draw.beacon.as_ref().and_then(|n| {
                tally_domain::time::from_epoch_millis(n.published_at_ms(round)).map(timestamp)
            })
        };
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
                    pick: p.pick.pick,
                    drawn_at: timestamp(p.pick.at),
                    voided: p.voided,
                })
                .collect(),
            history: winners
                .history()
                .into_iter()
                .map(|r| ReplacedBody {
                    prize: r.pick.prize,
                    ticket: r.pick.ticket,
                    payment_id: r.pick.payment_id.to_string(),
                    pick: r.pick.pick,
                    replaced_by_pick: r.replaced_by.pick,
                    reason: r.replaced_by.reason.clone(),
                    replaced_at: timestamp(r.replaced_by.at),
                })
                .collect(),
            pending_redraw: draw.pending_redraw.as_ref().map(|p| PendingRedrawBody {
                prize: p.prize,
                pick: p.pick,
                reason: p.reason.clone(),
                requested_at: timestamp(p.requested_at),
                beacon_round: p.beacon_round,
                round_published_at: published(p.beacon_round),
            }),
            proof: ProofBody {
                algorithm: ALGORITHM,
                seed: draw.seed.reveal(),
                seed_commitment: draw.seed.commitment(),
                total_tickets: draw.config.total_tickets(),
                prizes: winners.record.prizes,
                eligible_count: winners.record.eligible_count,
                eligible_digest: winners.record.eligible_digest.clone(),
                frozen_at: timestamp(frozen_at),
                drawn_at: timestamp(winners.record.drawn_at),
                beacon: draw
                    .beacon
                    .as_ref()
                    .zip(winners.record.beacon.as_ref())
                    .map(|(network, round)| ProofBeaconBody {
                        network: BeaconFields::new(network, Some(round.round)),
                        signature: round.signature.clone(),
                    }),
                picks: winners.picks.iter().map(pick_body).collect(),
                late_voided: draw.late_voided,
                late_voids: winners
                    .late_voids
                    .iter()
                    .map(|t| LateVoidBody {
                        ticket: t.number,
                        payment_id: t.payment_id.to_string(),
                    })
                    .collect(),
                instant_wins: winners.instant.as_ref().map(InstantProofBody::new),
            },
        }
    }
}

fn pick_body(pick: &PickItem) -> PickBody {
    PickBody {
        pick: pick.pick,
        prize: pick.prize,
        ticket: pick.ticket,
        reason: pick.reason.clone(),
        requested_at: pick.requested_at.map(timestamp),
        beacon_round: pick.beacon.as_ref().map(|b| b.round),
        beacon_signature: pick.beacon.as_ref().map(|b| b.signature.clone()),
    }
}
