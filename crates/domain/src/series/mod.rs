//! Order numbering series: formats, calendars, reset periods and the numbers they render.

mod blocks;
mod calendar;
mod format;
pub mod issuer;
mod numbering;
mod period;
mod ranges;
mod rules;

use std::ops::RangeInclusive;

use crate::time::utc;
use jiff::Timestamp;

pub use blocks::{BLOCK_MAX_AGE, BLOCK_TARGET, BlockSize, MAX_BLOCK, Spare, SpareCounter};
pub use calendar::{Calendar, LocalDate, MAX_TIMEZONE_LEN, Timezone};
pub use format::{
    DEFAULT_FORMAT, MAX_FORMAT_LEN, MAX_SEQ_WIDTH, Names, NumberFormat, ReadNumber, Texts,
};
pub use period::{DateField, InvalidPeriod, Period, Reset};
pub use ranges::{
    AuthorisedRange, DEFAULT_LOW_PERCENT, Jump, MAX_AUTHORITY_REF_CHARS, MAX_RANGES, RangeLow,
    Ranges, Room, Stop, room,
};
pub use rules::{
    CharacterRule, MAX_CHARACTER_RULE_LEN, MAX_CODE_LEN, MAX_NUMBER_LEN, NumberRules,
    ValidationCode,
};

use super::ids::{IssuerId, SeriesId};

/// The most formats a series keeps (one per period at most: a change for a period that
/// has not started replaces the one pending for it).
pub const MAX_FORMAT_VERSIONS: usize = 1_000;
/// The largest `start`.
pub const MAX_START: u64 = 1_000_000_000_000_000;
/// The largest counter a move may jump to: no counter goes past it.
pub const MAX_COUNTER: u64 = 1_000_000_000_000_000_000;

/// Why a series definition was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeriesError {
    #[error("`format` {0}")]
    Format(String),
    #[error("`reset` must be one of never, yearly, monthly, daily, fiscal_yearly")]
    Reset,
    #[error("a {reset} series needs {needs} in its format, or its numbers would repeat")]
    ResetNeedsToken {
        reset: &'static str,
        needs: &'static str,
    },
    #[error("`start` must be between 1 and {MAX_START}, not {0}")]
    Start(u64),
    #[error("`timezone` must be an IANA time zone name such as Europe/Berlin")]
    Timezone,
    #[error("`fiscal_year_start` must be a month from 1 to 12, not {0}")]
    FiscalYearStart(u32),
    #[error("`max_length` must be between 1 and {MAX_NUMBER_LEN}, not {0}")]
    MaxLength(usize),
    #[error(
        "`allowed_characters` must be 1 to {MAX_CHARACTER_RULE_LEN} characters and ranges such as A-Za-z0-9/-"
    )]
    CharacterRule,
    #[error("the number {number} is longer than `max_length` ({max})")]
    TooLong { number: String, max: usize },
    #[error(
        "the number {number} holds {refused:?}, which `allowed_characters` ({allowed}) does not allow"
    )]
    CharacterRefused {
        number: String,
        refused: char,
        allowed: String,
    },
    #[error("the first counter, {start}, is wider than the exact width of `{{seq:{width}!}}`")]
    StartTooWide { start: u64, width: u64 },
    #[error("`validation_code` must be 1 to {MAX_CODE_LEN} letters and digits")]
    ValidationCode,
    #[error("the format shows {{code}}: give the series a `validation_code`")]
    CodeMissing,
    #[error("`ranges`: {0}")]
    Ranges(String),
    #[error("{0}")]
    RangeInUse(String),
    #[error("`range_low_percent` must be between 1 and 100, not {0}")]
    LowPercent(u8),
    #[error("`credits`: {0}")]
    Credits(String),
}

