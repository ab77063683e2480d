//! The draw seed: a secret drawn at creation whose SHA-256 is published at once
//! (`seed_commitment`) and which is revealed only with the winners (commit, then reveal).

use std::fmt;

use sha2::{Digest, Sha256};

use super::hex;

/// 32 secret bytes. Its `Debug` output never shows them. Nothing secret is ever derived
/// from it: it becomes public with the winners.
#[derive(Clone, PartialEq, Eq)]
pub struct DrawSeed([u8; 32]);

impl DrawSeed {
    pub const LEN: usize = 32;

    #[cfg(feature = "os-rng")]
    pub fn generate() -> Self {
        use rand::RngExt;
        let mut bytes = [0u8; Self::LEN];
        rand::rng().fill(&mut bytes);
        Self(bytes)
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Hex SHA-256 of the seed: published with the draw from its creation on.
    pub fn commitment(&self) -> String {
        hex::encode(&Sha256::digest(self.0))
    }

    /// The seed in hex, as the winners reveal it.
    pub fn reveal(&self) -> String {
        hex::encode(&self.0)
    }
}

impl fmt::Debug for DrawSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DrawSeed(<secret>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commitment_is_the_sha256_of_the_seed_and_debug_hides_it() {
        let seed = DrawSeed([0u8; 32]);
        // SHA-256 of 32 zero bytes.
        assert_eq!(
            seed.commitment(),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
        );
        assert_eq!(seed.reveal(), "00".repeat(32));
        assert_eq!(format!("{seed:?}"), "DrawSeed(<secret>)");
        assert_ne!(DrawSeed::generate(), DrawSeed::generate());
    }
}
