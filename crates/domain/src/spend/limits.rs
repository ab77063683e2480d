//! A payer's spend limits: per currency and span, lowered at once, raised (or lifted)
//! only after a cooling-off span.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::{Currency, MAX_LIMIT_CURRENCIES, MAX_SPEND_LIMIT, Span, SpendError};

/// A higher limit (or none, `to: None`) that applies from `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Raise {
    pub to: Option<u64>,
    #[serde(with = "crate::time::exact")]
    pub from: Timestamp,
}

/// One span's limit: the amount in force (`None`: no limit) and a raise that waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Limit {
    pub now: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raise: Option<Raise>,
}

impl Limit {
    /// The amount in force at `at`.
    pub fn at(&self, at: Timestamp) -> Option<u64> {
        match self.raise {
            Some(raise) if raise.from <= at => raise.to,
            _ => self.now,
        }
    }
}

/// The limits of one currency, by span.
pub type CurrencyLimits = BTreeMap<Span, Limit>;

/// Limits a payer asked for in one currency: an amount per span, none for no limit.
pub type LimitChange = BTreeMap<Currency, BTreeMap<Span, u64>>;

/// A payer's limits, by currency. A currency the payer set nothing for is limited by the
/// deployment's default, if one is set.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Limits(pub BTreeMap<Currency, CurrencyLimits>);

impl Limits {
    /// The limit of `span` in `currency` at `at`, the payer's own or else `default`'s.
    pub fn limit(
        &self,
        default: &Limits,
        currency: Currency,
        span: Span,
        at: Timestamp,
    ) -> Option<u64> {
        let own = self.0.get(&currency).or_else(|| default.0.get(&currency))?;
        own.get(&span)?.at(at)
    }

    /// The limits after the payer asks for `wanted` at `at`: for each currency named,
    /// every span is set (a span left out has no limit). A lower or equal amount
    /// applies at once; a higher one, or none, after `cooling_off`, and the amount in
    /// force stays until then. A raise already waiting for the same amount keeps its time.
    pub fn change(
        &self,
        default: &Limits,
        wanted: &LimitChange,
        at: Timestamp,
        cooling_off: SignedDuration,
    ) -> Result<Limits, SpendError> {
        let mut next = self.clone();
        for (&currency, spans) in wanted {
            if let Some(&over) = spans.values().find(|&&a| a > MAX_SPEND_LIMIT) {
                return Err(SpendError::Limit(over));
            }
            let mut limits = CurrencyLimits::new();
            for span in Span::ALL {
                let old = self.limit(default, currency, span, at);
                let new = spans.get(&span).copied();
                let lower = match (new, old) {
                    (Some(new), Some(old)) => new <= old,
                    (_, None) => true,
                    (None, Some(_)) => false,
                };
                let waiting = self
                    .0
                    .get(&currency)
                    .and_then(|l| l.get(&span))
                    .and_then(|l| l.raise)
                    .filter(|r| r.to == new && r.from > at);
                let limit = if lower {
                    Limit {
                        now: new,
                        raise: None,
                    }
                } else {
                    Limit {
                        now: old,
                        raise: Some(waiting.unwrap_or(Raise {
                            to: new,
                            // A cooling-off past the last time kept never ends.
                            from: at.checked_add(cooling_off).unwrap_or(Timestamp::MAX),
                        })),
                    }
                };
                if limit != Limit::default() {
                    limits.insert(span, limit);
                }
            }
            next.0.insert(currency, limits);
        }
        if next.0.len() > MAX_LIMIT_CURRENCIES {
            return Err(SpendError::Currencies(next.0.len()));
        }
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        crate::time::parse_rfc3339(text).unwrap()
    }

    fn gbp() -> Currency {
        Currency::parse("GBP").unwrap()
    }

    fn ask(spans: &[(Span, u64)]) -> LimitChange {
        LimitChange::from([(gbp(), spans.iter().copied().collect())])
    }

