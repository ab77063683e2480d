//! Draws: their status, what a draw is as stored, its settings (`config.rs`) and its
//! public facts at one moment (`facts.rs`). Pure logic: no I/O.

mod config;
pub mod facts;

pub use config::{
    DEFAULT_HOLD_SECONDS, DEFAULT_MAX_HELD_PERCENT, DEFAULT_MAX_PER_PURCHASE, DrawConfig,
    DrawConfigError, HOLD_SECONDS, MAX_HELD_PERCENT, MAX_PER_PURCHASE_CAP, MAX_STRIPE_TICKETS,
    MAX_STRIPES, MAX_TOTAL_TICKETS, default_stripes,
};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::ids::{DrawId, PaymentId};
use super::instant::InstantWins;
use super::permutation::PermutationKey;
use super::schedule::{Phase, Schedule};
use super::seed::DrawSeed;
use super::winners::{BeaconNetwork, RoundSignature};

/// Whether a draw still sells. A stored draw is open, closing or closed; `Scheduled` is
/// how an open draw reads before its `opens_at`, `SoldOut` how it reads once every ticket
/// is sold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DrawStatus {
    Scheduled,
    Open,
    /// Open, and every ticket sold (voided ones included, as they never sell again; a
    /// held number is not sold). A purchase is refused `sold_out`; a replay still answers.
    SoldOut,
    /// A close has begun and not finished: some stripes may still sell. Closing again
    /// finishes it.
    Closing,
    /// Every stripe is closed: no purchase can commit.
    Closed,
}

impl DrawStatus {
    /// How a draw stored with this status reads at `now`: past its `closes_at` closed
    /// without any call, before its `opens_at` scheduled, sold out once every ticket is.
    pub fn reads_at(self, schedule: &Schedule, sold_out: bool, now: Timestamp) -> Self {
        match (self, schedule.phase(now)) {
            (Self::Open, Phase::NotOpen) => Self::Scheduled,
            (Self::Open, Phase::Open) if sold_out => Self::SoldOut,
            (Self::Open | Self::Closing, Phase::Over) => Self::Closed,
            (status, _) => status,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Open => "open",
            Self::SoldOut => "sold_out",
            Self::Closing => "closing",
            Self::Closed => "closed",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "scheduled" => Some(Self::Scheduled),
            "open" => Some(Self::Open),
            "sold_out" => Some(Self::SoldOut),
            "closing" => Some(Self::Closing),
            "closed" => Some(Self::Closed),
            _ => None,
        }
    }

    /// Whether new purchases are refused.
    pub fn refuses_sales(self) -> bool {
        match self {
            // A sold-out draw refuses as sold out, and replays answer.
            Self::Scheduled | Self::Open | Self::SoldOut => false,
            Self::Closing | Self::Closed => true,
        }
    }
}

/// The longest draw name.
pub const MAX_NAME_LEN: usize = 200;

/// The longest beacon signature, in hex: a G2 signature is 96 bytes.
pub const MAX_SIGNATURE_HEX_LEN: usize = 192;

/// A draw as stored: its settings, its secrets and where it stands.
#[derive(Debug, Clone)]
pub struct Draw {
    pub draw_id: DrawId,
    pub name: Option<String>,
    pub config: DrawConfig,
    pub schedule: Schedule,
    /// The drand network whose round the winners will hash, as declared now.
    pub beacon: Option<BeaconNetwork>,
    /// The beacon network's name as the create declared it: what tells a repeated create
    /// from another.
    pub created_beacon: Option<String>,
    /// A purchase or hold was sent (recorded before the first one could commit): buyers
    /// trusted the beacon, which may no longer be withdrawn or switched.
    pub beacon_fixed: bool,
    /// Secret; orders the tickets.
    pub key: PermutationKey,
    /// Secret until the winners are drawn; `seed_commitment` is its hash.
    pub seed: DrawSeed,
    /// Prizes fixed on numbers at creation, won by whoever buys them.
    pub instant_wins: Option<InstantWins>,
    pub status: DrawStatus,
    /// Tickets of purchases voided before the freeze: out of the eligible list.
    pub voided: u64,
    /// Tickets of purchases voided after the freeze: recorded, still in the list.
    pub late_voided: u64,
    /// Bundles whose void committed while some of their tickets are not marked void yet:
    /// the eligible list finishes them before it trusts the index of voided tickets.
    pub voiding: Vec<PaymentId>,
    /// The eligible list fixed at the close, once it is.
    pub frozen: Option<Frozen>,
    /// Of those, postal entries.
    pub postal_voided: u64,
    pub winners: Option<WinnersRecord>,
    /// A redraw asked for whose round is not resolved yet.
    pub pending_redraw: Option<PendingRedraw>,
    /// When a read of its counts first found every ticket sold: listings, which read no
    /// counts, show it `sold_out` from then on.
    pub sold_out_at: Option<Timestamp>,
    pub created_at: Timestamp,
}

