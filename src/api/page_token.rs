//! Page tokens: what the API's `next_cursor` gives and `cursor` takes back. Opaque to
//! clients, and checked in size and shape before one reaches a query: DynamoDB refuses a
//! start key whose sort key passes 1,024 bytes, which DynamoDB Local accepts, so a token
//! that Tally never gave must stop here, as `400 invalid_cursor`, on either.
//!
//! A period's tokens (a listing's, an audit's) name a place by counter only, which would
//! read as a place in any period: each ends with a tag of the series, period and route it
//! was given for, checked once the request's period is known and before the table is read.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use sha2::{Digest, Sha256};

use super::problem::{Code, Problem};
use super::timestamp;
use crate::store::lists::After;
use crate::tickets::PurchasesFrom;
use tally_domain::audit::AuditState;
use tally_domain::hex;
use tally_domain::ids::{PaymentId, SeriesId};
use tally_domain::series::Period;
use tally_domain::time::parse_rfc3339;

/// The longest page token of an index list: a stored time (24 bytes), `#` and an id of at most
/// 64 characters, in base64url (119 characters).
pub const MAX_LIST_TOKEN_CHARS: usize = 120;
/// The longest page token of a draw's purchases: a stripe (at most 4 digits), `#` and an
/// index list's entry, in base64url (126 characters).
pub const MAX_PURCHASES_TOKEN_CHARS: usize = 128;
/// A period listing's page token: the counter a page ends at, as 16 lowercase hex digits,
/// then `.` and its [`period_tag`].
pub const COUNTER_TOKEN_CHARS: usize = 16 + 1 + TAG_CHARS;
/// A period tag: 4 bytes in lowercase hex.
const TAG_CHARS: usize = 8;

fn invalid() -> Problem {
    Problem::new(Code::InvalidCursor, "`cursor` is not one this API gave")
}

/// The text of a base64url page token of at most `max_chars` characters.
fn decode(raw: &str, max_chars: usize) -> Result<String, Problem> {
    if raw.len() > max_chars {
        return Err(invalid());
    }
    URL_SAFE_NO_PAD
        .decode(raw)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(invalid)
}

/// The page token after `after`, an entry of an index list (the draws, a payer's purchases).
pub fn list_page_token(after: After) -> String {
    URL_SAFE_NO_PAD.encode(after.0)
}

/// Reads a [`list_page_token`]: base64url of an index sort key, a time exactly as stored and
/// an id (a draw's, or a payment's, whose characters include a draw id's), anything else
/// refused before it is decoded further.
pub fn list_after(raw: &str) -> Result<After, Problem> {
    let text = decode(raw, MAX_LIST_TOKEN_CHARS)?;
    let (time, id) = text.split_once('#').ok_or_else(invalid)?;
    // Another spelling of the time (more digits, an offset) would sort elsewhere.
    let canonical = parse_rfc3339(time).is_ok_and(|t| timestamp(t) == time);
    if !canonical || PaymentId::parse(id).is_err() {
        return Err(invalid());
    }
    Ok(After(text))
}

/// The page token of a draw's purchases from `from`: its stripe, then `#` and the entry it
/// follows, if any.
pub fn purchases_page_token(from: PurchasesFrom) -> String {
    let text = match from.after {
        Some(after) => format!("{}#{}", from.stripe, after.0),
        None => from.stripe.to_string(),
    };
    URL_SAFE_NO_PAD.encode(text)
}

/// Reads a [`purchases_page_token`]: a stripe in decimal digits, alone or followed by `#` and
/// what [`list_after`] takes.
pub fn purchases_from(raw: &str) -> Result<PurchasesFrom, Problem> {
    let text = decode(raw, MAX_PURCHASES_TOKEN_CHARS)?;
    let (stripe, after) = match text.split_once('#') {
        Some((stripe, entry)) => (stripe, Some(list_after(&URL_SAFE_NO_PAD.encode(entry))?)),
        None => (text.as_str(), None),
    };
    // Digits only: `parse` would also take a sign.
    if stripe.is_empty() || stripe.len() > 4 || !stripe.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    let stripe = stripe.parse().map_err(|_| invalid())?;
    Ok(PurchasesFrom { stripe, after })
}

/// The route that gives a period's tokens: one route's token is no place in the other's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PeriodRoute {
    Orders,
    Audit,
}

impl PeriodRoute {
    fn as_str(self) -> &'static str {
        match self {
            Self::Orders => "orders",
            Self::Audit => "audit",
        }
    }
}

