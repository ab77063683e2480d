//! The split of a draw's permutation indices into stripes.

use std::ops::Range;

use super::STRIPE_WRITE_TICKETS;

/// The permutation indices `0..total` cut into `stripes` consecutive ranges, opened in
/// index order and shrinking along it, from 1.75 times the mean size to a quarter: early
/// buyers get long runs (few claims), and the end of a draw, where buyers share stripes,
/// is short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripeLayout {
    total: u64,
    stripes: u32,
}

impl StripeLayout {
    pub fn new(total: u64, stripes: u32) -> Self {
        Self { total, stripes }
    }

    /// The fewest stripes, largest first, that hold `quantity` tickets at most
    /// `STRIPE_WRITE_TICKETS` from each: all of them in a smaller draw, one more than it
    /// has where only that limit stands in the way.
    pub fn stripes_to_hold(&self, quantity: u64) -> u32 {
        let mut lengths: Vec<u64> = (0..self.stripes).map(|s| self.len(s)).collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        let mut held = 0;
        let fewest = lengths.iter().position(|length| {
            held += length.min(&STRIPE_WRITE_TICKETS);
            held >= quantity
        });
        match fewest {
            Some(index) => index as u32 + 1,
            None if self.total < quantity => self.stripes,
            None => self.stripes + 1,
        }
    }

    pub fn stripes(&self) -> u32 {
        self.stripes
    }

    /// Start of stripe `i`: `i + (total - stripes) * F(i / stripes)` with
    /// `F(x) = 1.75x - 0.75x²`, so that every stripe holds at least one index.
    fn start(&self, i: u32) -> u64 {
        let (i, s) = (u128::from(i), u128::from(self.stripes));
        let spare = u128::from(self.total - u64::from(self.stripes));
        let start = i + spare * (7 * i * s - 3 * i * i) / (4 * s * s);
        start as u64
    }

    pub fn indices(&self, stripe: u32) -> Range<u64> {
        self.start(stripe)..self.start(stripe + 1)
    }

    /// The stripe that holds permutation index `index` (below `total`), and its offset:
    /// the last stripe starting at or below it (starts grow with the stripe).
    pub fn locate(&self, index: u64) -> (u32, u64) {
        let (mut low, mut high) = (0u32, self.stripes);
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if self.start(middle) <= index {
                low = middle;
            } else {
                high = middle;
            }
        }
        (low, index - self.start(low))
    }

    pub fn len(&self, stripe: u32) -> u64 {
        self.start(stripe + 1) - self.start(stripe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripes_cover_every_index_exactly_once_and_locate_finds_each() {
        for (total, stripes) in [
            (1, 1),
            (10, 3),
            (1_000, 7),
            (10_000, 111),
            (10_000_000, 1_024),
        ] {
            let layout = StripeLayout::new(total, stripes);
            let mut next = 0;
            for s in 0..stripes {
                let range = layout.indices(s);
                assert_eq!(range.start, next);
                assert!(range.end > range.start);
                next = range.end;
            }
            assert_eq!(next, total);
            for index in (0..total).step_by(1 + total as usize / 10_000) {
                let (stripe, offset) = layout.locate(index);
                assert!(offset < layout.len(stripe));
                assert_eq!(layout.indices(stripe).start + offset, index);
            }
        }
    }

    #[test]
    fn stripes_shrink_in_the_order_they_are_opened() {
        let layout = StripeLayout::new(10_000, 100);
        assert_eq!(layout.len(0), 173);
        assert_eq!(layout.len(99), 27);
        assert!((1..100).all(|s| layout.len(s) <= layout.len(s - 1)));
    }

    #[test]
    fn the_fewest_stripes_holding_a_purchase_are_the_largest() {
        let layout = StripeLayout::new(10_000, 100);
        assert_eq!(layout.stripes_to_hold(1), 1);
        assert_eq!(layout.stripes_to_hold(44), 1);
        assert_eq!(layout.stripes_to_hold(45), 2);
        assert_eq!(layout.stripes_to_hold(500), 12);
        // One stripe of 1,000: a purchase of 45 can never be written.
        assert_eq!(StripeLayout::new(1_000, 1).stripes_to_hold(45), 2);
        assert_eq!(StripeLayout::new(1_024, 1_024).stripes_to_hold(50), 50);
        assert_eq!(StripeLayout::new(5, 5).stripes_to_hold(50), 5);
    }
}
