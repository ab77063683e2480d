//! When a draw sells: `opens_at` and `closes_at`, decided by the clock of the function at
//! the moment it sends a purchase's transaction.

use jiff::Timestamp;

use crate::time::{to_millis, utc};

/// Why a schedule was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("`{0}` must be an RFC 3339 time between the years 2000 and 9999")]
    OutOfRange(&'static str),
    #[error("`opens_at` must be before `closes_at`")]
    Order,
}

/// Where a moment falls in a draw's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before `opens_at`.
    NotOpen,
    Open,
    /// At or after `closes_at`.
    Over,
}

/// The optional opening and closing times of a draw, to the millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Schedule {
    opens_at: Option<Timestamp>,
    closes_at: Option<Timestamp>,
}

impl Schedule {
    /// Times are kept to the millisecond, as they are stored and shown; years 2000 to 9999
    /// keep the stored text fixed-width, so that text order is time order.
    pub fn new(
        opens_at: Option<Timestamp>,
        closes_at: Option<Timestamp>,
    ) -> Result<Self, ScheduleError> {
        let millis = |field, at: Option<Timestamp>| {
            at.map(|t| {
                if !(2000..=9999).contains(&utc(t).year()) {
                    return Err(ScheduleError::OutOfRange(field));
                }
                Ok(to_millis(t))
            })
            .transpose()
        };
        let schedule = Self {
            opens_at: millis("opens_at", opens_at)?,
            closes_at: millis("closes_at", closes_at)?,
        };
        if let (Some(opens), Some(closes)) = (schedule.opens_at, schedule.closes_at)
            && opens >= closes
        {
            return Err(ScheduleError::Order);
        }
        Ok(schedule)
    }

    pub fn opens_at(&self) -> Option<Timestamp> {
        self.opens_at
    }

    pub fn closes_at(&self) -> Option<Timestamp> {
        self.closes_at
    }

    pub fn phase(&self, now: Timestamp) -> Phase {
        if self.opens_at.is_some_and(|t| now < t) {
            Phase::NotOpen
        } else if self.closes_at.is_some_and(|t| now >= t) {
            Phase::Over
        } else {
            Phase::Open
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Option<Timestamp> {
        Some(crate::time::parse_rfc3339(text).unwrap())
    }

    #[test]
    fn phases_follow_the_clock_with_closes_at_itself_closed() {
        let s = Schedule::new(at("2026-12-01T10:00:00Z"), at("2026-12-01T12:00:00Z")).unwrap();
        assert_eq!(
            s.phase(at("2026-12-01T09:59:59.999Z").unwrap()),
            Phase::NotOpen
        );
        assert_eq!(s.phase(at("2026-12-01T10:00:00Z").unwrap()), Phase::Open);
        assert_eq!(
            s.phase(at("2026-12-01T11:59:59.999Z").unwrap()),
            Phase::Open
        );
        assert_eq!(s.phase(at("2026-12-01T12:00:00Z").unwrap()), Phase::Over);
        assert_eq!(Schedule::default().phase(Timestamp::now()), Phase::Open);
    }

    #[test]
    fn a_schedule_is_ordered_in_range_and_kept_to_the_millisecond() {
        assert_eq!(
            Schedule::new(at("2026-12-01T12:00:00Z"), at("2026-12-01T12:00:00Z")),
            Err(ScheduleError::Order)
        );
        assert_eq!(
            Schedule::new(None, at("1999-12-31T23:00:00Z")),
            Err(ScheduleError::OutOfRange("closes_at"))
        );
        let s = Schedule::new(at("2026-12-01T10:00:00.123456+01:00"), None).unwrap();
        assert_eq!(s.opens_at(), at("2026-12-01T09:00:00.123Z"));
    }
}
