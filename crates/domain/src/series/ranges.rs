//! Numbers the tax authority hands out: a series may only use counters of an authorised,
//! unexpired range (Chile's CAF folios, Colombia's DIAN resolutions). Ranges are kept in
//! counter order and never overlap; a range the counter has reached never changes or
//! disappears.

use jiff::Timestamp;

use super::SeriesError;
use crate::text::{FREE_TEXT_RULE, refused_in_text};

/// The most ranges a series holds.
pub const MAX_RANGES: usize = 100;
/// The longest `authority_ref`, in characters.
pub const MAX_AUTHORITY_REF_CHARS: usize = 48;
/// When `Range Running Low` fires by default: 90% of a range used.
pub const DEFAULT_LOW_PERCENT: u8 = 90;

/// Counters `from..=to`, authorised by `authority_ref` until `valid_until` (if it expires).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorisedRange {
    pub from: u64,
    pub to: u64,
    /// The authority's reference: a CAF file, a DIAN resolution number.
    pub authority_ref: String,
    /// No number of the range is issued at or after it.
    pub valid_until: Option<Timestamp>,
}

impl AuthorisedRange {
    pub fn new(
        from: u64,
        to: u64,
        authority_ref: &str,
        valid_until: Option<Timestamp>,
    ) -> Result<Self, SeriesError> {
        if from == 0 || from > to || to > super::MAX_COUNTER {
            return Err(SeriesError::Ranges(format!(
                "a range goes from a counter of 1 or more to one at least as large, at most {}",
                super::MAX_COUNTER
            )));
        }
        let chars = authority_ref.chars().count();
        if chars == 0 || chars > MAX_AUTHORITY_REF_CHARS || refused_in_text(authority_ref).is_some()
        {
            return Err(SeriesError::Ranges(format!(
                "`authority_ref` is 1 to {MAX_AUTHORITY_REF_CHARS} characters {FREE_TEXT_RULE}"
            )));
        }
        Ok(Self {
            from,
            to,
            authority_ref: authority_ref.to_owned(),
            valid_until,
        })
    }

    /// Whether numbers of the range may be issued at `now`.
    pub fn live_at(&self, now: Timestamp) -> bool {
        self.valid_until.is_none_or(|until| now < until)
    }

    /// The counter at which `percent` of the range is used.
    pub fn low_threshold(&self, percent: u8) -> u64 {
        let size = u128::from(self.to - self.from + 1);
        let used = (size * u128::from(percent)).div_ceil(100).max(1);
        self.from + u64::try_from(used - 1).unwrap_or(u64::MAX)
    }

    fn label(&self) -> String {
        format!("{}-{} ({})", self.from, self.to, self.authority_ref)
    }
}

/// A series' authorised ranges, in counter order; empty when the series numbers freely.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ranges(Vec<AuthorisedRange>);

impl Ranges {
    pub fn new(ranges: Vec<AuthorisedRange>) -> Result<Self, SeriesError> {
        if ranges.len() > MAX_RANGES {
            return Err(SeriesError::Ranges(format!(
                "a series holds at most {MAX_RANGES} ranges"
            )));
        }
        if let Some(pair) = ranges.windows(2).find(|pair| pair[0].to >= pair[1].from) {
            return Err(SeriesError::Ranges(format!(
                "ranges go in counter order without overlapping: {} comes before {}",
                pair[0].label(),
                pair[1].label()
            )));
        }
        Ok(Self(ranges))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_slice(&self) -> &[AuthorisedRange] {
        &self.0
    }

    /// Whether the ranges may become `new` while the period's counter is at `last`: a
    /// range the counter has reached stays as it is, and every other range lies past the
    /// counter (or, before the first number, from `start` on).
    pub fn check_change(
        &self,
        new: &Ranges,
        last: Option<u64>,
        start: u64,
    ) -> Result<(), SeriesError> {
        let reached = |r: &AuthorisedRange| last.is_some_and(|last| r.from <= last);
        for range in self.0.iter().filter(|r| reached(r)) {
            if !new.0.contains(range) {
                return Err(SeriesError::RangeInUse(format!(
                    "range {} is in use: it never changes or disappears",
                    range.label()
                )));
            }
        }
        let floor = last.map_or(start, |last| last + 1);
        for range in new.0.iter().filter(|r| !self.0.contains(r) || !reached(r)) {
            if range.from < floor {
                return Err(SeriesError::RangeInUse(format!(
                    "range {} starts before the next counter, {floor}",
                    range.label()
                )));
            }
        }
        Ok(())
    }
}

/// A range of a series passed its low threshold: `percent` of it is used, at counter
/// `threshold`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeLow {
    pub series: crate::ids::SeriesId,
    pub range: AuthorisedRange,
    pub percent: u8,
    pub threshold: u64,
    pub at: Timestamp,
}

/// Why a series numbers nothing more for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The next counter no longer fits the format (`max_length`, an exact width).
    SeriesExhausted,
    /// Every authorised range is used up.
    RangeExhausted,
    /// The ranges left have expired.
    RangeExpired,
}