/// A numbering series as defined by its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesDefinition {
    /// The format of new periods.
    pub format: NumberFormat,
    pub reset: Reset,
    /// Every number 1..=last is used (counter and orders commit together), or numbers may
    /// be skipped after a failure in exchange for speed.
    pub gapless: bool,
    /// The first counter value of each period.
    pub start: u64,
    pub calendar: Calendar,
    /// The length and characters its numbers keep to.
    pub rules: NumberRules,
    /// What `{code}` shows.
    pub validation_code: Option<ValidationCode>,
    /// The authorised ranges its counters must lie in; empty: any counter.
    pub ranges: Ranges,
    /// `Range Running Low` fires once this share of a range is used.
    pub range_low_percent: u8,
    /// The series whose invoices this series' orders correct (credit notes).
    pub credits: Option<SeriesId>,
    /// The company whose numbers these are: no two series of one issuer render one text.
    pub issuer: IssuerId,
}

impl SeriesDefinition {
    /// A series on UTC whose fiscal year is the calendar year; see [`Self::with_calendar`].
    pub fn new(format: &str, reset: Reset, gapless: bool, start: u64) -> Result<Self, SeriesError> {
        if !(1..=MAX_START).contains(&start) {
            return Err(SeriesError::Start(start));
        }
        Ok(Self {
            format: checked_format(format, reset)?,
            reset,
            gapless,
            start,
            calendar: Calendar::default(),
            rules: NumberRules::default(),
            validation_code: None,
            ranges: Ranges::default(),
            range_low_percent: DEFAULT_LOW_PERCENT,
            credits: None,
            issuer: IssuerId::deployment(),
        })
    }

    pub fn issued_by(self, issuer: IssuerId) -> Self {
        Self { issuer, ..self }
    }

    pub fn with_calendar(self, calendar: Calendar) -> Self {
        Self { calendar, ..self }
    }

    pub fn with_rules(self, rules: NumberRules) -> Self {
        Self { rules, ..self }
    }

    pub fn with_validation_code(self, validation_code: Option<ValidationCode>) -> Self {
        Self {
            validation_code,
            ..self
        }
    }

    /// Authorised ranges, `Range Running Low` at `low_percent` of each.
    pub fn with_ranges(self, ranges: Ranges, low_percent: u8) -> Result<Self, SeriesError> {
        if !(1..=100).contains(&low_percent) {
            return Err(SeriesError::LowPercent(low_percent));
        }
        Ok(Self {
            ranges,
            range_low_percent: low_percent,
            ..self
        })
    }

    pub fn crediting(self, credits: Option<SeriesId>) -> Self {
        Self { credits, ..self }
    }
}

/// A format that shows the date tokens its reset needs, or its numbers would repeat.
pub fn checked_format(format: &str, reset: Reset) -> Result<NumberFormat, SeriesError> {
    let format = NumberFormat::parse(format)?;
    if reset.fields().iter().all(|&field| format.shows(field)) {
        return Ok(format);
    }
    Err(SeriesError::ResetNeedsToken {
        reset: reset.as_str(),
        needs: reset.tokens_needed(),
    })
}

/// One format a series has had, from the period it was first used in (`None` for the
/// first format, used from the series' creation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatVersion {
    /// 1 for the format the series was created with, then 2, 3, ...
    pub version: u32,
    pub format: NumberFormat,
    pub from: Option<Period>,
}

/// A series as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub series_id: SeriesId,
    pub definition: SeriesDefinition,
    pub created_at: Timestamp,
    /// Every format the series has had, oldest first; the last is `definition.format`.
    pub formats: Vec<FormatVersion>,
    /// Changes made since it was defined: a change applies only to the revision it read.
    pub revision: u64,
    /// Whether it numbers (or is about to): its validation code is fixed from then on.
    pub numbered: bool,
}

impl Series {
    /// A new series: its format is version 1.
    pub fn new(series_id: SeriesId, definition: SeriesDefinition, created_at: Timestamp) -> Self {
        let formats = vec![FormatVersion {
            version: 1,
            format: definition.format.clone(),
            from: None,
        }];
        Self {
            series_id,
            definition,
            created_at,
            formats,
            revision: 0,
            numbered: false,
        }
    }