/// What a period's token belongs to: the first 4 bytes of SHA-256 over the route, the
/// series id and the period (each followed by a zero byte), in lowercase hex. Short, as it
/// only has to tell a token given elsewhere by mistake from this one's.
fn period_tag(route: PeriodRoute, series_id: &SeriesId, period: &Period) -> String {
    let mut hasher = Sha256::new();
    for part in [route.as_str(), series_id.as_str(), period.as_str()] {
        hasher.update(part);
        hasher.update([0]);
    }
    hex::encode(&hasher.finalize()[..4])
}

fn is_lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A period's token as read, its shape checked: where it goes on from, and the tag of
/// what it was given for, which [`PeriodCursor::open`] checks against the request's.
#[derive(Debug)]
pub struct PeriodCursor<T> {
    from: T,
    route: PeriodRoute,
    tag: String,
}

impl<T> PeriodCursor<T> {
    /// Reads `raw` as `<what from reads>.<tag>`.
    fn read(
        raw: &str,
        route: PeriodRoute,
        from: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Self, Problem> {
        let (body, tag) = raw.rsplit_once('.').ok_or_else(invalid)?;
        if tag.len() != TAG_CHARS || !is_lower_hex(tag) {
            return Err(invalid());
        }
        Ok(Self {
            from: from(body).ok_or_else(invalid)?,
            route,
            tag: tag.to_owned(),
        })
    }

    /// Where the token goes on from, if its route gave it for `period` of `series_id`.
    pub fn open(self, series_id: &SeriesId, period: &Period) -> Result<T, Problem> {
        if self.tag != period_tag(self.route, series_id, period) {
            return Err(Problem::new(
                Code::InvalidCursor,
                format!(
                    "`cursor` was not given by this route for period {period} of series {series_id}"
                ),
            ));
        }
        Ok(self.from)
    }
}

/// The page token after the counter `after` of a listing of `period` of `series_id`.
pub fn counter_page_token(series_id: &SeriesId, period: &Period, after: u64) -> String {
    let tag = period_tag(PeriodRoute::Orders, series_id, period);
    format!("{after:016x}.{tag}")
}

/// Reads a [`counter_page_token`]: 16 lowercase hex digits, `.` and a tag.
pub fn counter_after(raw: &str) -> Result<PeriodCursor<u64>, Problem> {
    if raw.len() != COUNTER_TOKEN_CHARS {
        return Err(invalid());
    }
    PeriodCursor::read(raw, PeriodRoute::Orders, |counter| {
        let digits = counter.len() == 16 && is_lower_hex(counter);
        digits.then(|| u64::from_str_radix(counter, 16).ok())?
    })
}

/// The page token of an audit of `period` of `series_id` that goes on from `state`.
pub fn audit_page_token(series_id: &SeriesId, period: &Period, state: &AuditState) -> String {
    let tag = period_tag(PeriodRoute::Audit, series_id, period);
    format!("{}.{tag}", state.encode())
}

/// Reads an [`audit_page_token`].
pub fn audit_from(raw: &str) -> Result<PeriodCursor<AuditState>, Problem> {
    PeriodCursor::read(raw, PeriodRoute::Audit, AuditState::decode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_domain::series::Reset;

    #[test]
    fn list_page_tokens_round_trip_and_nothing_else_passes() {
        let after = After("2026-11-29T10:15:02.318Z#summer-2026".into());
        let token = list_page_token(after.clone());
        assert_eq!(list_after(&token).unwrap(), after);
        let longest = After(format!("2026-11-29T10:15:02.318Z#{}", "x".repeat(64)));
        let token = list_page_token(longest.clone());
        assert!(token.len() <= MAX_LIST_TOKEN_CHARS);
        assert_eq!(list_after(&token).unwrap(), longest);
        // A payment id as providers write it.
        let dotted = After("2026-11-29T10:15:02.318Z#GPA.3371:pi_1".into());
        assert_eq!(
            list_after(&list_page_token(dotted.clone())).unwrap(),
            dotted
        );
        let encode = |text: &str| URL_SAFE_NO_PAD.encode(text);
        let long_fraction = format!("2026-11-29T10:15:02.{}Z#d", "0".repeat(53_000));
        for bad in [
            "abc".to_owned(),
            String::new(),
            "%%%".to_owned(),
            encode("nope"),
            encode("2026-11-29T10:15:02.318Z"),
            encode("2026-11-29T10:15:02Z#d"),
            encode("2026-11-29T11:15:02.318+01:00#d"),
            encode("2026-11-29T23:59:60.318Z#d"),
            encode("2026-11-29T10:15:02.318Z#a#b"),
            encode(&format!("2026-11-29T10:15:02.318Z#{}", "x".repeat(65))),
            encode(&long_fraction),
            "A".repeat(60_000),
        ] {
            assert!(list_after(&bad).is_err(), "{bad:.80}");
        }
    }

    #[test]
    fn purchases_page_tokens_round_trip_and_nothing_else_passes() {
        let longest = PurchasesFrom {
            stripe: 1023,
            after: Some(After(format!(
                "2026-11-29T10:15:02.318Z#{}",
                "x".repeat(64)
            ))),
        };
        let start = PurchasesFrom {
            stripe: 7,
            after: None,
        };
        for from in [longest, start] {
            let token = purchases_page_token(from.clone());
            assert!(token.len() <= MAX_PURCHASES_TOKEN_CHARS);
            assert_eq!(purchases_from(&token).unwrap(), from);
        }
        let encode = |text: &str| URL_SAFE_NO_PAD.encode(text);
        for bad in [
            String::new(),
            "%%%".to_owned(),
            encode(""),
            encode("+7"),
            encode("-1"),
            encode("10000"),
            encode("7#"),
            encode("7#2026-11-29T10:15:02Z#d"),
            encode("x#2026-11-29T10:15:02.318Z#d"),
            encode("2026-11-29T10:15:02.318Z#d"),
            "A".repeat(60_000),
        ] {
            assert!(purchases_from(&bad).is_err(), "{bad:.80}");
        }
    }

    fn series(id: &str) -> SeriesId {
        SeriesId::parse(id).unwrap()
    }

    fn day(text: &str) -> Period {
        Period::parse(Reset::Daily, text).unwrap()
    }

    #[test]
    fn counter_page_tokens_open_only_for_their_series_and_period() {
        let (a, today) = (series("A"), day("2026-11-29"));
        for counter in [0, 1, 100, u64::MAX] {
            let token = counter_page_token(&a, &today, counter);
            assert_eq!(token.len(), COUNTER_TOKEN_CHARS);
            let read = counter_after(&token).unwrap();
            assert_eq!(read.open(&a, &today).unwrap(), counter);
        }
        let token = counter_page_token(&a, &today, 100);
        assert!(token.starts_with("0000000000000064."), "{token}");
        let elsewhere = [(series("B"), today.clone()), (a.clone(), day("2026-11-28"))];
        for (series_id, period) in &elsewhere {
            let read = counter_after(&token).unwrap();
            assert!(
                read.open(series_id, period).is_err(),
                "{series_id} {period}"
            );
        }
        // The audit's tag of the same series and period.
        let audit_tag = period_tag(PeriodRoute::Audit, &a, &today);
        let read = counter_after(&format!("0000000000000064.{audit_tag}")).unwrap();
        assert!(read.open(&a, &today).is_err());
        let tag = &token[17..];
        for bad in [
            "abc".to_owned(),
            "0000000000000064".to_owned(),
            format!("+000000000000064.{tag}"),
            format!("000000000000006G.{tag}"),
            format!("000000000000006A.{tag}"),
            format!("0000000000000064.{}", tag.to_uppercase()),
            format!("0000000000000064-{tag}"),
            format!("00000000000000064.{}", &tag[1..]),
            "0000000000000064.1234567".to_owned(),
            String::new(),
            "0".repeat(53_000),
        ] {
            assert!(counter_after(&bad).is_err(), "{bad:.40}");
        }
    }

    #[test]
    fn audit_page_tokens_open_only_for_their_series_period_and_route() {
        let (a, today) = (series("A"), day("2026-11-29"));
        let state = AuditState {
            expected: 1_001,
            orders: 990,
            voided: 3,
            links: 1_000,
            previous: [7; 32],
            broken_at: Some(0x1234_5678),
        };
        let token = audit_page_token(&a, &today, &state);
        assert_eq!(audit_from(&token).unwrap().open(&a, &today).unwrap(), state);
        for (series_id, period) in [(series("B"), today.clone()), (a.clone(), day("2026-11-28"))] {
            let read = audit_from(&token).unwrap();
            assert!(
                read.open(&series_id, &period).is_err(),
                "{series_id} {period}"
            );
        }
        let listing_tag = period_tag(PeriodRoute::Orders, &a, &today);
        let with_listing_tag = format!("{}.{listing_tag}", state.encode());
        assert!(
            audit_from(&with_listing_tag)
                .unwrap()
                .open(&a, &today)
                .is_err()
        );
        // Untagged, as tokens were before tags: its last number, read as a tag, leaves
        // too few for a state.
        let listing = counter_page_token(&a, &today, 1_000);
        for bad in [state.encode(), listing, "abc".to_owned(), String::new()] {
            assert!(audit_from(&bad).is_err(), "{bad}");
        }
    }
}
