//! Money: a draw's price, what a purchase was charged, and the rules a payer signs up to
//! across every draw (spend limits per calendar window, self-exclusion).
//!
//! The rules are decided here, free of the table; the store counts spend and checks an
//! exclusion inside the transaction that commits a sale, on one item per payer.

mod limits;
mod windows;

pub use limits::{CurrencyLimits, Limit, LimitChange, Limits, Raise};
pub use windows::{Span, Window};

use std::fmt;

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The highest `ticket_price`, in minor units: with the largest purchase, an amount stays
/// far inside what a stored number holds exactly.
pub const MAX_TICKET_PRICE: u64 = 100_000_000;
/// The highest spend limit a payer may set for one window, in minor units.
pub const MAX_SPEND_LIMIT: u64 = 1_000_000_000_000;
/// The most currencies a payer's limits may name: they live on the payer's item, which
/// every sale to the payer writes.
pub const MAX_LIMIT_CURRENCIES: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpendError {
    #[error("`currency` must be an ISO 4217 code of three upper-case letters")]
    Currency,
    #[error("`ticket_price` must be between 0 and {MAX_TICKET_PRICE} minor units, not {0}")]
    TicketPrice(u64),
    #[error("a draw with a `ticket_price` names its `currency`, and only then")]
    PriceWithoutCurrency,
    #[error("a limit must be between 0 and {MAX_SPEND_LIMIT} minor units, not {0}")]
    Limit(u64),
    #[error("a payer's limits name at most {MAX_LIMIT_CURRENCIES} currencies, not {0}")]
    Currencies(usize),
    #[error("`amount` must be between 0 and {0} minor units")]
    Amount(u64),
    #[error("an exclusion ends in the future")]
    ExclusionPast,
}

/// An ISO 4217 currency code: three upper-case ASCII letters.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Currency([u8; 3]);

impl Currency {
    pub fn parse(code: &str) -> Result<Self, SpendError> {
        let bytes: [u8; 3] = code
            .as_bytes()
            .try_into()
            .map_err(|_| SpendError::Currency)?;
        if bytes.iter().all(u8::is_ascii_uppercase) {
            Ok(Self(bytes))
        } else {
            Err(SpendError::Currency)
        }
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("three ASCII letters")
    }
}

impl fmt::Debug for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = String::deserialize(deserializer)?;
        Self::parse(&code).map_err(serde::de::Error::custom)
    }
}

/// An amount of money, in minor units of its currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money {
    pub minor: u64,
    pub currency: Currency,
}

/// What one ticket of a draw costs, in minor units of its currency (pence, cents).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Price {
    pub minor: u64,
    pub currency: Currency,
}

impl Price {
    /// A price from a draw's `ticket_price` and `currency`, both given or neither.
    pub fn new(minor: Option<u64>, currency: Option<&str>) -> Result<Option<Self>, SpendError> {
        match (minor, currency) {
            (None, None) => Ok(None),
            (Some(minor), Some(code)) if minor <= MAX_TICKET_PRICE => Ok(Some(Self {
                minor,
                currency: Currency::parse(code)?,
            })),
            (Some(minor), Some(_)) => Err(SpendError::TicketPrice(minor)),
            _ => Err(SpendError::PriceWithoutCurrency),
        }
    }

    /// What `quantity` tickets cost at this price.
    pub fn of(&self, quantity: u32) -> u64 {
        self.minor * u64::from(quantity)
    }

    /// What a purchase of `quantity` is charged: `amount` when it passes its own, else
    /// the list price; nothing for a free entry.
    pub fn charge(&self, quantity: u32, amount: Option<u64>, free: bool) -> Money {
        let minor = match (free, amount) {
            (true, _) => 0,
            (false, Some(amount)) => amount,
            (false, None) => self.of(quantity),
        };
        Money {
            minor,
            currency: self.currency,
        }
    }

    /// The most a purchase of `quantity` may be charged: a bundle or a discount passes
    /// its own amount, never above the list price.
    pub fn check_amount(&self, quantity: u32, amount: u64) -> Result<u64, SpendError> {
        let most = self.of(quantity);
        if amount <= most {
            Ok(amount)
        } else {
            Err(SpendError::Amount(most))
        }
    }
}

/// A payer's self-exclusion: until a time, or with no end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exclusion {
    pub until: Option<Timestamp>,
}

impl Exclusion {
    /// Whether it still runs at `now`.
    pub fn excludes(&self, now: Timestamp) -> bool {
        self.until.is_none_or(|until| now < until)
    }