    #[test]
    fn a_lower_limit_applies_at_once_and_a_higher_one_after_cooling_off() {
        let now = at("2026-12-05T10:00:00Z");
        let day = SignedDuration::from_hours(24);
        let none = Limits::default();
        let set = none
            .change(
                &none,
                &ask(&[(Span::Day, 1_000), (Span::Month, 0)]),
                now,
                day,
            )
            .unwrap();
        assert_eq!(set.limit(&none, gbp(), Span::Day, now), Some(1_000));
        assert_eq!(set.limit(&none, gbp(), Span::Month, now), Some(0));
        assert_eq!(set.limit(&none, gbp(), Span::Week, now), None);
        let raised = set
            .change(
                &none,
                &ask(&[(Span::Day, 5_000), (Span::Month, 0)]),
                now,
                day,
            )
            .unwrap();
        assert_eq!(raised.limit(&none, gbp(), Span::Day, now), Some(1_000));
        let later = now + day;
        assert_eq!(raised.limit(&none, gbp(), Span::Day, later), Some(5_000));
        // Asking again for the same raise does not restart its wait.
        let again = raised
            .change(
                &none,
                &ask(&[(Span::Day, 5_000), (Span::Month, 0)]),
                now + SignedDuration::from_hours(1),
                day,
            )
            .unwrap();
        assert_eq!(again.limit(&none, gbp(), Span::Day, later), Some(5_000));
        // Lifting the month's limit waits too; lowering the day's again is at once.
        let lifted = again
            .change(&none, &ask(&[(Span::Day, 10)]), now, day)
            .unwrap();
        assert_eq!(lifted.limit(&none, gbp(), Span::Day, now), Some(10));
        assert_eq!(lifted.limit(&none, gbp(), Span::Month, now), Some(0));
        assert_eq!(lifted.limit(&none, gbp(), Span::Month, later), None);
    }

    #[test]
    fn the_default_limits_a_payer_until_the_payer_sets_a_currency() {
        let now = at("2026-12-05T10:00:00Z");
        let default = Limits::default()
            .change(
                &Limits::default(),
                &ask(&[(Span::Week, 500)]),
                now,
                SignedDuration::ZERO,
            )
            .unwrap();
        let none = Limits::default();
        assert_eq!(none.limit(&default, gbp(), Span::Week, now), Some(500));
        let eur = Currency::parse("EUR").unwrap();
        assert_eq!(none.limit(&default, eur, Span::Week, now), None);
        let raised = none
            .change(
                &default,
                &ask(&[(Span::Week, 800)]),
                now,
                SignedDuration::from_hours(24),
            )
            .unwrap();
        assert_eq!(raised.limit(&default, gbp(), Span::Week, now), Some(500));
        assert_eq!(
            raised.change(
                &default,
                &ask(&[(Span::Week, MAX_SPEND_LIMIT + 1)]),
                now,
                SignedDuration::ZERO
            ),
            Err(SpendError::Limit(MAX_SPEND_LIMIT + 1))
        );
    }

    #[test]
    fn a_payers_limits_name_at_most_sixteen_currencies_over_every_change() {
        let now = at("2026-12-05T10:00:00Z");
        let none = Limits::default();
        // Currencies AAA, AAB, ... for `from..to`.
        let named = |from: u8, to: u8| -> LimitChange {
            (from..to)
                .map(|i| {
                    let code = format!("AA{}", (b'A' + i) as char);
                    (Currency::parse(&code).unwrap(), [(Span::Day, 10)].into())
                })
                .collect()
        };
        let most = MAX_LIMIT_CURRENCIES as u8;
        let change = |from: &Limits, wanted| from.change(&none, &wanted, now, SignedDuration::ZERO);
        let full = change(&none, named(0, most)).unwrap();
        // Changing the currencies already named stays within the cap.
        assert!(change(&full, named(0, most)).is_ok());
        // One more, in one change or over two, is refused.
        let over = Err(SpendError::Currencies(MAX_LIMIT_CURRENCIES + 1));
        assert_eq!(change(&none, named(0, most + 1)), over);
        assert_eq!(change(&full, named(most, most + 1)), over);
    }
}
