//! Draw settings and status. Pure logic: no I/O.

use chrono::{DateTime, Utc};

use super::ids::{DrawId, PaymentId};
use super::instant::{InstantWins, InstantWinsError};
use super::permutation::PermutationKey;
use super::schedule::{Phase, Schedule};
use super::seed::DrawSeed;
use super::stripes::{StripeLayout, stripe_budget};
use super::winners::{BeaconNetwork, RoundSignature};

/// The largest draw.
pub const MAX_TOTAL_TICKETS: u64 = 10_000_000;
/// The most tickets one purchase may take (a bundle). A purchase writes its record, one
/// item per ticket and one cursor per stripe it touches; what does not fit one
/// transaction of 100 items follows its commit (`store::bundles`).
pub const MAX_PER_PURCHASE_CAP: u32 = 500;
/// Used when a draw does not say.
pub const DEFAULT_MAX_PER_PURCHASE: u32 = 20;
/// How long a hold lives when a draw does not say, and the bounds of `hold_seconds`.
pub const DEFAULT_HOLD_SECONDS: u32 = 600;
pub const HOLD_SECONDS: std::ops::RangeInclusive<u32> = 30..=3_600;
/// The most cursor items a draw may have.
pub const MAX_STRIPES: u32 = 1_024;

/// Why draw settings were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrawConfigError {
    #[error("`total_tickets` must be between 1 and {MAX_TOTAL_TICKETS}, not {0}")]
    TotalTickets(u64),
    #[error("`max_per_purchase` must be between 1 and {MAX_PER_PURCHASE_CAP}, not {0}")]
    MaxPerPurchase(u32),
    #[error("`stripes` must be between 1 and {MAX_STRIPES}, and at most `total_tickets`, not {0}")]
    Stripes(u32),
    #[error(
        "a purchase of {max_per_purchase} tickets needs {stripes_needed} stripes (at most 44 tickets from one), more than the draw has or one purchase can touch; change `stripes` or use a smaller `max_per_purchase`"
    )]
    PurchaseTooSpread {
        max_per_purchase: u32,
        stripes_needed: u32,
    },
    #[error("`max_per_payer` must be between 1 and {MAX_TOTAL_TICKETS}, not {0}")]
    MaxPerPayer(u64),
    #[error(transparent)]
    InstantWins(#[from] InstantWinsError),
    #[error("`hold_seconds` must be between 30 and 3600, not {0}")]
    HoldSeconds(u32),
}

/// Validated settings of a draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrawConfig {
    total_tickets: u64,
    max_per_purchase: u32,
    stripes: u32,
    /// The most non-voided tickets one payer may hold.
    max_per_payer: Option<u64>,
    /// The draw has instant wins: a purchase that wins one also writes its award.
    instant_wins: bool,
    /// How long a hold lives (it never outlives the sale).
    hold_seconds: u32,
}

impl DrawConfig {
    pub fn new(
        total_tickets: u64,
        max_per_purchase: Option<u32>,
        stripes: Option<u32>,
    ) -> Result<Self, DrawConfigError> {
        if !(1..=MAX_TOTAL_TICKETS).contains(&total_tickets) {
            return Err(DrawConfigError::TotalTickets(total_tickets));
        }
        let max_per_purchase = max_per_purchase.unwrap_or(DEFAULT_MAX_PER_PURCHASE);
        if !(1..=MAX_PER_PURCHASE_CAP).contains(&max_per_purchase) {
            return Err(DrawConfigError::MaxPerPurchase(max_per_purchase));
        }
        let stripes = stripes.unwrap_or_else(|| default_stripes(total_tickets));
        if stripes == 0 || stripes > MAX_STRIPES || u64::from(stripes) > total_tickets {
            return Err(DrawConfigError::Stripes(stripes));
        }
        Ok(Self {
            total_tickets,
            max_per_purchase,
            stripes,
            max_per_payer: None,
            instant_wins: false,
            hold_seconds: DEFAULT_HOLD_SECONDS,
        })
    }

    /// Sets how long a hold lives (`None`: the default, 600 seconds).
    pub fn with_hold_seconds(self, hold_seconds: Option<u32>) -> Result<Self, DrawConfigError> {
        let hold_seconds = hold_seconds.unwrap_or(DEFAULT_HOLD_SECONDS);
        if !HOLD_SECONDS.contains(&hold_seconds) {
            return Err(DrawConfigError::HoldSeconds(hold_seconds));
        }
        Ok(Self {
            hold_seconds,
            ..self
        })
    }

    pub fn hold_seconds(&self) -> u32 {
        self.hold_seconds
    }

