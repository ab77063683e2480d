//! Times as Tally writes them everywhere (answers, items, events, the hash chain, exports):
//! RFC 3339 in UTC with milliseconds, so that the same instant is always the same text;
//! times as callers give them, read in one place; and the clock services read.

use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Timelike, Utc};

/// The current time, as the services read it; tests pass a clock they set, to cross
/// periods, schedules and deadlines without sleeping.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// `2026-11-29T10:15:00.000Z`.
pub fn rfc3339_millis(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A time stored by an earlier version: any RFC 3339 time, so that what was stored before
/// a rule tightened keeps reading (a caller's time is [`parse_rfc3339`]'s).
pub fn parse_stored(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text).ok().map(|t| t.to_utc())
}

/// A time field in serde as Tally writes times ([`rfc3339_millis`]) and reads stored ones
/// ([`parse_stored`]): `#[serde(with = "tally_domain::time::millis")]`.
pub mod millis {
    use chrono::{DateTime, Utc};
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &DateTime<Utc>, to: S) -> Result<S::Ok, S::Error> {
        to.serialize_str(&super::rfc3339_millis(*at))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<DateTime<Utc>, D::Error> {
        let text = String::deserialize(from)?;
        super::parse_stored(&text).ok_or_else(|| D::Error::custom("not an RFC 3339 time"))
    }
}

/// Why a caller's time is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    #[error("not a date and time in RFC 3339, such as 2026-12-24T18:00:00Z")]
    NotRfc3339,
    /// RFC 3339 allows second 60, but Tally would store and answer it as written, and
    /// JavaScript's and Python's parsers refuse it.
    #[error("second 60 (a leap second) is not taken: give 23:59:59.999 or the next second")]
    LeapSecond,
}

/// Reads a time a caller gave (a body member, a query parameter, a cursor): RFC 3339 with
/// any offset, in UTC, seconds 00 to 59.
pub fn parse_rfc3339(text: &str) -> Result<DateTime<Utc>, TimeError> {
    let at = DateTime::parse_from_rfc3339(text).map_err(|_| TimeError::NotRfc3339)?;
    // chrono keeps a leap second as a nanosecond past 999,999,999.
    if at.nanosecond() >= 1_000_000_000 {
        return Err(TimeError::LeapSecond);
    }
    Ok(at.to_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callers_time_is_read_in_utc_without_leap_seconds() {
        let at = parse_rfc3339("2099-06-30T23:59:59.5+02:00").unwrap();
        assert_eq!(rfc3339_millis(at), "2099-06-30T21:59:59.500Z");
        for leap in [
            "2099-06-30T23:59:60.5Z",
            "2016-12-31T23:59:60Z",
            "2026-11-29T11:59:60+01:00",
        ] {
            assert_eq!(parse_rfc3339(leap), Err(TimeError::LeapSecond), "{leap}");
        }
        for bad in ["tomorrow", "2026-11-29", "2026-11-29T10:15:61Z", ""] {
            assert_eq!(parse_rfc3339(bad), Err(TimeError::NotRfc3339), "{bad}");
        }
    }

    #[test]
    fn a_time_is_written_in_utc_with_milliseconds() {
        let at = DateTime::parse_from_rfc3339("2026-11-29T11:15:00.5+01:00").unwrap();
        assert_eq!(rfc3339_millis(at.to_utc()), "2026-11-29T10:15:00.500Z");
    }
}
