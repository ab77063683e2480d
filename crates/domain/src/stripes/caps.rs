//! How many hold marks each stripe may carry: the draw's share for live holds
//! (`max_held_percent`) split in proportion to the stripes' sizes.

use std::cmp::Reverse;

use super::StripeLayout;

/// The most hold marks of each stripe: `percent` of the draw's numbers shared by largest
/// remainders (the caps add up to that share, rounded down), each at most `most`. A hold
/// counts against them in its own transaction, so live held numbers never pass their sum.
pub fn held_caps(layout: StripeLayout, percent: u8, most: u64) -> Vec<u64> {
    let lens: Vec<u128> = (0..layout.stripes())
        .map(|s| u128::from(layout.len(s)))
        .collect();
    let total: u128 = lens.iter().sum();
    let share = total * u128::from(percent) / 100;
    // Each stripe's exact part is share * len / total.
    let mut caps: Vec<u128> = lens.iter().map(|len| share * len / total).collect();
    let mut order: Vec<usize> = (0..lens.len()).collect();
    order.sort_by_key(|&s| Reverse(share * lens[s] % total));
    let left = share - caps.iter().sum::<u128>();
    for &stripe in order.iter().take(left as usize) {
        caps[stripe] += 1;
    }
    caps.into_iter().map(|cap| (cap as u64).min(most)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caps_add_up_to_the_share_of_the_draw_and_follow_the_stripe_sizes() {
        for (total, stripes, percent) in [
            (1_000, 64, 25),
            (100, 12, 25),
            (7, 3, 50),
            (60_000, 1, 10),
            (500, 5, 100),
        ] {
            let layout = StripeLayout::new(total, stripes);
            let caps = held_caps(layout, percent, u64::MAX);
            assert_eq!(caps.iter().sum::<u64>(), total * u64::from(percent) / 100);
            for s in 0..stripes {
                let exact = layout.len(s) as f64 * f64::from(percent) / 100.0;
                assert!((caps[s as usize] as f64 - exact).abs() < 1.0, "{s}");
            }
        }
        // No stripe carries more marks than its item holds.
        assert_eq!(
            held_caps(StripeLayout::new(1_000_000, 4), 50, 256),
            vec![256; 4]
        );
    }
}
