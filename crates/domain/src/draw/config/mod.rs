//! A draw's settings, validated once: sizes, caps per purchase and payer, stripes, holds,
//! the number of prizes.

use super::super::instant::InstantWinsError;
use super::super::spend::Price;
use super::super::stripes::{StripeLayout, stripe_budget};
use super::super::winners::MAX_PRIZES;

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
/// The share of a draw's numbers that live holds may take when a draw does not say, in
/// percent, and its bounds.
pub const DEFAULT_MAX_HELD_PERCENT: u8 = 25;
pub const MAX_HELD_PERCENT: std::ops::RangeInclusive<u8> = 1..=100;
/// The most cursor items a draw may have.
pub const MAX_STRIPES: u32 = 1_024;
/// The most tickets one stripe of a new draw holds: its item names every number chosen
/// ahead of its cursors (7 bytes each), so a stripe all chosen stays far inside DynamoDB's
/// 400 KB, and a hold's pick lists at most this many. The largest draw fits at its most
/// stripes (its first, longest stripe holds 1.75 times the mean), and the default
/// stripes never pass it.
pub const MAX_STRIPE_TICKETS: u64 = 20_000;

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
        "{stripes} stripes of {total_tickets} tickets make a stripe of {longest}, more than the {MAX_STRIPE_TICKETS} one stripe holds; ask for more `stripes`"
    )]
    StripesTooLong {
        total_tickets: u64,
        stripes: u32,
        longest: u64,
    },
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
    #[error("`max_held_per_payer` must be between 1 and {MAX_PER_PURCHASE_CAP}, not {0}")]
    MaxHeldPerPayer(u32),
    #[error("`max_held_percent` must be between 1 and 100, not {0}")]
    MaxHeldPercent(u8),
    #[error("`prizes` must be between 1 and {MAX_PRIZES}, and at most `total_tickets`, not {0}")]
    Prizes(u32),
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
    /// The most numbers one payer's live holds may take: one purchase's worth unless the
    /// draw says.
    max_held_per_payer: u32,
    /// The share of the draw's numbers that live holds may take, in percent.
    max_held_percent: u8,
    /// What one ticket costs; a draw without one counts no spend.
    price: Option<Price>,
    /// The number of prizes the winners draw, declared at the create: every freeze fixes
    /// this one. `None`: the close or the winners call names it.
    prizes: Option<u32>,
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
            max_held_per_payer: max_per_purchase,
            max_held_percent: DEFAULT_MAX_HELD_PERCENT,
            price: None,
            prizes: None,
        })
    }

    /// Declares the number of prizes (`None`: none declared): 1 to [`MAX_PRIZES`], no
    /// more than the tickets.
    pub fn with_prizes(self, prizes: Option<u32>) -> Result<Self, DrawConfigError> {
        if let Some(p) = prizes
            && (!(1..=MAX_PRIZES).contains(&p) || u64::from(p) > self.total_tickets)
        {
            return Err(DrawConfigError::Prizes(p));
        }
        Ok(Self { prizes, ..self })
    }

    pub fn prizes(&self) -> Option<u32> {
        self.prizes
    }

    /// Sets the price of one ticket.
    pub fn with_price(self, price: Option<Price>) -> Self {
        Self { price, ..self }
    }

    pub fn price(&self) -> Option<Price> {
        self.price
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

    /// Caps the numbers one payer's live holds may take (`None`: `max_per_purchase`).
    pub fn with_max_held_per_payer(self, most: Option<u32>) -> Result<Self, DrawConfigError> {
        let most = most.unwrap_or(self.max_per_purchase);
        if !(1..=MAX_PER_PURCHASE_CAP).contains(&most) {
            return Err(DrawConfigError::MaxHeldPerPayer(most));
        }
        Ok(Self {
            max_held_per_payer: most,
            ..self
        })
    }

    pub fn max_held_per_payer(&self) -> u64 {
        u64::from(self.max_held_per_payer)
    }

    /// Caps the share of the draw that live holds may take, in percent (`None`: 25).
    pub fn with_max_held_percent(self, percent: Option<u8>) -> Result<Self, DrawConfigError> {
        let percent = percent.unwrap_or(DEFAULT_MAX_HELD_PERCENT);
        if !MAX_HELD_PERCENT.contains(&percent) {
            return Err(DrawConfigError::MaxHeldPercent(percent));
        }
        Ok(Self {
            max_held_percent: percent,
            ..self
        })
    }

    pub fn max_held_percent(&self) -> u8 {
        self.max_held_percent
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
    /// Checks too that no stripe holds more than `MAX_STRIPE_TICKETS`.
    pub fn check_fits(self, transaction_items: usize) -> Result<Self, DrawConfigError> {
        // The first stripe is the longest.
        let longest = self.layout().len(0);
        if longest > MAX_STRIPE_TICKETS {
            return Err(DrawConfigError::StripesTooLong {
                total_tickets: self.total_tickets,
                stripes: self.stripes,
                longest,
            });
        }
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
mod tests;
