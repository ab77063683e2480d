//! Keyed pseudorandom permutation of `0..size`.
//!
//! A balanced Feistel network over the smallest even-bit power-of-two domain that holds
//! `size`, with SipHash-1-3 keyed by the draw's secret as round function, and cycle-walking
//! to stay inside `0..size`. The domain is at most four times `size`, so a lookup walks
//! fewer than four times on average. Without the key the order cannot be predicted.

use std::fmt;

const ROUNDS: u32 = 8;

/// The per-draw secret. Its `Debug` output never shows the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct PermutationKey([u8; 16]);

impl PermutationKey {
    pub const LEN: usize = 16;

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

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for PermutationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PermutationKey(<secret>)")
    }
}

/// A bijection on `0..size`.
#[derive(Clone)]
pub struct Permutation {
    size: u64,
    half_bits: u32,
    half_mask: u64,
    k0: u64,
    k1: u64,
}

impl Permutation {
    /// `size` must be at least 1.
    pub fn new(size: u64, key: &PermutationKey) -> Self {
        assert!(size >= 1, "a permutation needs a non-empty domain");
        let bits = u64::BITS - (size - 1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let (k0, k1) = key.0.split_at(8);
        Self {
            size,
            half_bits,
            half_mask: (1u64 << half_bits) - 1,
            k0: u64::from_le_bytes(k0.try_into().expect("8 bytes")),
            k1: u64::from_le_bytes(k1.try_into().expect("8 bytes")),
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The image of `index`, which must be below `size`.
    pub fn apply(&self, index: u64) -> u64 {
        assert!(index < self.size, "index {index} outside 0..{}", self.size);
        let mut value = index;
        loop {
            value = self.encrypt(value);
            if value < self.size {
                return value;
            }
        }
    }

    /// The index whose image is `image`, which must be below `size`: the network run
    /// backwards, walking the same cycle the other way.
    pub fn invert(&self, image: u64) -> u64 {
        assert!(image < self.size, "image {image} outside 0..{}", self.size);
        let mut value = image;
        loop {
            value = self.decrypt(value);
            if value < self.size {
                return value;
            }
        }
    }

    fn decrypt(&self, value: u64) -> u64 {
        let mut left = value >> self.half_bits;
        let mut right = value & self.half_mask;
        for round in (0..ROUNDS).rev() {
            let earlier = left;
            left = right ^ self.round_function(round, earlier);
            right = earlier;
        }
        (left << self.half_bits) | right
    }

    fn encrypt(&self, value: u64) -> u64 {
        let mut left = value >> self.half_bits;
        let mut right = value & self.half_mask;
        for round in 0..ROUNDS {
            let mixed = left ^ self.round_function(round, right);
            left = right;
            right = mixed;
        }
        (left << self.half_bits) | right
    }

    fn round_function(&self, round: u32, value: u64) -> u64 {
        siphash13_u32_u64(self.k0, self.k1, round, value) & self.half_mask
    }
}

/// SipHash-1-3 of the 12 bytes `round` (little-endian) then `value` (little-endian): what
/// `SipHasher13` gives for `write_u32(round); write_u64(value)`, without its byte buffer.
/// A draw's eligible list evaluates the permutation for every ticket sold (about 130
/// million rounds for 10,000,000 tickets), where the buffer costs most of the time.
fn siphash13_u32_u64(k0: u64, k1: u64, round: u32, value: u64) -> u64 {
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    let first = u64::from(round) | (value << 32);
    let last = (value >> 32) | (12 << 56);
    for block in [first, last] {
        v[3] ^= block;
        sip_round(&mut v);
        v[0] ^= block;
    }
    v[2] ^= 0xff;
    for _ in 0..3 {
        sip_round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

#[inline(always)]
fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: u8) -> PermutationKey {
        PermutationKey([seed; 16])
    }

    fn assert_bijection(size: u64, key: &PermutationKey) {
        let permutation = Permutation::new(size, key);
        let mut seen = vec![false; size as usize];
        for index in 0..size {
            let image = permutation.apply(index) as usize;
            assert!(!seen[image], "size {size}: {image} hit twice");
            seen[image] = true;
        }
    }

    #[test]
    fn is_a_bijection_for_every_size_up_to_2000() {
        let key = PermutationKey::generate();
        for size in 1..=2_000 {
            assert_bijection(size, &key);
        }
    }

    #[test]
    fn is_a_bijection_for_large_and_power_of_two_sizes() {
        for size in [4_096, 65_536, 65_537, 1_000_003, 2_097_152] {
            assert_bijection(size, &key(7));
        }
    }

    #[test]
    fn invert_undoes_apply_for_every_index() {
        for size in [1, 2, 3, 17, 1_000, 4_096, 65_537] {
            let permutation = Permutation::new(size, &key(5));
            for index in 0..size {
                assert_eq!(
                    permutation.invert(permutation.apply(index)),
                    index,
                    "size {size}"
                );
            }
        }
    }

    #[test]
    fn different_keys_give_different_orders() {
        let a = Permutation::new(10_000, &key(1));
        let b = Permutation::new(10_000, &key(2));
        let same = (0..10_000).filter(|&i| a.apply(i) == b.apply(i)).count();
        // Two independent random permutations agree on about one position.
        assert!(same < 20, "{same} positions agree");
    }

    #[test]
    fn is_not_the_identity_or_a_shift() {
        let permutation = Permutation::new(1_000, &key(3));
        let fixed = (0..1_000).filter(|&i| permutation.apply(i) == i).count();
        assert!(fixed < 10, "{fixed} fixed points");
        let first_ten: Vec<u64> = (0..10).map(|i| permutation.apply(i)).collect();
        assert!(first_ten.windows(2).any(|w| w[1] != w[0] + 1));
    }

    #[test]
    fn early_sales_are_spread_over_the_whole_range() {
        // T6: the first 10% of a 100,000-ticket draw, counted in 20 equal bins of the number
        // range: a chi-square with 19 degrees of freedom stays below 43.8 (p = 0.001) for a
        // uniform spread, and is in the thousands for clustered output.
        let size = 100_000u64;
        let sold = size / 10;
        let bins = 20u64;
        for seed in 0..5u8 {
            let permutation = Permutation::new(size, &key(seed));
            let mut counts = vec![0u64; bins as usize];
            for index in 0..sold {
                counts[(permutation.apply(index) * bins / size) as usize] += 1;
            }
            let expected = (sold / bins) as f64;
            let chi_square: f64 = counts
                .iter()
                .map(|&c| (c as f64 - expected).powi(2) / expected)
                .sum();
            assert!(chi_square < 43.8, "seed {seed}: chi-square {chi_square:.1}");
        }
    }

    #[test]
    fn the_round_function_is_siphash13_of_the_round_and_the_value() {
        use rand::RngExt;
        use siphasher::sip::SipHasher13;
        use std::hash::Hasher;
        let mut rng = rand::rng();
        for _ in 0..10_000 {
            let (k0, k1, round, value) = (rng.random(), rng.random(), rng.random(), rng.random());
            let mut hasher = SipHasher13::new_with_keys(k0, k1);
            hasher.write_u32(round);
            hasher.write_u64(value);
            assert_eq!(siphash13_u32_u64(k0, k1, round, value), hasher.finish());
        }
    }

    #[test]
    fn debug_output_hides_the_key() {
        let shown = format!("{:?}", key(0xAB));
        assert!(!shown.contains("171") && !shown.to_lowercase().contains("ab"));
    }
}