    /// Caps the tickets one payer may hold (`None`: no cap).
    pub fn with_max_per_payer(self, max_per_payer: Option<u64>) -> Result<Self, DrawConfigError> {
        if let Some(max) = max_per_payer
            && !(1..=MAX_TOTAL_TICKETS).contains(&max)
        {
            return Err(DrawConfigError::MaxPerPayer(max));
        }
        Ok(Self {
            max_per_payer,
            ..self
        })
    }

    /// Marks a draw with instant wins, whose purchases may write one award item more.
    pub fn with_instant_wins(self, instant_wins: bool) -> Self {
        Self {
            instant_wins,
            ..self
        }
    }

    /// Items of a purchase transaction of `transaction_items` left for its record, its
    /// tickets and its cursors: a capped draw also moves the payer's allowance, a draw
    /// with instant wins keeps one item for a winning purchase's award.
    pub fn purchase_budget(&self, transaction_items: usize) -> usize {
        transaction_items
            - usize::from(self.max_per_payer.is_some())
            - usize::from(self.instant_wins)
    }

    /// Checks that the largest purchase can touch the stripes it needs in one transaction
    /// of `transaction_items` items (its record, a cursor per stripe, the payer's
    /// allowance when capped; tickets that do not fit follow) at least while the draw is new, so that no draw refuses its own largest purchase
    /// from the start.
    pub fn check_fits(self, transaction_items: usize) -> Result<Self, DrawConfigError> {
        let stripes_needed = self
            .layout()
            .stripes_to_hold(u64::from(self.max_per_purchase));
        let budget = self.purchase_budget(transaction_items);
        let most = stripe_budget(budget - 1, self.max_per_purchase as usize);
        if stripes_needed > self.stripes || stripes_needed as usize > most {
            return Err(DrawConfigError::PurchaseTooSpread {
                max_per_purchase: self.max_per_purchase,
                stripes_needed,
            });
        }
        Ok(self)
    }

    pub fn total_tickets(&self) -> u64 {
        self.total_tickets
    }

    pub fn max_per_purchase(&self) -> u32 {
        self.max_per_purchase
    }

    pub fn stripes(&self) -> u32 {
        self.stripes
    }

    pub fn max_per_payer(&self) -> Option<u64> {
        self.max_per_payer
    }

    pub fn layout(&self) -> StripeLayout {
        StripeLayout::new(self.total_tickets, self.stripes)
    }
}

/// Whether a draw still sells. A stored draw is open, closing or closed; `Scheduled` is
/// how an open draw reads before its `opens_at`, `SoldOut` how it reads once every ticket
/// is sold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
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
    pub sold_out_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// The eligible list as the close fixed it, and the beacon round fixed with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frozen {
    pub eligible_count: u64,
    /// Hex SHA-256 of the eligible bitmap.
    pub eligible_digest: String,
    pub frozen_at: DateTime<Utc>,
    /// The first round of the draw's network published more than the margin after
    /// `frozen_at`; `None` for a draw without a beacon.
    pub beacon_round: Option<u64>,
}

/// A redraw asked for with its reason; its pick waits for its round's signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRedraw {
    pub prize: u32,
    /// The pick it will make: the next one.
    pub pick: u64,
    pub reason: String,
    pub requested_at: DateTime<Utc>,
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
    pub drawn_at: DateTime<Utc>,
}

