//! Lowercase hex, as every digest, seed, key and signature is written in the answers.

pub fn encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex digits in pairs, either case; `None` for anything else.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Exactly 32 bytes of hex: a seed or a SHA-256.
pub fn decode32(text: &str) -> Option<[u8; 32]> {
    decode(text)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_odd_or_foreign_text() {
        assert_eq!(encode(&[0, 0xab, 0x10]), "00ab10");
        assert_eq!(decode("00AB10"), Some(vec![0, 0xab, 0x10]));
        assert_eq!(decode("abc"), None);
        assert_eq!(decode("zz"), None);
        assert_eq!(decode("+1"), None);
        assert_eq!(decode32(&"7".repeat(64)), Some([0x77; 32]));
        assert_eq!(decode32("77"), None);
    }
}
