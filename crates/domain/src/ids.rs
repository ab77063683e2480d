//! Identifiers that may become part of a DynamoDB key.
//!
//! Each id is a newtype with a private field: the only way to get one is `parse`, so a
//! value that holds a `DrawId` has already been checked, and a `#` (the key separator)
//! can never reach a key.

use std::fmt;

use super::text::{CharacterKind, RefusedCharacter, refused_in_id};

/// Why a string is not a valid id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{field}` must be 1 to {max_len} characters of {allowed}{}",
    refused.map_or_else(String::new, |r| format!(", not {r}"))
)]
pub struct InvalidId {
    pub field: &'static str,
    pub max_len: usize,
    pub allowed: &'static str,
    /// The character refused, when one was.
    pub refused: Option<RefusedCharacter>,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// What systems' and payment providers' ids hold: letters, digits, `.`, `_`, `:`, `-`.
fn is_token(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-')
}

/// What another system's reference holds: every character a URL path carries as it is
/// (RFC 3986's `pchar`: letters, digits, `-._~!$&'()*+,;=:@`), and `/`, which travels as
/// `%2F` in a path. Never `#` (the keys' separator), `%`, `?`, spaces or quotes.
fn is_reference(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/".contains(c)
}

/// A path segment of dots alone is one a URL resolves away (`.`, `..`): no id is one.
fn is_dots(value: &str) -> bool {
    value.bytes().all(|b| b == b'.')
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $field:literal, $max:literal, $allowed:literal, $pattern:literal, $accept:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub const FIELD: &'static str = $field;
            pub const MAX_LEN: usize = $max;
            /// The OpenAPI document's pattern of the id (a test compares each copy). It
            /// does not say that an id of dots alone is refused.
            pub const PATTERN: &'static str = $pattern;

            pub fn parse(value: &str) -> Result<Self, InvalidId> {
                if value.is_empty()
                    || value.len() > $max
                    || !value.chars().all($accept)
                    || is_dots(value)
                {
                    return Err(InvalidId {
                        field: $field,
                        max_len: $max,
                        allowed: $allowed,
                        refused: None,
                    });
                }
                Ok(Self(value.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

id_type!(
    /// A draw: `[A-Za-z0-9_-]{1,64}`.
    DrawId, "draw_id", 64, "letters, digits, '_' and '-'", "^[A-Za-z0-9_-]{1,64}$", is_word
);
id_type!(
    /// The idempotency key of a purchase: `[A-Za-z0-9._:-]{1,64}`, as payment providers
    /// write their ids (`pi_3Q.x`, `GPA.3371-4401`, `ch:7781`), not dots alone.
    PaymentId, "payment_id", 64, "letters, digits, '.', '_', ':' and '-', not dots alone",
    "^[A-Za-z0-9._:-]{1,64}$", is_token
);

id_type!(
    /// The idempotency key of a hold: `[A-Za-z0-9_-]{1,64}`.
    HoldId, "hold_id", 64, "letters, digits, '_' and '-'", "^[A-Za-z0-9_-]{1,64}$", is_word
);

id_type!(
    /// A numbering series: `[A-Za-z0-9_-]{1,32}`.
    SeriesId, "series_id", 32, "letters, digits, '_' and '-'", "^[A-Za-z0-9_-]{1,32}$", is_word
);
id_type!(
    /// The company whose numbers a series issues: `[A-Za-z0-9_-]{1,64}`. No two series of
    /// one issuer may render the same text.
    IssuerId, "issuer", 64, "letters, digits, '_' and '-'", "^[A-Za-z0-9_-]{1,64}$", is_word
);
id_type!(
    /// The system that posts orders: `[A-Za-z0-9._:-]{1,128}`, not dots alone.
    SourceId, "source", 128, "letters, digits, '.', '_', ':' and '-', not dots alone",
    "^[A-Za-z0-9._:-]{1,128}$", is_token
);
id_type!(
    /// The source's own reference of an order, unique per source across all series:
    /// 1 to 128 of letters, digits and `-._~!$&'()*+,;=:@/`, not dots alone (Odoo's
    /// `SO/2026/0001`, `PO-7781:v2`).
    ExternalRef, "external_ref", 128,
    "letters, digits and -._~!$&'()*+,;=:@/ (a '/' as %2F in a path), not dots alone",
    "^[A-Za-z0-9._~!$&'()*+,;=:@/-]{1,128}$", is_reference
);

/// Who paid: 1 to 256 characters (an e-mail address, a customer number), compared in
/// Unicode NFC. Refused: what free text refuses (control characters, line and paragraph
/// separators, bidirectional controls), characters that print as nothing or as a blank
/// other than the space (zero-width spaces and joiners, the soft hyphen, the byte-order
/// mark, no-break and ideographic spaces, the braille blank...), characters that Unicode
/// compatibility (NFKC) spells otherwise (fullwidth letters, ligatures), and whitespace at
/// either end: each let one payer pass for several while looking like one. Such ids are
/// refused rather than folded, so that every id accepted before keeps its key. Case
/// counts: the id is the integrator's own (an account number may differ from another by
/// case alone), so Tally cannot fold it; integrators should pass a stable account id, not
/// what a buyer typed. Free text may hold the key separator, so keys use its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PayerId(String);

impl PayerId {
    pub const FIELD: &'static str = "payer_id";
    pub const MAX_LEN: usize = 256;

    /// A payer id as a request gives it, in NFC.
    pub fn parse(value: &str) -> Result<Self, InvalidId> {
        let invalid = |refused| InvalidId {
            field: Self::FIELD,
            max_len: Self::MAX_LEN,
            allowed: "letters, digits, symbols and spaces (U+0020) between them, in the plainest spelling Unicode has",
            refused,
        };
        let normalized = icu_normalizer::ComposingNormalizerBorrowed::new_nfc().normalize(value);
        if normalized.is_empty() || normalized.chars().count() > Self::MAX_LEN {
            return Err(invalid(None));
        }
        if let Some(refused) = refused_in_id(&normalized).or_else(|| compatibility(&normalized)) {
            return Err(invalid(Some(refused)));
        }
        // Dots alone would leave a URL that names the payer (`..` turns a payer's
        // purchases into the draw's).
        if normalized.starts_with(' ') || normalized.ends_with(' ') || is_dots(&normalized) {
            return Err(invalid(None));
        }
        Ok(Self(normalized.into_owned()))
    }

    /// A payer id read back from the table, as it was stored (ids stored before the
    /// rules of [`PayerId::parse`] tightened keep reading).
    pub fn stored(value: &str) -> Self {
        Self(value.to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Hex SHA-256 of the id: what keys hold instead of the free text.
    pub fn key_part(&self) -> String {
        use sha2::{Digest, Sha256};
        super::hex::encode(&Sha256::digest(self.0.as_bytes()))
    }
}

/// The first character of `text` (in NFC) that Unicode compatibility spells otherwise,
/// when the whole text is not its own NFKC form.
fn compatibility(text: &str) -> Option<RefusedCharacter> {
    let nfkc = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc();
    if nfkc.is_normalized(text) {
        return None;
    }
    let mut buffer = [0; 4];
    let character = text
        .chars()
        .find(|c| !nfkc.is_normalized(c.encode_utf8(&mut buffer)))
        .unwrap_or_else(|| text.chars().next().unwrap_or(' '));
    Some(RefusedCharacter {
        character,
        kind: CharacterKind::Compatibility,
    })
}

impl fmt::Display for PayerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl IssuerId {
    /// The issuer of every series that names none: one for the whole deployment.
    pub fn deployment() -> Self {
        Self("default".to_owned())
    }
}

impl DrawId {
    /// A fresh random id such as `d-7kq2m9x4c1vz8b3n`.
    #[cfg(feature = "os-rng")]
    pub fn generate() -> Self {
        use rand::RngExt;
        const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
        let mut rng = rand::rng();
        let suffix: String = (0..16)
            .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
            .collect();
        Self(format!("d-{suffix}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_word_characters_up_to_the_limit() {
        assert!(DrawId::parse("summer-2026_A").is_ok());
        assert!(DrawId::parse(&"x".repeat(64)).is_ok());
    }

    #[test]
    fn rejects_separators_empty_and_overlong_ids() {
        for bad in ["", "a#b", "a b", "ü", "a/b", "a.b", &"x".repeat(65)] {
            let err = DrawId::parse(bad).unwrap_err();
            assert_eq!(err.field, "draw_id", "{bad:?}");
        }
    }

    #[test]
    fn references_take_what_other_systems_write_but_never_the_key_separator() {
        for kept in [
            "PO-7781:v2.1_a",
            "SO/2026/0001",
            "INV/2026/00001",
            "114-1234567-1234567",
            "a+b=c@d,e;f(g)!$&'*~",
        ] {
            assert!(ExternalRef::parse(kept).is_ok(), "{kept:?}");
        }
        assert!(SourceId::parse("erp-1").is_ok());
        for refused in ["a#b", "a b", "a%2Fb", "a?b", "\"a\"", "é", ".", "..", "..."] {
            assert!(ExternalRef::parse(refused).is_err(), "{refused:?}");
        }
        assert!(ExternalRef::parse("../etc").is_ok());
        assert!(SeriesId::parse(&"s".repeat(33)).is_err());
        assert!(SeriesId::parse("a.b").is_err());
    }

    #[test]
    fn payment_ids_take_what_payment_providers_send() {
        for kept in [
            "PAYID-123",
            "pi_3Q.x",
            "GPA.3371-4401-8860-12345",
            "ch:7781",
        ] {
            assert!(PaymentId::parse(kept).is_ok(), "{kept:?}");
        }
        for refused in ["a/b", "a#b", ".", "..", "a b"] {
            assert!(PaymentId::parse(refused).is_err(), "{refused:?}");
        }
        let err = PaymentId::parse("..").unwrap_err();
        assert!(err.to_string().contains("not dots alone"), "{err}");
    }

    #[test]
    fn payer_ids_are_free_text_without_control_characters_and_keys_hide_separators() {
        let payer = PayerId::parse("ann#1@example.com").unwrap();
        assert_eq!(payer.key_part().len(), 64);
        assert!(payer.key_part().chars().all(|c| c.is_ascii_hexdigit()));
        assert!(PayerId::parse(&"é".repeat(256)).is_ok());
        assert!(PayerId::parse("Ann Smith").is_ok());
        assert!(PayerId::parse("a.").is_ok());
        for bad in ["", "a\nb", &"x".repeat(257), ".", ".."] {
            assert_eq!(
                PayerId::parse(bad).unwrap_err().field,
                "payer_id",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_payer_cannot_pass_for_several_with_invisible_or_reordering_characters() {
        for dodge in [
            "ann@example.com\u{200B}",
            " ann@example.com",
            "ann@example.com ",
            "ann@example.com\u{2028}",
            "\u{202E}ann@example.com",
            "ann\u{2066}@example.com",
            "an\u{00AD}n@example.com",
            "\u{FEFF}ann@example.com",
            "ann@example.com\u{E0041}",
            "\u{3000}ann@example.com",
            "cust\u{2800}",
            "cust\u{00A0}1",
            "cust\u{3000}1",
            "cust\u{2003}1",
            "ann@ex\u{200B}ample.com",
            "\u{FF43}ust",
            "ﬁnance@example.com",
            "cust\u{00B2}",
        ] {
            assert!(PayerId::parse(dodge).is_err(), "{dodge:?} was accepted");
        }
    }

    #[test]
    fn a_refused_payer_id_names_the_character_and_what_it_is() {
        let braille = PayerId::parse("cust\u{2800}").unwrap_err();
        assert_eq!(
            braille.refused,
            Some(RefusedCharacter {
                character: '\u{2800}',
                kind: CharacterKind::Invisible
            })
        );
        assert!(braille.to_string().contains("not U+2800"), "{braille}");
        let fullwidth = PayerId::parse("c\u{FF55}st").unwrap_err();
        assert_eq!(
            fullwidth.refused.map(|r| (r.character, r.kind)),
            Some(('\u{FF55}', CharacterKind::Compatibility))
        );
        // What NFC composes is one payer, as before; plain text of any script stays.
        for kept in [
            "Ann Smith",
            "ren\u{00E9}@example.com",
            "東京-42",
            "Ωmega",
            "مرحبا",
        ] {
            assert!(PayerId::parse(kept).is_ok(), "{kept:?}");
        }
    }

    #[test]
    fn payer_ids_are_compared_in_nfc_and_case_counts() {
        // "é" composed and as "e" + combining acute are one payer.
        let composed = PayerId::parse("ren\u{00E9}@example.com").unwrap();
        let decomposed = PayerId::parse("rene\u{0301}@example.com").unwrap();
        assert_eq!(composed, decomposed);
        assert_eq!(composed.key_part(), decomposed.key_part());
        assert_eq!(decomposed.as_str(), "ren\u{00E9}@example.com");
        assert_ne!(
            PayerId::parse("ANN@example.com").unwrap(),
            PayerId::parse("ann@example.com").unwrap()
        );
    }

    #[test]
    fn generated_draw_ids_parse_and_differ() {
        let a = DrawId::generate();
        let b = DrawId::generate();
        assert_ne!(a, b);
        assert_eq!(DrawId::parse(a.as_str()), Ok(a));
    }
}
