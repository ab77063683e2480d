//! The hash chain of a gapless period: each entry (an order, or a declared move of the
//! counter) stores `SHA-256(previous hash || canonical bytes of the entry)`, and the
//! period's counter carries the last hash (the head). Changing any stored entry breaks
//! the chain from that entry on. The exact bytes are specified in docs/numbering.md.

use sha2::{Digest, Sha256};

use super::hex;
use super::order::{Move, Order};
use super::time::rfc3339_millis as time;

/// A link of the chain.
pub type Hash = [u8; 32];

/// The hash before the first entry of a period: 32 zero bytes.
pub const GENESIS: Hash = [0; 32];

/// Feeds one field: its length in bytes (4 bytes, big-endian), then its UTF-8 bytes, so
/// that no two sequences of fields give the same bytes.
pub(crate) fn field(hasher: &mut Sha256, value: &str) {
    hasher.update((value.len() as u32).to_be_bytes());
    hasher.update(value.as_bytes());
}

/// `SHA-256(previous || "order" number series source external_ref data time)`, where
/// `data` is the canonical form of the order's data; a credit note adds the number of the
/// invoice it corrects, so that its link to the invoice cannot be edited unseen.
pub fn order_link(previous: &Hash, order: &Order) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(previous);
    for value in [
        "order",
        &order.order_number,
        order.series.as_str(),
        order.source.as_str(),
        order.external_ref.as_str(),
        order.data.canonical(),
        &time(order.created_at),
    ] {
        field(&mut hasher, value);
    }
    if let Some(invoice) = &order.corrects {
        field(&mut hasher, invoice);
    }
    hasher.finalize().into()
}

/// `SHA-256(previous || "move" series from to reason time)`, numbers in decimal.
pub fn move_link(previous: &Hash, moved: &Move) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(previous);
    for value in [
        "move",
        moved.series.as_str(),
        &moved.from.to_string(),
        &moved.to.to_string(),
        moved.reason.as_str(),
        &time(moved.at),
    ] {
        field(&mut hasher, value);
    }
    hasher.finalize().into()
}

pub fn to_hex(hash: &Hash) -> String {
    hex::encode(hash)
}

/// A hash from its 64 hex digits.
pub fn from_hex(text: &str) -> Option<Hash> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut hash = [0u8; 32];
    for (i, byte) in hash.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ExternalRef, SeriesId, SourceId};
    use crate::order::{OrderData, Reason};

    fn order(number: &str, data: &str) -> Order {
        Order {
            order_number: number.to_owned(),
            series: SeriesId::parse("UABC").unwrap(),
            source: SourceId::parse("erp-1").unwrap(),
            external_ref: ExternalRef::parse("PO-1").unwrap(),
            data: OrderData::parse(Some(data)).unwrap(),
            fingerprint: String::new(),
            period: "2026".into(),
            counter: 1,
            created_at: jiff::tz::Offset::UTC
                .to_timestamp(jiff::civil::date(2026, 11, 29).at(10, 15, 0, 0))
                .unwrap(),
            hash: None,
            void: None,
            corrects: None,
            credit_notes: Vec::new(),
        }
    }

    #[test]
    fn the_first_link_of_a_known_order_is_stable() {
        // Recomputed by hand from the bytes docs/numbering.md specifies.
        let link = order_link(&GENESIS, &order("UABC26000001", r#"{"total": "129.90"}"#));
        let mut hasher = Sha256::new();
        hasher.update([0u8; 32]);
        for v in [
            "order",
            "UABC26000001",
            "UABC",
            "erp-1",
            "PO-1",
            r#"{"total":"129.90"}"#,
            "2026-11-29T10:15:00.000Z",
        ] {
            hasher.update((v.len() as u32).to_be_bytes());
            hasher.update(v);
        }
        assert_eq!(link, <[u8; 32]>::from(hasher.finalize()));
    }

    #[test]
    fn any_change_of_content_or_predecessor_changes_the_link() {
        let base = order_link(&GENESIS, &order("A1", r#"{"a": 1}"#));
        assert_eq!(base, order_link(&GENESIS, &order("A1", r#"{ "a":1 }"#)));
        assert_ne!(base, order_link(&GENESIS, &order("A1", r#"{"a": 2}"#)));
        assert_ne!(base, order_link(&GENESIS, &order("A2", r#"{"a": 1}"#)));
        assert_ne!(base, order_link(&base, &order("A1", r#"{"a": 1}"#)));
        let credit = Order {
            corrects: Some("F7".into()),
            ..order("A1", r#"{"a": 1}"#)
        };
        assert_ne!(base, order_link(&GENESIS, &credit));
        let moved = Move {
            series: SeriesId::parse("UABC").unwrap(),
            from: 2,
            to: 9,
            reason: Reason::parse("skip").unwrap(),
            at: jiff::tz::Offset::UTC
                .to_timestamp(jiff::civil::date(2026, 11, 29).at(10, 15, 0, 0))
                .unwrap(),
            hash: None,
        };
        assert_ne!(move_link(&base, &moved), base);
        assert_eq!(from_hex(&to_hex(&base)), Some(base));
        assert_eq!(from_hex("zz"), None);
    }
}