    /// The exclusion after a payer asks for `wanted` at `now`: an exclusion may be
    /// extended, never shortened or lifted before its end; once ended, a new one starts.
    /// `None` when the one in force already reaches as far.
    pub fn extend(
        current: Option<Self>,
        wanted: Self,
        now: Timestamp,
    ) -> Result<Option<Self>, SpendError> {
        if wanted.until.is_some_and(|until| until <= now) {
            return Err(SpendError::ExclusionPast);
        }
        let current = current.filter(|c| c.excludes(now));
        Ok(match (current.and_then(|c| c.until), current) {
            (_, None) => Some(wanted),
            // Open-ended already: nothing reaches further.
            (None, Some(_)) => None,
            (Some(end), Some(_)) => match wanted.until {
                Some(until) if until <= end => None,
                _ => Some(wanted),
            },
        })
    }
}

/// How a window's limit refuses an amount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverLimit {
    pub currency: Currency,
    pub span: Span,
    pub window: Window,
    pub limit: u64,
    /// What the payer may still spend in the window.
    pub left: u64,
}

/// What a payer has spent in a window of one span, as counted on the payer's item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spent {
    pub window: Window,
    pub amount: u64,
}

/// What is left under `limit` in `window`, given the count kept for its span.
pub fn left_in(limit: u64, window: &Window, counted: Option<&Spent>) -> u64 {
    let spent = counted
        .filter(|c| &c.window == window)
        .map_or(0, |c| c.amount);
    limit.saturating_sub(spent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        crate::time::parse_rfc3339(text).unwrap()
    }

    #[test]
    fn a_currency_is_three_upper_case_letters() {
        assert_eq!(Currency::parse("GBP").unwrap().as_str(), "GBP");
        for wrong in ["gbp", "GB", "GBPX", "G1P", "ÉUR", ""] {
            assert_eq!(Currency::parse(wrong), Err(SpendError::Currency), "{wrong}");
        }
    }

    #[test]
    fn a_price_needs_its_currency_and_bounds_the_amount() {
        assert_eq!(Price::new(None, None), Ok(None));
        assert_eq!(
            Price::new(Some(200), None),
            Err(SpendError::PriceWithoutCurrency)
        );
        assert_eq!(
            Price::new(None, Some("GBP")),
            Err(SpendError::PriceWithoutCurrency)
        );
        assert_eq!(
            Price::new(Some(MAX_TICKET_PRICE + 1), Some("GBP")),
            Err(SpendError::TicketPrice(MAX_TICKET_PRICE + 1))
        );
        let price = Price::new(Some(250), Some("EUR")).unwrap().unwrap();
        assert_eq!(price.of(4), 1_000);
        assert_eq!(price.check_amount(4, 900), Ok(900));
        assert_eq!(price.check_amount(4, 1_001), Err(SpendError::Amount(1_000)));
    }

    #[test]
    fn an_exclusion_is_extended_never_shortened() {
        let now = at("2026-12-05T10:00:00Z");
        let until = |t: &str| Exclusion { until: Some(at(t)) };
        let open = Exclusion { until: None };
        let week = until("2026-12-12T10:00:00Z");
        assert_eq!(Exclusion::extend(None, week, now), Ok(Some(week)));
        let month = until("2027-01-05T10:00:00Z");
        assert_eq!(Exclusion::extend(Some(week), month, now), Ok(Some(month)));
        assert_eq!(Exclusion::extend(Some(month), week, now), Ok(None));
        assert_eq!(Exclusion::extend(Some(week), open, now), Ok(Some(open)));
        assert_eq!(Exclusion::extend(Some(open), month, now), Ok(None));
        assert_eq!(
            Exclusion::extend(None, until("2026-12-05T09:00:00Z"), now),
            Err(SpendError::ExclusionPast)
        );
        // Once ended, a shorter one may start.
        let later = at("2026-12-13T00:00:00Z");
        let day = until("2026-12-14T00:00:00Z");
        assert_eq!(Exclusion::extend(Some(week), day, later), Ok(Some(day)));
        assert!(week.excludes(now) && !week.excludes(later) && open.excludes(later));
    }

    #[test]
    fn spend_of_an_older_window_leaves_the_whole_limit() {
        let today = Window::new("2026-12-05".into());
        let counted = Spent {
            window: Window::new("2026-12-04".into()),
            amount: 900,
        };
        assert_eq!(left_in(1_000, &today, Some(&counted)), 1_000);
        let counted = Spent {
            window: today.clone(),
            amount: 900,
        };
        assert_eq!(left_in(1_000, &today, Some(&counted)), 100);
        assert_eq!(left_in(500, &today, Some(&counted)), 0);
    }
}
