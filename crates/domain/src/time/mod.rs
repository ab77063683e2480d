//! Times as Tally writes them everywhere (answers, items, events, the hash chain, exports):
//! RFC 3339 in UTC with milliseconds, so that the same instant is always the same text;
//! times as callers give them, read in one place; and the clock services read.
//!
//! Every text and number made of a time is made here, by hand, so that it stays the one
//! the stored items, the hash chain and the clients already hold: a library's default
//! text (how many fractional digits, `Z` or `+00:00`) is never the contract.

use std::sync::Arc;

use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::Offset;

/// The current time, as the services read it; tests pass a clock they set, to cross
/// periods, schedules and deadlines without sleeping.
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// The date and time in UTC at `at`.
pub fn utc(at: Timestamp) -> DateTime {
    Offset::UTC.to_datetime(at)
}

/// `2026-11-29T10:15:00.000Z`: always three fractional digits, the rest cut off.
pub fn rfc3339_millis(at: Timestamp) -> String {
    let t = utc(at);
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        date_text(t.date()),
        t.hour(),
        t.minute(),
        t.second(),
        t.subsec_nanosecond() / 1_000_000
    )
}

/// `2026-11-29T10:15:00Z`, `2026-11-29T10:15:00.500Z`: as many fractional digits as the
/// time has, in groups of three (none, 3, 6 or 9), as items whose times were never cut to
/// the millisecond hold them.
pub fn rfc3339_exact(at: Timestamp) -> String {
    let t = utc(at);
    let nanos = t.subsec_nanosecond();
    let fraction = if nanos == 0 {
        String::new()
    } else if nanos % 1_000_000 == 0 {
        format!(".{:03}", nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        format!(".{:06}", nanos / 1_000)
    } else {
        format!(".{nanos:09}")
    };
    format!(
        "{}T{:02}:{:02}:{:02}{fraction}Z",
        date_text(t.date()),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// A year in four digits; one outside 0 to 9999 signed, as ISO 8601 extends it.
fn date_text(date: Date) -> String {
    let year = date.year();
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!("{year:+05}")
    };
    format!("{year}-{:02}-{:02}", date.month(), date.day())
}

/// A time as the numbers of the Unix epoch that items, page tokens and DynamoDB's time to
/// live keep, each rounded down (a moment before 1970 counts the millisecond it falls in).
pub trait Epoch {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    fn epoch_millis(self) -> i64;
    /// Microseconds since 1970-01-01T00:00:00Z.
    fn epoch_micros(self) -> i64;
    /// Seconds since 1970-01-01T00:00:00Z.
    fn epoch_seconds(self) -> i64;
}

impl Epoch for Timestamp {
    fn epoch_millis(self) -> i64 {
        let millis = self.as_nanosecond().div_euclid(1_000_000);
        i64::try_from(millis).expect("a timestamp's milliseconds fit in i64")
    }

    fn epoch_micros(self) -> i64 {
        let micros = self.as_nanosecond().div_euclid(1_000);
        i64::try_from(micros).expect("a timestamp's microseconds fit in i64")
    }

    fn epoch_seconds(self) -> i64 {
        let seconds = self.as_nanosecond().div_euclid(1_000_000_000);
        i64::try_from(seconds).expect("a timestamp's seconds fit in i64")
    }
}

/// The moment `millis` milliseconds after 1970-01-01T00:00:00Z, if it is one a time can
/// be (years -9999 to 9999).
pub fn from_epoch_millis(millis: i64) -> Option<Timestamp> {
    Timestamp::from_millisecond(millis).ok()
}

/// `at` cut to the millisecond below, the precision every stored time has.
pub fn to_millis(at: Timestamp) -> Timestamp {
    from_epoch_millis(at.epoch_millis()).unwrap_or(at)
}

/// A time stored by an earlier version: any RFC 3339 time, so that what was stored before
/// a rule tightened keeps reading (a caller's time is [`parse_rfc3339`]'s). A leap second
/// reads as the second before it, as nothing here counts them.
pub fn parse_stored(text: &str) -> Option<Timestamp> {
    rfc3339::parse(text).ok().map(|read| read.at)
}

/// A time field in serde as Tally writes times ([`rfc3339_millis`]) and reads stored ones
/// ([`parse_stored`]): `#[serde(with = "tally_domain::time::millis")]`.
pub mod millis {
    use jiff::Timestamp;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(at: &Timestamp, to: S) -> Result<S::Ok, S::Error> {
        to.serialize_str(&super::rfc3339_millis(*at))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<Timestamp, D::Error> {
        let text = String::deserialize(from)?;
        super::parse_stored(&text).ok_or_else(|| D::Error::custom("not an RFC 3339 time"))
    }
}

/// A time field in serde written as [`rfc3339_exact`] and read as [`parse_stored`]:
/// `#[serde(with = "tally_domain::time::exact")]`.
pub mod exact {
    use jiff::Timestamp;
    use serde::Serializer;

    pub use super::millis::deserialize;

    pub fn serialize<S: Serializer>(at: &Timestamp, to: S) -> Result<S::Ok, S::Error> {
        to.serialize_str(&super::rfc3339_exact(*at))
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
    /// RFC 3339's years run to 9999, but a time is kept only up to late on 30 December
    /// 9999 in UTC (and from early on 2 January -9999), so that every offset can show it.
    #[error("past 9999-12-30T22:00:00Z, the last time kept")]
    OutOfRange,
}

/// Reads a time a caller gave (a body member, a query parameter, a cursor): RFC 3339 with
/// any offset, in UTC, seconds 00 to 59.
pub fn parse_rfc3339(text: &str) -> Result<Timestamp, TimeError> {
    let read = rfc3339::parse(text)?;
    if read.leap {
        return Err(TimeError::LeapSecond);
    }
    Ok(read.at)
}

/// RFC 3339's `date-time` (section 5.6), read by hand so that what it takes is written
/// here: `T` or `t` or one space between date and time, any number of fractional digits
/// (past nine ignored), `Z`, `z` or an offset of at most 23:59 whose minus may also be
/// U+2212, and second 60.
mod rfc3339 {
    use jiff::Timestamp;
    use jiff::civil::DateTime;
    use jiff::tz::Offset;

    use super::TimeError;

    pub struct Read {
        pub at: Timestamp,
        /// Second 60 was written; `at` is then in second 59.
        pub leap: bool,
    }

    pub fn parse(text: &str) -> Result<Read, TimeError> {
        let bytes = text.as_bytes();
        let head = bytes.get(..19).ok_or(TimeError::NotRfc3339)?;
        let number = |from: usize, to: usize| -> Result<i32, TimeError> {
            head[from..to].iter().try_fold(0, |n, &b| {
                if b.is_ascii_digit() {
                    Ok(n * 10 + i32::from(b - b'0'))
                } else {
                    Err(TimeError::NotRfc3339)
                }
            })
        };
        let punctuation = [(4, b"-"), (7, b"-"), (13, b":"), (16, b":")];
        if punctuation.iter().any(|&(at, c)| head[at] != c[0])
            || !matches!(head[10], b'T' | b't' | b' ')
        {
            return Err(TimeError::NotRfc3339);
        }
        let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
        let (hour, minute, second) = (number(11, 13)?, number(14, 16)?, number(17, 19)?);
        let leap = second == 60;
        let mut rest = &text[19..];
        let mut nanos = 0;
        if let Some(fraction) = rest.strip_prefix('.') {
            let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return Err(TimeError::NotRfc3339);
            }
            // Nine digits are nanoseconds; the rest are below what a time keeps.
            let kept = &fraction[..digits.min(9)];
            nanos = kept.parse::<i32>().map_err(|_| TimeError::NotRfc3339)?
                * 10_i32.pow(9 - kept.len() as u32);
            rest = &fraction[digits..];
        }
        let offset = offset_seconds(rest)?;
        let local = DateTime::new(
            i16::try_from(year).map_err(|_| TimeError::NotRfc3339)?,
            i8::try_from(month).map_err(|_| TimeError::NotRfc3339)?,
            i8::try_from(day).map_err(|_| TimeError::NotRfc3339)?,
            i8::try_from(hour).map_err(|_| TimeError::NotRfc3339)?,
            i8::try_from(minute).map_err(|_| TimeError::NotRfc3339)?,
            i8::try_from(if leap { 59 } else { second }).map_err(|_| TimeError::NotRfc3339)?,
            nanos,
        )
        .map_err(|_| TimeError::NotRfc3339)?;
        let offset = Offset::from_seconds(offset).map_err(|_| TimeError::NotRfc3339)?;
        let at = offset
            .to_timestamp(local)
            .map_err(|_| TimeError::OutOfRange)?;
        Ok(Read { at, leap })
    }

    /// `Z`, `z`, or `+hh:mm` / `-hh:mm` / `−hh:mm` below 24 hours, and nothing after it.
    fn offset_seconds(text: &str) -> Result<i32, TimeError> {
        if text == "Z" || text == "z" {
            return Ok(0);
        }
        let (sign, rest) = if let Some(rest) = text.strip_prefix('+') {
            (1, rest)
        } else if let Some(rest) = text.strip_prefix('-').or(text.strip_prefix('\u{2212}')) {
            (-1, rest)
        } else {
            return Err(TimeError::NotRfc3339);
        };
        let b = rest.as_bytes();
        if b.len() != 5 || b[2] != b':' || ![0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit()) {
            return Err(TimeError::NotRfc3339);
        }
        let digit = |i: usize| i32::from(b[i] - b'0');
        let (hours, minutes) = (digit(0) * 10 + digit(1), digit(3) * 10 + digit(4));
        if hours > 23 || minutes > 59 {
            return Err(TimeError::NotRfc3339);
        }
        Ok(sign * (hours * 3_600 + minutes * 60))
    }
}

#[cfg(test)]
mod tests;