/// The eligible list as the close fixed it, and the beacon round and number of prizes fixed
/// with it. The draw item stores it as it derives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frozen {
    pub eligible_count: u64,
    /// Hex SHA-256 of the eligible bitmap.
    pub eligible_digest: String,
    #[serde(with = "crate::time::millis")]
    pub frozen_at: Timestamp,
    /// The first round of the draw's network published more than the margin after
    /// `frozen_at`; `None` for a draw without a beacon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beacon_round: Option<u64>,
    /// The number of prizes the draw declared at its create, or else the close fixed,
    /// before the round is out: the winners draw exactly that many. `None` for a draw that
    /// declared none and was closed without it, or frozen before the close fixed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prizes: Option<u32>,
}

/// A redraw asked for with its reason; its pick waits for its round's signature. The draw
/// item stores it as it derives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRedraw {
    pub prize: u32,
    /// The pick it will make: the next one.
    pub pick: u64,
    pub reason: String,
    #[serde(with = "crate::time::millis")]
    pub requested_at: Timestamp,
    /// The first round published more than the margin after `requested_at`.
    pub beacon_round: u64,
}

/// What the draw item records of its winners; the picks are items of their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WinnersRecord {
    pub prizes: u32,
    /// The draw's round and its signature, when the draw has a beacon.
    pub beacon: Option<RoundSignature>,
    pub eligible_count: u64,
    /// Hex SHA-256 of the eligible bitmap.
    pub eligible_digest: String,
    /// Picks made so far: the prizes, then one per redraw.
    pub picks: u64,
    pub drawn_at: Timestamp,
}

impl Draw {
    /// A draw as its create makes it: open, unnamed, unscheduled, without beacon or
    /// instant wins, nothing voided, frozen or drawn. Callers set the rest by name.
    pub fn new(
        draw_id: DrawId,
        config: DrawConfig,
        key: PermutationKey,
        seed: DrawSeed,
        created_at: Timestamp,
    ) -> Self {
        Self {
            draw_id,
            name: None,
            config,
            schedule: Schedule::default(),
            beacon: None,
            created_beacon: None,
            beacon_fixed: false,
            key,
            seed,
            instant_wins: None,
            status: DrawStatus::Open,
            voided: 0,
            late_voided: 0,
            voiding: Vec::new(),
            frozen: None,
            postal_voided: 0,
            winners: None,
            pending_redraw: None,
            sold_out_at: None,
            created_at,
        }
    }

    /// The status as it reads at `now`: a draw past its `closes_at` reads closed without
    /// any call, one before its `opens_at` reads scheduled.
    pub fn status_at(&self, now: Timestamp) -> DrawStatus {
        self.status
            .reads_at(&self.schedule, self.sold_out_at.is_some(), now)
    }

    /// The settings a create compares: a repeat with the same ones is the same create.
    pub fn same_settings(&self, other: &Draw) -> bool {
        self.name == other.name
            && self.config == other.config
            && self.schedule == other.schedule
            && self.created_beacon == other.created_beacon
            && self.instant_wins.as_ref().map(InstantWins::prizes)
                == other.instant_wins.as_ref().map(InstantWins::prizes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draw_reads_scheduled_before_it_opens_and_closed_from_its_close() {
        let at = |text: &str| crate::time::parse_rfc3339(text).unwrap();
        let draw = Draw {
            schedule: Schedule::new(
                Some(at("2026-12-01T10:00:00Z")),
                Some(at("2026-12-01T12:00:00Z")),
            )
            .unwrap(),
            ..Draw::new(
                DrawId::parse("d").unwrap(),
                DrawConfig::new(10, None, None).unwrap(),
                PermutationKey::generate(),
                DrawSeed::generate(),
                at("2026-11-01T00:00:00Z"),
            )
        };
        assert_eq!(
            draw.status_at(at("2026-12-01T09:00:00Z")),
            DrawStatus::Scheduled
        );
        assert_eq!(draw.status_at(at("2026-12-01T11:00:00Z")), DrawStatus::Open);
        assert_eq!(
            draw.status_at(at("2026-12-01T12:00:00Z")),
            DrawStatus::Closed
        );
        let closing = Draw {
            status: DrawStatus::Closing,
            ..draw.clone()
        };
        assert_eq!(
            closing.status_at(at("2026-12-01T11:00:00Z")),
            DrawStatus::Closing
        );
        assert_eq!(
            closing.status_at(at("2026-12-01T13:00:00Z")),
            DrawStatus::Closed
        );
        assert!(!DrawStatus::Scheduled.refuses_sales());
        // Sold out while open; closed once past `closes_at` like any draw.
        let sold_out = Draw {
            sold_out_at: Some(at("2026-12-01T10:30:00Z")),
            ..draw.clone()
        };
        assert_eq!(
            sold_out.status_at(at("2026-12-01T11:00:00Z")),
            DrawStatus::SoldOut
        );
        assert_eq!(
            sold_out.status_at(at("2026-12-01T12:00:00Z")),
            DrawStatus::Closed
        );
        assert_eq!(DrawStatus::parse("sold_out"), Some(DrawStatus::SoldOut));
    }
}
