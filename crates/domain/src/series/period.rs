//! Reset periods: when a series starts counting again, and the name of each period
//! (`all`, `2026`, `2026-11`, `2026-11-29`, `FY2027`). Periods of one series sort by
//! name in time order.

use std::ops::RangeInclusive;

use jiff::ToSpan;
use jiff::civil::Date;

use super::SeriesError;
use super::calendar::LocalDate;
use super::format::ReadNumber;

/// A date a number shows, as far as periods go: each period is named by some of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateField {
    /// `{yyyy}` or `{yy}`.
    Year,
    Month,
    Day,
    FiscalYear,
}

/// When a series starts counting again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Reset {
    Never,
    Yearly,
    Monthly,
    Daily,
    FiscalYearly,
}

impl Reset {
    pub fn parse(value: &str) -> Result<Self, SeriesError> {
        match value {
            "never" => Ok(Self::Never),
            "yearly" => Ok(Self::Yearly),
            "monthly" => Ok(Self::Monthly),
            "daily" => Ok(Self::Daily),
            "fiscal_yearly" => Ok(Self::FiscalYearly),
            _ => Err(SeriesError::Reset),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Yearly => "yearly",
            Self::Monthly => "monthly",
            Self::Daily => "daily",
            Self::FiscalYearly => "fiscal_yearly",
        }
    }

    /// The dates that name a period: every format of the series shows them, or its
    /// numbers would repeat.
    pub fn fields(self) -> &'static [DateField] {
        match self {
            Self::Never => &[],
            Self::Yearly => &[DateField::Year],
            Self::Monthly => &[DateField::Year, DateField::Month],
            Self::Daily => &[DateField::Year, DateField::Month, DateField::Day],
            Self::FiscalYearly => &[DateField::FiscalYear],
        }
    }

    /// The tokens that show [`Self::fields`], as a format's author reads them.
    pub(super) fn tokens_needed(self) -> &'static str {
        match self {
            Self::Never => "no date token",
            Self::Yearly => "{yyyy} or {yy}",
            Self::Monthly => "a year token and {mm}",
            Self::Daily => "a year token, {mm} and {dd}",
            Self::FiscalYearly => "{fy}",
        }
    }

    /// The period a local date falls in.
    pub fn period(self, date: &LocalDate) -> Period {
        Period(match self {
            Self::Never => "all".to_owned(),
            Self::Yearly => format!("{:04}", date.year),
            Self::Monthly => format!("{:04}-{:02}", date.year, date.month),
            Self::Daily => format!("{:04}-{:02}-{:02}", date.year, date.month, date.day),
            Self::FiscalYearly => format!("FY{:04}", date.fiscal_year),
        })
    }

    /// The periods a number read back may belong to. A two-digit year is taken as each
    /// year of `years` that ends in it.
    pub fn periods_of(self, read: &ReadNumber, years: RangeInclusive<i32>) -> Vec<Period> {
        let candidate_years: Vec<i32> = match (read.year, read.year2) {
            (Some(year), _) => vec![year],
            (None, Some(yy)) => years.filter(|y| y.rem_euclid(100) as u32 == yy).collect(),
            (None, None) => Vec::new(),
        };
        let named = |text: String| Period::parse(self, &text).ok();
        match self {
            Self::Never => vec![Period("all".to_owned())],
            Self::FiscalYearly => read
                .fiscal_year
                .and_then(|fy| named(format!("FY{fy:04}")))
                .into_iter()
                .collect(),
            Self::Yearly => candidate_years
                .into_iter()
                .filter_map(|y| named(format!("{y:04}")))
                .collect(),
            Self::Monthly => candidate_years
                .into_iter()
                .filter_map(|y| named(format!("{y:04}-{:02}", read.month?)))
                .collect(),
            Self::Daily => candidate_years
                .into_iter()
                .filter_map(|y| named(format!("{y:04}-{:02}-{:02}", read.month?, read.day?)))
                .collect(),
        }
    }
}

/// The name of one period of a series, checked against its reset: it may become part of
/// a key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Period(String);

/// Why a period name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`period` must be {expected} for a {reset} series")]
pub struct InvalidPeriod {
    pub reset: &'static str,
    pub expected: &'static str,
}

