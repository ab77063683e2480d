//! The calendar windows spend is counted in: a day, an ISO week (Monday first) and a
//! month, in the deployment's time zone.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::series::Timezone;

/// The length of a spend window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Span {
    Day,
    Week,
    Month,
}

impl Span {
    pub const ALL: [Self; 3] = [Self::Day, Self::Week, Self::Month];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
        }
    }

    /// The window of this span that `at` falls in.
    pub fn window(self, zone: &Timezone, at: Timestamp) -> Window {
        let local = zone.local(at).date();
        Window(match self {
            Self::Day => format!(
                "{:04}-{:02}-{:02}",
                local.year(),
                local.month(),
                local.day()
            ),
            Self::Week => {
                let week = local.iso_week_date();
                format!("{:04}-W{:02}", week.year(), week.week())
            }
            Self::Month => format!("{:04}-{:02}", local.year(), local.month()),
        })
    }
}

/// One window by name: `2026-12-05`, `2026-W49`, `2026-12`. Within a span, names sort
/// as the windows follow each other.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Window(String);

impl Window {
    /// A window as stored.
    pub fn new(name: String) -> Self {
        Self(name)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        crate::time::parse_rfc3339(text).unwrap()
    }

    #[test]
    fn windows_are_calendar_ones_in_the_deployment_zone() {
        let london = Timezone::parse("Europe/London").unwrap();
        let moment = at("2026-12-31T23:30:00-01:00");
        assert_eq!(Span::Day.window(&london, moment).as_str(), "2027-01-01");
        assert_eq!(Span::Week.window(&london, moment).as_str(), "2026-W53");
        assert_eq!(Span::Month.window(&london, moment).as_str(), "2027-01");
        let new_york = Timezone::parse("America/New_York").unwrap();
        assert_eq!(Span::Day.window(&new_york, moment).as_str(), "2026-12-31");
    }

    #[test]
    fn window_names_sort_as_the_windows_follow() {
        let utc = Timezone::utc();
        let days = [
            "2026-12-28T12:00:00Z",
            "2027-01-04T12:00:00Z",
            "2027-02-01T00:00:00Z",
        ];
        for span in Span::ALL {
            let names: Vec<Window> = days.iter().map(|d| span.window(&utc, at(d))).collect();
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{span:?}: {names:?}");
        }
    }
}