/// Counters skipped on purpose on the way to the next live range: a declared gap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jump {
    pub from: u64,
    pub to: u64,
    pub reason: String,
}

/// Where the next numbers of a period go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Room {
    /// Skipped first, as a declared gap.
    pub jump: Option<Jump>,
    /// The next counter.
    pub first: u64,
    /// The last counter that may follow it (inclusive).
    pub last: u64,
    /// The range they belong to, if the series has ranges.
    pub range: Option<AuthorisedRange>,
}

impl Room {
    pub fn counters(&self) -> u64 {
        self.last - self.first + 1
    }
}

/// Where numbering goes on after `last` (`None`: the period has no number yet), counters
/// from `start`, none past `ceiling`, inside the live ranges at `now` if there are any.
pub fn room(
    ranges: &Ranges,
    start: u64,
    ceiling: u64,
    last: Option<u64>,
    now: Timestamp,
) -> Result<Room, Stop> {
    let next = last.map_or(start, |last| last.saturating_add(1));
    if ranges.is_empty() {
        if next > ceiling {
            return Err(Stop::SeriesExhausted);
        }
        return Ok(Room {
            jump: None,
            first: next,
            last: ceiling,
            range: None,
        });
    }
    let mut expired = false;
    for range in ranges.as_slice().iter().filter(|r| r.to >= next) {
        if !range.live_at(now) {
            expired = true;
            continue;
        }
        let first = next.max(range.from);
        if first > ceiling {
            return Err(Stop::SeriesExhausted);
        }
        let jump = (first > next).then(|| Jump {
            from: next,
            to: first - 1,
            reason: format!("outside a live authorised range; next: {}", range.label()),
        });
        return Ok(Room {
            jump,
            first,
            last: range.to.min(ceiling),
            range: Some(range.clone()),
        });
    }
    Err(if expired {
        Stop::RangeExpired
    } else {
        Stop::RangeExhausted
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(day: i8) -> Timestamp {
        jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(2026, 6, day).at(0, 0, 0, 0))
            .unwrap()
    }

    fn range(from: u64, to: u64, until: Option<i8>) -> AuthorisedRange {
        AuthorisedRange::new(from, to, "CAF-1", until.map(at)).unwrap()
    }

    #[test]
    fn numbering_stays_inside_live_ranges_and_jumps_between_them() {
        let ranges = Ranges::new(vec![range(1, 10, None), range(21, 30, Some(20))]).unwrap();
        let plain = |last| room(&ranges, 1, u64::MAX, last, at(10));
        let first = plain(None).unwrap();
        assert_eq!((first.first, first.last, first.jump), (1, 10, None));
        let next = plain(Some(10)).unwrap();
        assert_eq!((next.first, next.last), (21, 30));
        assert_eq!(next.jump.map(|j| (j.from, j.to)), Some((11, 20)));
        assert_eq!(plain(Some(30)), Err(Stop::RangeExhausted));
        // The second range has expired: nothing is left.
        assert_eq!(
            room(&ranges, 1, u64::MAX, Some(10), at(25)),
            Err(Stop::RangeExpired)
        );
        // A ceiling below the range: the series is exhausted.
        assert_eq!(
            room(&ranges, 1, 15, Some(10), at(10)),
            Err(Stop::SeriesExhausted)
        );
        let free = room(&Ranges::default(), 1, 99, Some(98), at(1)).unwrap();
        assert_eq!((free.first, free.last), (99, 99));
        assert_eq!(
            room(&Ranges::default(), 1, 99, Some(99), at(1)),
            Err(Stop::SeriesExhausted)
        );
    }

    #[test]
    fn ranges_in_use_never_change_and_new_ones_lie_past_the_counter() {
        let old = Ranges::new(vec![range(1, 10, None)]).unwrap();
        let grown = Ranges::new(vec![range(1, 10, None), range(11, 20, None)]).unwrap();
        assert!(old.check_change(&grown, Some(5), 1).is_ok());
        let changed = Ranges::new(vec![range(1, 12, None)]).unwrap();
        assert!(old.check_change(&changed, Some(5), 1).is_err());
        assert!(old.check_change(&Ranges::default(), Some(5), 1).is_err());
        // Before the first number every range may change.
        assert!(old.check_change(&changed, None, 1).is_ok());
        let behind = Ranges::new(vec![range(1, 10, None), range(11, 20, None)]).unwrap();
        assert!(grown.check_change(&behind, Some(12), 1).is_ok());
        assert!(
            Ranges::new(vec![range(1, 10, None), range(10, 20, None)]).is_err(),
            "overlap"
        );
    }

    #[test]
    fn the_low_threshold_is_the_counter_that_uses_the_share() {
        assert_eq!(range(1, 100, None).low_threshold(90), 90);
        assert_eq!(range(101, 110, None).low_threshold(90), 109);
        assert_eq!(range(5, 5, None).low_threshold(90), 5);
        assert_eq!(range(1, 3, None).low_threshold(1), 1);
    }
}
