//! The calendar of a series: its time zone (IANA name) and the month its fiscal year
//! starts in, which turn a moment into the local date its numbers show.

use jiff::Timestamp;

use super::SeriesError;

/// An IANA time zone such as `Europe/Berlin`, from the time zone database built into
/// Tally (so that every process and machine agrees on it): jiff's compressed bundle, as
/// jiff is Tally's one date-time crate (chrono-tz, which compiles the database into code,
/// put the order and import functions 1.4 MB over their 8 MB budget:
/// docs/notebook/2026-12-05-time-zone-database.md).
#[derive(Debug, Clone)]
pub struct Timezone {
    name: String,
    zone: jiff::tz::TimeZone,
}

/// The longest time zone name taken: the database's longest is 32 characters
/// (`America/Argentina/ComodRivadavia`); a longer one is refused without a lookup.
pub const MAX_TIMEZONE_LEN: usize = 64;

impl Timezone {
    pub fn parse(name: &str) -> Result<Self, SeriesError> {
        if name.len() > MAX_TIMEZONE_LEN {
            return Err(SeriesError::Timezone);
        }
        let zone = jiff::tz::TimeZone::get(name).map_err(|_| SeriesError::Timezone)?;
        // The database's own spelling, so that `europe/berlin` and `Europe/Berlin` are one.
        let name = zone.iana_name().unwrap_or(name).to_owned();
        Ok(Self { name, zone })
    }

    pub fn utc() -> Self {
        Self::parse("UTC").expect("UTC is in every time zone database")
    }

    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The local date and time at `at` in this zone.
    pub fn local(&self, at: Timestamp) -> jiff::civil::DateTime {
        self.zone.to_datetime(at)
    }
}

impl PartialEq for Timezone {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Timezone {}

/// A local date as a series shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalDate {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    /// Named for the calendar year in which the fiscal year ends.
    pub fiscal_year: i32,
}

/// Where a series keeps its dates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calendar {
    pub timezone: Timezone,
    /// The month (1 to 12) on whose first day a fiscal year starts.
    pub fiscal_year_start: u32,
}

impl Default for Calendar {
    fn default() -> Self {
        Self {
            timezone: Timezone::utc(),
            fiscal_year_start: 1,
        }
    }
}

impl Calendar {
    pub fn new(timezone: Timezone, fiscal_year_start: u32) -> Result<Self, SeriesError> {
        if !(1..=12).contains(&fiscal_year_start) {
            return Err(SeriesError::FiscalYearStart(fiscal_year_start));
        }
        Ok(Self {
            timezone,
            fiscal_year_start,
        })
    }

    /// The local date at `at`.
    pub fn date(&self, at: Timestamp) -> LocalDate {
        let local = self.timezone.local(at);
        let (year, month, day) = (
            i32::from(local.year()),
            local.month() as u32,
            local.day() as u32,
        );
        LocalDate {
            year,
            month,
            day,
            fiscal_year: self.fiscal_year(year, month),
        }
    }

    /// The fiscal year that a local month belongs to, named for the calendar year it ends
    /// in: with a start in April, April 2026 to March 2027 is fiscal year 2027.
    pub fn fiscal_year(&self, year: i32, month: u32) -> i32 {
        if self.fiscal_year_start > 1 && month >= self.fiscal_year_start {
            year + 1
        } else {
            year
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(y: i16, m: i8, d: i8, h: i8, min: i8) -> Timestamp {
        jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(y, m, d).at(h, min, 0, 0))
            .unwrap()
    }

    #[test]
    fn half_past_midnight_in_berlin_on_new_year_is_the_new_year() {
        let berlin = Calendar::new(Timezone::parse("Europe/Berlin").unwrap(), 1).unwrap();
        let date = berlin.date(utc(2026, 12, 31, 23, 30));
        assert_eq!((date.year, date.month, date.day), (2027, 1, 1));
        let date = Calendar::default().date(utc(2026, 12, 31, 23, 30));
        assert_eq!((date.year, date.month, date.day), (2026, 12, 31));
    }

    #[test]
    fn the_local_day_follows_daylight_saving_time() {
        let berlin = Calendar::new(Timezone::parse("Europe/Berlin").unwrap(), 1).unwrap();
        // Summer time (UTC+2) ends at 01:00 UTC on 25 October 2026.
        assert_eq!(berlin.date(utc(2026, 10, 24, 22, 30)).day, 25);
        assert_eq!(berlin.date(utc(2026, 10, 25, 22, 30)).day, 25);
        assert_eq!(berlin.date(utc(2026, 10, 25, 23, 30)).day, 26);
    }

    #[test]
    fn fiscal_years_are_named_for_the_year_they_end_in() {
        let april = Calendar::new(Timezone::utc(), 4).unwrap();
        assert_eq!(april.date(utc(2026, 3, 31, 23, 59)).fiscal_year, 2026);
        assert_eq!(april.date(utc(2026, 4, 1, 0, 0)).fiscal_year, 2027);
        assert_eq!(
            Calendar::default().date(utc(2026, 4, 1, 0, 0)).fiscal_year,
            2026
        );
        assert_eq!(
            Calendar::new(Timezone::utc(), 13),
            Err(SeriesError::FiscalYearStart(13))
        );
    }

    #[test]
    fn time_zones_are_iana_names() {
        assert_eq!(
            Timezone::parse("europe/berlin").unwrap().as_str(),
            "Europe/Berlin"
        );
        assert!(Timezone::parse("Mars/Olympus").is_err());
        assert!(Timezone::parse("").is_err());
        let longest = "America/Argentina/ComodRivadavia";
        assert!(longest.len() <= MAX_TIMEZONE_LEN && Timezone::parse(longest).is_ok());
        assert!(Timezone::parse(&"a".repeat(MAX_TIMEZONE_LEN + 1)).is_err());
    }
}
