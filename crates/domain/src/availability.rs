//! The grid of a number picker: which numbers of a draw are free right now, as a bitmap in
//! the encoding of the eligible list (bit `n - 1` stands for number `n`, least significant
//! bit first; here a set bit means free). Pure logic: no I/O.

use std::num::NonZeroUsize;
use std::ops::Range;

use super::permutation::Permutation;
use super::stripes::{Chosen, Held, Standing, StripeCursors, StripeLayout, standings};
use super::winners::EligibleSet;

/// Free, held and sold numbers of a draw at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Availability {
    pub total: u64,
    pub free: u64,
    /// Numbers held by live holds.
    pub held: u64,
    /// Sold numbers, voided ones included (they are never sold again).
    pub sold: u64,
    /// `ceil(total / 8)` bytes; a set bit is a free number.
    pub bitmap: Vec<u8>,
}

/// What the table holds of one stripe: its cursors, chosen and held offsets.
pub type StripeMarks = (StripeCursors, Chosen, Held);

/// The free numbers at `now` (Unix ms), from each stripe's cursors, chosen and held
/// offsets. Numbers are the permutation's images of indices, so the smaller of the free
/// and the other indices is evaluated (on `threads` threads) and the bitmap inverted when
/// those were the others.
pub fn availability(
    permutation: &Permutation,
    layout: StripeLayout,
    stripes: &[StripeMarks],
    now: i64,
    threads: NonZeroUsize,
) -> Availability {
    let total = permutation.size();
    let mut free: Vec<Range<u64>> = Vec::new();
    let mut taken: Vec<Range<u64>> = Vec::new();
    let mut held = 0;
    for (stripe, (cursors, chosen, holds)) in (0..).zip(stripes) {
        let start = layout.indices(stripe).start;
        for (run, standing) in standings(layout.len(stripe), *cursors, chosen, holds, now) {
            let range = start + run.start..start + run.end;
            match standing {
                Standing::Free => free.push(range),
                Standing::Held => {
                    held += run.end - run.start;
                    taken.push(range);
                }
                Standing::Sold => taken.push(range),
            }
        }
    }
    let count = |ranges: &[Range<u64>]| -> u64 { ranges.iter().map(|r| r.end - r.start).sum() };
    let free_count = count(&free);
    let bitmap = if free_count <= total / 2 {
        EligibleSet::sold(permutation, &free, threads).to_bitmap()
    } else {
        let mut bytes = EligibleSet::sold(permutation, &taken, threads).to_bitmap();
        for byte in &mut bytes {
            *byte = !*byte;
        }
        if !total.is_multiple_of(8)
            && let Some(last) = bytes.last_mut()
        {
            *last &= (1u8 << (total % 8)) - 1;
        }
        bytes
    };
    Availability {
        total,
        free: free_count,
        held,
        sold: total - free_count - held,
        bitmap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permutation::PermutationKey;

    fn free_numbers(availability: &Availability) -> Vec<u64> {
        (0..availability.total)
            .filter(|i| availability.bitmap[(i / 8) as usize] >> (i % 8) & 1 == 1)
            .map(|i| i + 1)
            .collect()
    }

    #[test]
    fn free_numbers_are_those_ahead_of_both_cursors_and_not_chosen() {
        let total = 1_003;
        let layout = StripeLayout::new(total, 5);
        let permutation = Permutation::new(total, &PermutationKey::from_bytes(&[2; 16]).unwrap());
        let one = NonZeroUsize::MIN;
        // Little sold (free numbers evaluated) and much sold (sold ones evaluated).
        for sold_share in [5u64, 95] {
            let stripes: Vec<StripeMarks> = (0..5)
                .map(|s| {
                    let len = layout.len(s);
                    let bottom = len * sold_share / 200;
                    let top = len * sold_share / 200;
                    let chosen = Chosen::from([bottom, bottom + 2, len - top - 1]);
                    (StripeCursors { bottom, top }, chosen, Held::new())
                })
                .collect();
            let grid = availability(&permutation, layout, &stripes, 0, one);
            let mut expected = Vec::new();
            for (s, (cursors, chosen, _)) in (0..).zip(&stripes) {
                let indices = layout.indices(s);
                for offset in cursors.bottom..layout.len(s) - cursors.top {
                    if !chosen.contains(&offset) {
                        expected.push(permutation.apply(indices.start + offset) + 1);
                    }
                }
            }
            expected.sort_unstable();
            assert_eq!(free_numbers(&grid), expected, "{sold_share}% sold");
            assert_eq!(grid.free, expected.len() as u64);
            assert_eq!(grid.free + grid.sold, total);
            assert_eq!(grid.bitmap.len(), 126);
            // The padding bits of the last byte stay clear.
            assert_eq!(grid.bitmap[125] >> 3, 0);
        }
    }

    #[test]
    fn a_sold_out_draw_has_no_free_number_and_a_new_one_all() {
        let total = 100;
        let layout = StripeLayout::new(total, 4);
        let permutation = Permutation::new(total, &PermutationKey::from_bytes(&[3; 16]).unwrap());
        let new: Vec<StripeMarks> = (0..4)
            .map(|_| (StripeCursors::default(), Chosen::new(), Held::new()))
            .collect();
        let grid = availability(&permutation, layout, &new, 0, NonZeroUsize::MIN);
        assert_eq!((grid.free, free_numbers(&grid).len()), (100, 100));
        let full: Vec<StripeMarks> = (0..4)
            .map(|s| {
                (
                    StripeCursors {
                        bottom: layout.len(s),
                        top: 0,
                    },
                    Chosen::new(),
                    Held::new(),
                )
            })
            .collect();
        let grid = availability(&permutation, layout, &full, 0, NonZeroUsize::MIN);
        assert_eq!((grid.free, grid.sold), (0, 100));
        assert!(grid.bitmap.iter().all(|&b| b == 0));
    }
}
