//! Page tokens: what the API's `next_cursor` gives and `cursor` takes back. Opaque to
//! clients, and checked in size and shape before one reaches a query: DynamoDB refuses a
//! start key whose sort key passes 1,024 bytes, which DynamoDB Local accepts, so a token
//! that Tally never gave must stop here, as `400 invalid_cursor`, on either.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::problem::{Code, Problem};
use super::timestamp;
use crate::store::lists::After;
use crate::tickets::PurchasesFrom;
use tally_domain::ids::PaymentId;
use tally_domain::time::parse_rfc3339;

/// The longest page token of an index list: a stored time (24 bytes), `#` and an id of at most
/// 64 characters, in base64url (119 characters).
pub const MAX_LIST_TOKEN_CHARS: usize = 120;
/// The longest page token of a draw's purchases: a stripe (at most 4 digits), `#` and an
/// index list's entry, in base64url (126 characters).
pub const MAX_PURCHASES_TOKEN_CHARS: usize = 128;
/// A period listing's page token: the counter a page ends at, as 16 lowercase hex digits.
pub const COUNTER_TOKEN_CHARS: usize = 16;

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

/// The page token after the counter `after` of a period listing.
pub fn counter_page_token(after: u64) -> String {
    format!("{after:016x}")
}

/// Reads a [`counter_page_token`]: exactly 16 lowercase hex digits.
pub fn counter_after(raw: &str) -> Result<u64, Problem> {
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if raw.len() != COUNTER_TOKEN_CHARS || !raw.bytes().all(hex) {
        return Err(invalid());
    }
    u64::from_str_radix(raw, 16).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn counter_page_tokens_are_sixteen_hex_digits() {
        for counter in [0, 1, 100, u64::MAX] {
            assert_eq!(
                counter_after(&counter_page_token(counter)).unwrap(),
                counter
            );
        }
        assert_eq!(counter_page_token(100), "0000000000000064");
        for bad in [
            "abc",
            "64",
            "+000000000000064",
            "000000000000006G",
            "000000000000006A",
            "00000000000000064",
            "",
        ] {
            assert!(counter_after(bad).is_err(), "{bad}");
        }
        assert!(counter_after(&"0".repeat(53_000)).is_err());
    }
}
