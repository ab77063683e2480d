//! The sold tickets of a closed draw as an eligible set: the images of the sold
//! permutation indices under the draw's permutation. Only Tally computes this; verifiers
//! read the published bitmap instead.

use std::num::NonZeroUsize;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use super::eligible::EligibleSet;
use crate::permutation::Permutation;

impl EligibleSet {
    /// The sold tickets: the images under `permutation` of the sold permutation indices,
    /// plus one, computed on `threads` threads.
    pub fn sold(permutation: &Permutation, sold: &[Range<u64>], threads: NonZeroUsize) -> Self {
        let total = permutation.size();
        let words: Vec<AtomicU64> = (0..total.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|scope| {
            for part in split(sold, threads.get()) {
                let words = &words;
                scope.spawn(move || {
                    for index in part.into_iter().flatten() {
                        let bit = permutation.apply(index);
                        words[(bit / 64) as usize].fetch_or(1 << (bit % 64), Ordering::Relaxed);
                    }
                });
            }
        });
        Self::from_words(
            total,
            words.into_iter().map(AtomicU64::into_inner).collect(),
        )
    }
}

/// Cuts the sold ranges into `parts` runs of about equal length.
fn split(ranges: &[Range<u64>], parts: usize) -> Vec<Vec<Range<u64>>> {
    let total: u64 = ranges.iter().map(|r| r.end - r.start).sum();
    let share = total.div_ceil(parts as u64).max(1);
    let mut out = vec![Vec::new()];
    let mut filled = 0;
    for range in ranges {
        let mut start = range.start;
        while start < range.end {
            if filled == share {
                out.push(Vec::new());
                filled = 0;
            }
            let end = range.end.min(start + (share - filled));
            out.last_mut().expect("never empty").push(start..end);
            filled += end - start;
            start = end;
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::permutation::PermutationKey;

    fn threads(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    /// The tickets that `sold` permutation indices of a draw of `total` stand for, under
    /// a fixed key.
    pub(crate) fn sold_set(total: u64, sold: &[Range<u64>]) -> EligibleSet {
        let permutation = Permutation::new(total, &PermutationKey::from_bytes(&[4; 16]).unwrap());
        EligibleSet::sold(&permutation, sold, threads(2))
    }

    #[test]
    fn sold_tickets_are_the_images_of_the_sold_indices_on_any_number_of_threads() {
        let permutation = Permutation::new(1_000, &PermutationKey::from_bytes(&[4; 16]).unwrap());
        let sold = [0..10, 500..510, 990..1_000];
        let expected: Vec<u64> = {
            let mut t: Vec<u64> = sold
                .iter()
                .flat_map(|r| r.clone())
                .map(|i| permutation.apply(i) + 1)
                .collect();
            t.sort();
            t
        };
        for n in [1, 2, 3, 7] {
            let set = EligibleSet::sold(&permutation, &sold, threads(n));
            assert_eq!(set.tickets().collect::<Vec<_>>(), expected, "{n} threads");
            assert_eq!(set.count(), 30);
        }
    }
}