impl Period {
    pub fn parse(reset: Reset, text: &str) -> Result<Self, InvalidPeriod> {
        let expected = match reset {
            Reset::Never => "`all`",
            Reset::Yearly => "a year such as 2026",
            Reset::Monthly => "a month such as 2026-11",
            Reset::Daily => "a day such as 2026-11-29",
            Reset::FiscalYearly => "a fiscal year such as FY2027",
        };
        let invalid = InvalidPeriod {
            reset: reset.as_str(),
            expected,
        };
        let year = |s: &str| (s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit())).then_some(());
        let valid = match reset {
            Reset::Never => text == "all",
            Reset::Yearly => year(text).is_some(),
            Reset::FiscalYearly => text.strip_prefix("FY").and_then(year).is_some(),
            Reset::Monthly => text.len() == 7 && calendar_date(&format!("{text}-01")).is_some(),
            Reset::Daily => calendar_date(text).is_some(),
        };
        if valid {
            Ok(Self(text.to_owned()))
        } else {
            Err(invalid)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The period after this one; a series that never resets has none.
    pub fn next(&self, reset: Reset) -> Option<Period> {
        let year = |s: &str| s.parse::<i32>().ok();
        let text = match reset {
            Reset::Never => return None,
            Reset::Yearly => format!("{:04}", year(&self.0)? + 1),
            Reset::FiscalYearly => format!("FY{:04}", year(&self.0[2..])? + 1),
            Reset::Monthly => {
                let next = calendar_date(&format!("{}-01", self.0))?
                    .checked_add(1_i32.month())
                    .ok()?;
                format!("{:04}-{:02}", next.year(), next.month())
            }
            Reset::Daily => {
                let next = calendar_date(&self.0)?.tomorrow().ok()?;
                format!("{:04}-{:02}-{:02}", next.year(), next.month(), next.day())
            }
        };
        Period::parse(reset, &text).ok()
    }
}

/// A day written as Tally names it, `2026-11-29`: four digits, a dash, two, a dash, two.
fn calendar_date(text: &str) -> Option<Date> {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return None;
    }
    let number = |from: usize, to: usize| {
        let digits = &text[from..to];
        digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse::<i16>().ok())?
    };
    let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
    Date::new(year, i8::try_from(month).ok()?, i8::try_from(day).ok()?).ok()
}

impl std::fmt::Display for Period {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(year: i32, month: u32, day: u32, fiscal_year: i32) -> LocalDate {
        LocalDate {
            year,
            month,
            day,
            fiscal_year,
        }
    }

    #[test]
    fn periods_follow_the_reset() {
        let date = on(2026, 2, 7, 2027);
        let names: Vec<String> = [
            Reset::Never,
            Reset::Yearly,
            Reset::Monthly,
            Reset::Daily,
            Reset::FiscalYearly,
        ]
        .into_iter()
        .map(|r| r.period(&date).to_string())
        .collect();
        assert_eq!(names, ["all", "2026", "2026-02", "2026-02-07", "FY2027"]);
    }

    #[test]
    fn period_names_are_checked_against_the_reset() {
        assert!(Period::parse(Reset::Yearly, "2026").is_ok());
        assert!(Period::parse(Reset::Monthly, "2026-12").is_ok());
        assert!(Period::parse(Reset::Daily, "2028-02-29").is_ok());
        assert!(Period::parse(Reset::FiscalYearly, "FY2027").is_ok());
        for (reset, bad) in [
            (Reset::Yearly, "26"),
            (Reset::Yearly, "2026-01"),
            (Reset::Monthly, "2026-13"),
            (Reset::Daily, "2027-02-29"),
            (Reset::FiscalYearly, "2027"),
            (Reset::Never, "2026"),
            (Reset::Yearly, "20#6"),
            // Only the names Tally gives: no sign, no space, two digits for a month or day.
            (Reset::Monthly, "2026-1 "),
            (Reset::Monthly, " 2026-1"),
            (Reset::Daily, "2026-1-011"),
            (Reset::Daily, "2026-01- 1"),
            (Reset::Daily, "+100-01-01"),
            (Reset::Daily, "2026/01/01"),
        ] {
            assert!(Period::parse(reset, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_next_period_crosses_year_ends() {
        let next = |reset, text| {
            Period::parse(reset, text)
                .unwrap()
                .next(reset)
                .map(|p| p.to_string())
        };
        assert_eq!(next(Reset::Yearly, "2026").as_deref(), Some("2027"));
        assert_eq!(next(Reset::Monthly, "2026-12").as_deref(), Some("2027-01"));
        assert_eq!(
            next(Reset::Daily, "2026-12-31").as_deref(),
            Some("2027-01-01")
        );
        assert_eq!(
            next(Reset::FiscalYearly, "FY2027").as_deref(),
            Some("FY2028")
        );
        assert_eq!(next(Reset::Never, "all"), None);
        assert_eq!(next(Reset::Monthly, "2028-01").as_deref(), Some("2028-02"));
        assert_eq!(
            next(Reset::Daily, "2028-02-28").as_deref(),
            Some("2028-02-29")
        );
        // Past 9999 there is no name of the same width.
        assert_eq!(next(Reset::Monthly, "9999-12"), None);
        assert_eq!(next(Reset::Daily, "9999-12-31"), None);
    }

    #[test]
    fn a_two_digit_year_is_read_as_each_year_in_range_that_ends_in_it() {
        let read = ReadNumber {
            year2: Some(26),
            month: Some(3),
            counter: 1,
            ..ReadNumber::default()
        };
        let periods: Vec<String> = Reset::Monthly
            .periods_of(&read, 2025..=2027)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(periods, ["2026-03"]);
        assert!(Reset::Yearly.periods_of(&read, 2000..=2020).is_empty());
        assert_eq!(Reset::Never.periods_of(&read, 2025..=2027).len(), 1);
    }
}