impl Draw {
    /// The status as it reads at `now`: a draw past its `closes_at` reads closed without
    /// any call, one before its `opens_at` reads scheduled.
    pub fn status_at(&self, now: DateTime<Utc>) -> DrawStatus {
        match (self.status, self.schedule.phase(now)) {
            (DrawStatus::Open, Phase::NotOpen) => DrawStatus::Scheduled,
            (DrawStatus::Open, Phase::Open) if self.sold_out_at.is_some() => DrawStatus::SoldOut,
            (DrawStatus::Open | DrawStatus::Closing, Phase::Over) => DrawStatus::Closed,
            (status, _) => status,
        }
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

/// About 90 tickets a stripe: each stripe costs a claim or two, and fewer, longer stripes
/// leave more in half-sold stripes when the last one opens. Measured with `tally bench`
/// (10,000 tickets, 64 buyers), in requests per purchase: 1.27 to 1.28 with 80 stripes,
/// 1.22 to 1.28 with 104 to 112, 1.27 with 128, 1.28 to 1.30 with 156. At least 64 stripes
/// while each keeps 8 tickets: a stripe has two ends, and buyers beyond the number of ends
/// must share them, so small draws get 128 ends for as many concurrent buyers (with 30
/// stripes, 64 buyers of a 3,000-ticket draw shared so much that purchases gave up).
pub fn default_stripes(total_tickets: u64) -> u32 {
    let at_least = (total_tickets / 8).min(64);
    (total_tickets / 90)
        .max(at_least)
        .clamp(1, u64::from(MAX_STRIPES)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_largest_purchase_spread_beyond_one_transaction_is_refused() {
        let spread = DrawConfig::new(1_024, Some(50), Some(1_024)).unwrap();
        assert_eq!(
            spread.check_fits(100),
            Err(DrawConfigError::PurchaseTooSpread {
                max_per_purchase: 50,
                stripes_needed: 50
            })
        );
        assert!(spread.check_fits(101).is_ok());
        let fine = DrawConfig::new(1_024, Some(49), Some(1_024)).unwrap();
        assert!(fine.check_fits(100).is_ok());
        assert!(
            DrawConfig::new(10_000, Some(50), None)
                .unwrap()
                .check_fits(100)
                .is_ok()
        );
        // A bundle of 500 needs few stripes of a large draw, and more than 32 of a draw
        // of one ticket per stripe.
        let bundle = DrawConfig::new(100_000, Some(500), None).unwrap();
        assert!(bundle.check_fits(100).is_ok());
        assert_eq!(
            DrawConfig::new(1_024, Some(500), Some(1_024))
                .unwrap()
                .check_fits(100),
            Err(DrawConfigError::PurchaseTooSpread {
                max_per_purchase: 500,
                stripes_needed: 500
            })
        );
    }

    #[test]
    fn a_cap_per_payer_takes_one_item_of_the_purchase_transaction() {
        // A draw whose largest purchase fills a transaction of 100 exactly: 1 record,
        // 50 tickets, 49 cursors.
        let exact = (1_024..=2_048)
            .map(|total| DrawConfig::new(total, Some(50), Some(1_024)).unwrap())
            .find(|c| c.layout().stripes_to_hold(50) == 49)
            .expect("some size needs 49 stripes for 50 tickets");
        assert_eq!(exact.purchase_budget(100), 100);
        assert!(exact.check_fits(100).is_ok());
        let capped = exact.with_max_per_payer(Some(200)).unwrap();
        assert_eq!(capped.purchase_budget(100), 99);
        assert!(matches!(
            capped.check_fits(100),
            Err(DrawConfigError::PurchaseTooSpread { .. })
        ));
        assert_eq!(
            exact.with_max_per_payer(Some(0)),
            Err(DrawConfigError::MaxPerPayer(0))
        );
    }

    #[test]
    fn a_draw_reads_scheduled_before_it_opens_and_closed_from_its_close() {
        let at = |text: &str| {
            DateTime::parse_from_rfc3339(text)
                .unwrap()
                .with_timezone(&Utc)
        };
        let draw = Draw {
            draw_id: DrawId::parse("d").unwrap(),
            name: None,
            config: DrawConfig::new(10, None, None).unwrap(),
            schedule: Schedule::new(
                Some(at("2026-12-01T10:00:00Z")),
                Some(at("2026-12-01T12:00:00Z")),
            )
            .unwrap(),
            beacon: None,
            created_beacon: None,
            key: PermutationKey::generate(),
            seed: DrawSeed::generate(),
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
            created_at: at("2026-11-01T00:00:00Z"),
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

    #[test]
    fn settings_outside_the_limits_are_refused() {
        assert_eq!(
            DrawConfig::new(0, None, None),
            Err(DrawConfigError::TotalTickets(0))
        );
        assert_eq!(
            DrawConfig::new(MAX_TOTAL_TICKETS + 1, None, None),
            Err(DrawConfigError::TotalTickets(MAX_TOTAL_TICKETS + 1))
        );
        assert_eq!(
            DrawConfig::new(10, Some(0), None),
            Err(DrawConfigError::MaxPerPurchase(0))
        );
        assert_eq!(
            DrawConfig::new(10, Some(501), None),
            Err(DrawConfigError::MaxPerPurchase(501))
        );
        assert_eq!(
            DrawConfig::new(10, None, Some(11)),
            Err(DrawConfigError::Stripes(11))
        );
        assert_eq!(
            DrawConfig::new(5_000, None, Some(1_025)),
            Err(DrawConfigError::Stripes(1_025))
        );
        let config = DrawConfig::new(10_000, None, None).unwrap();
        assert_eq!(config.max_per_purchase(), DEFAULT_MAX_PER_PURCHASE);
        assert_eq!(config.stripes(), 111);
        let stripes = |total| DrawConfig::new(total, None, None).unwrap().stripes();
        assert_eq!(
            (
                stripes(1_000),
                stripes(100),
                stripes(5),
                stripes(10_000_000)
            ),
            (64, 12, 1, 1_024)
        );
    }
}