    pub fn date(&self, at: Timestamp) -> LocalDate {
        self.definition.calendar.date(at)
    }

    /// What its numbers show besides dates and counters.
    pub fn names(&self) -> Names<'_> {
        Names {
            series: &self.series_id,
            code: self
                .definition
                .validation_code
                .as_ref()
                .map(ValidationCode::as_str),
        }
    }

    pub fn period(&self, at: Timestamp) -> Period {
        self.definition.reset.period(&self.date(at))
    }

    /// The version new periods start with.
    pub fn latest_version(&self) -> u32 {
        self.formats.last().map_or(1, |f| f.version)
    }

    pub fn format(&self, version: u32) -> Option<&NumberFormat> {
        self.formats
            .iter()
            .find(|f| f.version == version)
            .map(|f| &f.format)
    }

    /// The years a two-digit year of this series can stand for: from the year before the
    /// series was created to the year after `now`.
    pub fn years(&self, now: Timestamp) -> RangeInclusive<i32> {
        i32::from(utc(self.created_at).year()) - 1..=i32::from(utc(now).year()) + 1
    }

    /// Every (period, counter) that some format of this series renders as `text`.
    pub fn readings(&self, text: &str, now: Timestamp) -> Vec<(Period, u64)> {
        let mut found = Vec::new();
        for version in &self.formats {
            if let Some(read) = version.format.read(self.names(), text) {
                for period in self.definition.reset.periods_of(&read, self.years(now)) {
                    let reading = (period, read.counter);
                    if !found.contains(&reading) {
                        found.push(reading);
                    }
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resetting_series_needs_the_date_tokens_of_its_period() {
        assert_eq!(
            SeriesDefinition::new("A{seq:4}", Reset::Yearly, true, 1),
            Err(SeriesError::ResetNeedsToken {
                reset: "yearly",
                needs: "{yyyy} or {yy}"
            })
        );
        assert!(SeriesDefinition::new("A{yy}{seq:4}", Reset::Monthly, true, 1).is_err());
        assert!(SeriesDefinition::new("A{yy}{mm}{seq:4}", Reset::Monthly, true, 1).is_ok());
        assert!(SeriesDefinition::new("A{yy}{mm}{seq:4}", Reset::Daily, true, 1).is_err());
        assert!(SeriesDefinition::new("A{yy}{mm}{dd}{seq:4}", Reset::Daily, true, 1).is_ok());
        assert!(SeriesDefinition::new("A{yyyy}{seq:4}", Reset::FiscalYearly, true, 1).is_err());
        assert!(SeriesDefinition::new("A{fy}{seq:4}", Reset::FiscalYearly, true, 1).is_ok());
        assert!(SeriesDefinition::new("A{seq:4}", Reset::Never, false, 1).is_ok());
        assert_eq!(
            SeriesDefinition::new("A{seq:4}", Reset::Never, false, 0),
            Err(SeriesError::Start(0))
        );
    }

    #[test]
    fn a_number_reads_back_to_its_period_and_counter_in_every_format_version() {
        let created = jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(2026, 5, 1).at(0, 0, 0, 0))
            .unwrap();
        let definition = SeriesDefinition::new("A{yy}-{seq:3}", Reset::Yearly, true, 1).unwrap();
        let mut series = Series::new(SeriesId::parse("A").unwrap(), definition, created);
        series.formats.push(FormatVersion {
            version: 2,
            format: NumberFormat::parse("A{yyyy}/{seq:5}").unwrap(),
            from: Period::parse(Reset::Yearly, "2027").ok(),
        });
        let now = jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(2027, 2, 1).at(0, 0, 0, 0))
            .unwrap();
        let period = |p: &str| Period::parse(Reset::Yearly, p).unwrap();
        assert_eq!(series.readings("A26-042", now), [(period("2026"), 42)]);
        assert_eq!(series.readings("A2027/00007", now), [(period("2027"), 7)]);
        assert!(series.readings("A99-001", now).is_empty());
        assert!(series.readings("B26-001", now).is_empty());
    }
}
