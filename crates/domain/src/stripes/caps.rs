//! How many hold marks each stripe may carry: the draw's share for live holds
//! (`max_held_percent`), split over the stripes in proportion to their sizes, and never
//! more than one stripe item holds (a limit of the store, given as a parameter).

use super::StripeLayout;

/// The most hold marks of each stripe: `percent` of the draw's numbers, shared by largest
/// remainders so that the stripes' caps add up to exactly that share (rounded down), each
/// at most `most`. A hold counts its numbers against these caps in its own transaction,
/// so the draw never has more live held numbers than their sum.
pub fn held_caps(layout: StripeLayout, percent: u8, most: u64) -> Vec<u64> {
    let stripes = layout.stripes();
    let total: u64 = (0..stripes).map(|s| layout.len(s)).sum();
    let share = u128::from(total) * u128::from(percent) / 100;
    // Each stripe's exact part is share * len / total: its whole part, then the largest
    // remainders one more each until the parts add up to the share.
    let parts: Vec<(u64, u128)> = (0..stripes)
        .map(|s| {
            let exact = share * u128::from(layout.len(s));
            let whole = exact / u128::from(total);
            (whole as u64, exact % u128::from(total))
        })
        .collect();
    let mut caps: Vec<u64> = parts.iter().map(|p| p.0).collect();
    let given: u64 = caps.iter().sum();
    let mut order: Vec<usize> = (0..caps.len()).collect();
    order.sort_by(|&a, &b| parts[b].1.cmp(&parts[a].1).then(a.cmp(&b)));
    for &stripe in order.iter().take((share as u64 - given) as usize) {
        caps[stripe] += 1;
    }
    caps.iter().map(|&cap| cap.min(most)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::DrawConfig;

    #[test]
    fn the_caps_add_up_to_the_share_of_the_draw_and_follow_the_stripe_sizes() {
        for (total, stripes, percent) in
            [(1_000, 64, 25), (100, 12, 25), (7, 3, 50), (60_000, 1, 10)]
        {
            let layout = DrawConfig::new(total, None, Some(stripes))
                .unwrap()
                .layout();
            let caps = held_caps(layout, percent, u64::MAX);
            assert_eq!(caps.iter().sum::<u64>(), total * u64::from(percent) / 100);
            for s in 0..stripes {
                let exact = layout.len(s) as f64 * f64::from(percent) / 100.0;
                assert!((caps[s as usize] as f64 - exact).abs() < 1.0, "{s}");
            }
        }
        let all = held_caps(StripeLayout::new(500, 5), 100, u64::MAX);
        assert_eq!(
            all,
            (0..5)
                .map(|s| StripeLayout::new(500, 5).len(s))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn no_stripe_carries_more_marks_than_its_item_holds() {
        let caps = held_caps(StripeLayout::new(1_000_000, 4), 50, 256);
        assert_eq!(caps, vec![256; 4]);
    }
}
