//! The eligible list of `tally-draw-v2` and its public form: a bitmap of `total_tickets`
//! bits where bit `i` stands for ticket `i + 1`, in byte `i / 8` at bit `i % 8` counted
//! from the least significant bit. The padding bits of the last byte are zero.

use sha2::{Digest, Sha256};

/// Why a bitmap or a list of voided tickets does not fit the draw.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EligibleError {
    #[error("the bitmap has {actual} bytes; {total} tickets take {expected}")]
    Length {
        total: u64,
        expected: usize,
        actual: usize,
    },
    #[error("the bitmap sets bits past ticket {total}")]
    Padding { total: u64 },
    #[error("voided ticket {0} was never sold")]
    VoidedNotSold(u64),
}

/// The tickets that may win: sold and not voided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EligibleSet {
    total: u64,
    /// Bit `i % 64` of word `i / 64` is ticket `i + 1`: little-endian words, so their bytes
    /// in order are the public bitmap.
    words: Vec<u64>,
}

impl EligibleSet {
    /// A set of `total` tickets from its words: bit `i % 64` of word `i / 64` is ticket
    /// `i + 1`.
    pub(super) fn from_words(total: u64, words: Vec<u64>) -> Self {
        debug_assert_eq!(words.len() as u64, total.div_ceil(64));
        Self { total, words }
    }

    /// Takes voided tickets out; each must have been sold.
    pub fn remove_voided(&mut self, voided: &[u64]) -> Result<(), EligibleError> {
        for &ticket in voided {
            if !self.contains(ticket) {
                return Err(EligibleError::VoidedNotSold(ticket));
            }
            let bit = ticket - 1;
            self.words[(bit / 64) as usize] &= !(1 << (bit % 64));
        }
        Ok(())
    }

    /// Reads the public form, refusing a wrong length or set padding bits.
    pub fn from_bitmap(total: u64, bytes: &[u8]) -> Result<Self, EligibleError> {
        let expected = total.div_ceil(8) as usize;
        if bytes.len() != expected {
            return Err(EligibleError::Length {
                total,
                expected,
                actual: bytes.len(),
            });
        }
        let words: Vec<u64> = bytes
            .chunks(8)
            .map(|chunk| {
                let mut word = [0u8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                u64::from_le_bytes(word)
            })
            .collect();
        let set = Self { total, words };
        if !total.is_multiple_of(64) && set.words.last().is_some_and(|w| w >> (total % 64) != 0) {
            return Err(EligibleError::Padding { total });
        }
        Ok(set)
    }

    /// The public form: `ceil(total / 8)` bytes.
    pub fn to_bitmap(&self) -> Vec<u8> {
        let mut bytes: Vec<u8> = self.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.truncate(self.total.div_ceil(8) as usize);
        bytes
    }

    /// SHA-256 of exactly the bytes of the public form.
    pub fn digest(&self) -> [u8; 32] {
        Sha256::digest(self.to_bitmap()).into()
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    pub fn contains(&self, ticket: u64) -> bool {
        (1..=self.total).contains(&ticket) && {
            let bit = ticket - 1;
            self.words[(bit / 64) as usize] & (1 << (bit % 64)) != 0
        }
    }

    /// The eligible tickets in ascending order: the list the digest stands for.
    pub fn tickets(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros();
                    rest &= rest - 1;
                    w as u64 * 64 + u64::from(bit) + 1
                })
            })
        })
    }

    pub(super) fn words(&self) -> &[u64] {
        &self.words
    }
}

/// Words per block of the running counts that find the n-th remaining ticket.
const BLOCK_WORDS: usize = 64;

/// The eligible tickets not picked yet, in ascending order, with counts per block of
/// 4,096 tickets, so that finding the n-th costs a pass over the blocks, not the tickets.
pub(super) struct Remaining {
    words: Vec<u64>,
    blocks: Vec<u32>,
    left: u64,
}

impl Remaining {
    pub(super) fn new(set: &EligibleSet) -> Self {
        let words = set.words().to_vec();
        let blocks = words
            .chunks(BLOCK_WORDS)
            .map(|block| block.iter().map(|w| w.count_ones()).sum())
            .collect();
        Self {
            left: set.count(),
            words,
            blocks,
        }
    }

    pub(super) fn len(&self) -> u64 {
        self.left
    }

    /// Removes and returns the `index`-th remaining ticket (0-based, ascending).
    pub(super) fn take(&mut self, index: u64) -> u64 {
        assert!(
            index < self.left,
            "index {index} of {} remaining",
            self.left
        );
        let mut rest = index;
        let mut block = 0;
        while rest >= u64::from(self.blocks[block]) {
            rest -= u64::from(self.blocks[block]);
            block += 1;
        }
        let mut word = block * BLOCK_WORDS;
        while rest >= u64::from(self.words[word].count_ones()) {
            rest -= u64::from(self.words[word].count_ones());
            word += 1;
        }
        let mut bits = self.words[word];
        for _ in 0..rest {
            bits &= bits - 1;
        }
        let bit = bits.trailing_zeros();
        self.words[word] &= !(1 << bit);
        self.blocks[block] -= 1;
        self.left -= 1;
        word as u64 * 64 + u64::from(bit) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::winners::sold::tests::sold_set;

    #[test]
    fn the_bitmap_is_lsb_first_in_ticket_order_and_round_trips() {
        let mut set = sold_set(12, &[0..6, 6..12]);
        set.remove_voided(&[2, 9, 10, 11, 12]).unwrap();
        // Tickets 1, 3..=8: byte 0 = 0b1111_1101; byte 1 holds tickets 9..=12 and padding.
        assert_eq!(set.to_bitmap(), vec![0b1111_1101, 0]);
        assert_eq!(EligibleSet::from_bitmap(12, &set.to_bitmap()).unwrap(), set);
        assert_eq!(
            EligibleSet::from_bitmap(12, &[0xff, 0x10]),
            Err(EligibleError::Padding { total: 12 })
        );
        assert!(matches!(
            EligibleSet::from_bitmap(12, &[0xff]),
            Err(EligibleError::Length { expected: 2, .. })
        ));
        assert_eq!(
            set.remove_voided(&[2]),
            Err(EligibleError::VoidedNotSold(2))
        );
    }

    #[test]
    fn remaining_hands_out_the_nth_ticket_in_ascending_order() {
        let total = 20_000u64;
        let set = sold_set(total, &[0..7_000, 12_000..15_000]);
        let mut list: Vec<u64> = set.tickets().collect();
        let mut remaining = Remaining::new(&set);
        for index in [0u64, 9_999, 4_321, 17, 5_000, 0] {
            let expected = list.remove(index.min(list.len() as u64 - 1) as usize);
            assert_eq!(remaining.take(index.min(remaining.len() - 1)), expected);
        }
        assert_eq!(remaining.len(), list.len() as u64);
    }
}
