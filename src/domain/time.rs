//! Times as Tally writes them everywhere (answers, items, events, the hash chain, exports):
//! RFC 3339 in UTC with milliseconds, so that the same instant is always the same text.

use chrono::{DateTime, SecondsFormat, Utc};

/// `2026-11-29T10:15:00.000Z`.
pub fn rfc3339_millis(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_written_in_utc_with_milliseconds() {
        let at = DateTime::parse_from_rfc3339("2026-11-29T11:15:00.5+01:00").unwrap();
        assert_eq!(rfc3339_millis(at.to_utc()), "2026-11-29T10:15:00.500Z");
    }
}
