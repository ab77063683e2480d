//! What a series may number: the largest counter its format and rules allow, where
//! numbering goes on (inside its live ranges), when a range passes its low share, and
//! whether a definition holds together before it is stored.

use jiff::Timestamp;

use super::{MAX_COUNTER, NumberFormat, RangeLow, Reset, Room, Series, SeriesError, Stop, room};

impl Series {
    /// The largest counter `format` numbers within the series' rules.
    pub fn ceiling(&self, format: &NumberFormat) -> u64 {
        format
            .max_counter(self.names(), self.definition.rules.max_length)
            .min(MAX_COUNTER)
    }

    /// Where numbering in `format` goes on after `last` at `now`.
    pub fn room(
        &self,
        format: &NumberFormat,
        last: Option<u64>,
        now: Timestamp,
    ) -> Result<Room, Stop> {
        let d = &self.definition;
        room(&d.ranges, d.start, self.ceiling(format), last, now)
    }

    /// Whether `counter` may be issued at `now`: in a series with ranges, the range it
    /// lies in is live.
    pub fn counter_live(&self, counter: u64, now: Timestamp) -> bool {
        let ranges = self.definition.ranges.as_slice();
        ranges.is_empty()
            || ranges
                .iter()
                .any(|r| r.from <= counter && counter <= r.to && r.live_at(now))
    }

    /// The range that counters `before + 1 ..= after` take to its low share: the range
    /// `after` lies in, if its low threshold is among them.
    pub fn low_passed(&self, before: Option<u64>, after: u64, at: Timestamp) -> Option<RangeLow> {
        let percent = self.definition.range_low_percent;
        let range = self
            .definition
            .ranges
            .as_slice()
            .iter()
            .find(|r| r.from <= after && after <= r.to)?;
        let threshold = range.low_threshold(percent);
        let passed = before.is_none_or(|before| before < threshold) && threshold <= after;
        passed.then(|| RangeLow {
            series: self.series_id.clone(),
            range: range.clone(),
            percent,
            threshold,
            at,
        })
    }

    /// Whether the definition holds together: `{code}` has a code, ranges go with a
    /// series that never resets and start at or after `start`, a series does not credit
    /// itself, and the first number at `now` keeps to the rules.
    pub fn check(&self, now: Timestamp) -> Result<(), SeriesError> {
        let d = &self.definition;
        if d.format.shows_code() && d.validation_code.is_none() {
            return Err(SeriesError::CodeMissing);
        }
        if let Some(first) = d.ranges.as_slice().first() {
            if d.reset != Reset::Never {
                return Err(SeriesError::Ranges(
                    "a series with authorised ranges never resets: set `reset` to never".into(),
                ));
            }
            if first.from < d.start {
                return Err(SeriesError::Ranges(format!(
                    "the first range starts before `start` ({})",
                    d.start
                )));
            }
        }
        if d.credits.as_ref() == Some(&self.series_id) {
            return Err(SeriesError::Credits(
                "a series cannot credit its own invoices".into(),
            ));
        }
        let first = d
            .ranges
            .as_slice()
            .first()
            .map_or(d.start, |range| range.from);
        let exact = d.format.max_counter(self.names(), None);
        if first > exact {
            return Err(SeriesError::StartTooWide {
                start: first,
                width: exact.to_string().len() as u64,
            });
        }
        d.rules
            .check(&d.format.render(self.names(), &self.date(now), first))
    }
}
