//! The targets `make bench` reads its figures against, each declared once here: a test
//! checks that docs/benchmarks.md, and the README's T7, state the same. They are
//! reported, never enforced.

use std::time::Duration;

/// Tickets: DynamoDB requests per purchase over the sell-out, every request counted.
pub(super) const SELL_OUT_REQUESTS: f64 = 1.3;
/// Tickets: requests per purchase in the last tenth against the first, as T7 states it
/// when buyers come at once.
pub(super) const SELL_OUT_TENTHS: f64 = 1.35;
/// Tickets: Tally's tickets/s against the naive approach's, in the same run.
pub(super) const NAIVE_SPEED_UP: f64 = 3.0;
/// The mixed sale: requests per lucky dip, as the service reports them.
pub(super) const MIXED_REQUESTS: f64 = 1.35;
/// The mixed sale: the last tenth against the first (requests, and mean latency).
pub(super) const MIXED_TENTHS: f64 = 1.2;
/// The same sale with nothing chosen (`--mixed-chosen-share 0`): the last tenth against
/// the first, as T7 states it for a paced sale.
pub(super) const PACED_TENTHS: f64 = 1.55;
/// Bundles: WCU per ticket of the table.
pub(super) const BUNDLE_WCU: f64 = 2.2;
/// Order imports: WCU per gapless order of the table.
pub(super) const GAPLESS_WCU: f64 = 4.6;
/// Order imports: gapless batches' share of the 4-writer 100-item write rate, in percent.
pub(super) const GAPLESS_WRITE_RATE: f64 = 75.0;
/// Single calls: requests per order with 4 writers, fast and gapless.
pub(super) const SINGLE_FAST_REQUESTS: f64 = 1.15;
pub(super) const SINGLE_GAPLESS_REQUESTS: f64 = 2.0;
/// Single calls: WCU at most this many percent above the floor.
pub(super) const FLOOR_MARGIN: f64 = 10.0;
/// Cold starts: time to the first poll of `next`, and peak memory.
pub(super) const COLD_INIT: Duration = Duration::from_millis(20);
pub(super) const COLD_PEAK_MIB: f64 = 32.0;

/// "target <= 1.2x: met" for a figure that should stay at or below `target` (`unit`
/// follows the number: "x", "%" or nothing).
pub(super) fn at_most(figure: f64, target: f64, unit: &str) -> String {
    format!("target <= {target}{unit}: {}", verdict(figure <= target))
}

/// "target >= 3x: met" for a figure that should reach `target`.
pub(super) fn at_least(figure: f64, target: f64, unit: &str) -> String {
    format!("target >= {target}{unit}: {}", verdict(figure >= target))
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = include_str!("../../../../docs/benchmarks.md");
    const README: &str = include_str!("../../../../README.md");

    /// The targets column of the page's row for `part`.
    fn targets_of(part: &str) -> &'static str {
        let prefix = format!("| {part} |");
        let row = PAGE
            .lines()
            .find(|line| line.starts_with(&prefix))
            .unwrap_or_else(|| panic!("docs/benchmarks.md has no row for {part}"));
        row.trim_end_matches('|').rsplit('|').next().unwrap().trim()
    }

    #[test]
    fn the_page_states_every_target_as_declared() {
        let rows = [
            (
                "tickets",
                vec![
                    format!("last tenth at most {SELL_OUT_TENTHS}x the first"),
                    format!("at least {NAIVE_SPEED_UP}x the naive tickets/s"),
                    format!("at most {SELL_OUT_REQUESTS} requests per purchase"),
                ],
            ),
            (
                "mixed sale",
                vec![
                    format!("at most {MIXED_REQUESTS} requests per lucky dip"),
                    format!("last tenth at most {MIXED_TENTHS}x the first"),
                    format!("with nothing chosen, at most {PACED_TENTHS}x"),
                ],
            ),
            (
                "bundles",
                vec![format!("at most {BUNDLE_WCU} WCU per ticket")],
            ),
            (
                "orders",
                vec![
                    format!("gapless at most {GAPLESS_WCU} WCU per order"),
                    format!("at least {GAPLESS_WRITE_RATE}% of the 4-writer"),
                ],
            ),
            (
                "single calls",
                vec![
                    format!("fast at most {SINGLE_FAST_REQUESTS} requests per order"),
                    format!("gapless {SINGLE_GAPLESS_REQUESTS};"),
                    format!("WCU within {FLOOR_MARGIN}% of the floor"),
                ],
            ),
            (
                "cold starts",
                vec![format!(
                    "init under {} ms, peak under {COLD_PEAK_MIB} MiB",
                    COLD_INIT.as_millis()
                )],
            ),
        ];
        for (part, phrases) in rows {
            let targets = targets_of(part);
            for phrase in phrases {
                assert!(
                    targets.contains(&phrase),
                    "{part}: {targets:?} does not say {phrase:?}"
                );
            }
        }
        // T7 as the page states it, and as the README does, repeats three of the bounds.
        let t7 = PAGE.lines().skip_while(|l| !l.contains("(T7:")).take(3);
        let t7 = t7.collect::<Vec<_>>().join(" ");
        for phrase in [
            format!("within {SELL_OUT_TENTHS}x when"),
            format!("{MIXED_TENTHS}x in the mixed sale"),
            format!("to {PACED_TENTHS}x in"),
        ] {
            assert!(t7.contains(&phrase), "{t7} does not say {phrase:?}");
        }
        let readme = README.lines().find(|l| l.starts_with("| T7 |")).unwrap();
        for phrase in [
            format!("within {SELL_OUT_TENTHS}x the first tenth's when buyers come at once"),
            format!("{MIXED_TENTHS}x in a mixed sale"),
            format!("{PACED_TENTHS}x in a sale paced"),
        ] {
            assert!(readme.contains(&phrase), "{readme} does not say {phrase:?}");
        }
    }

    #[test]
    fn verdicts_read_the_bound_as_met() {
        assert_eq!(at_most(1.3, 1.3, ""), "target <= 1.3: met");
        assert_eq!(at_most(1.31, 1.3, ""), "target <= 1.3: NOT met");
        assert_eq!(at_least(2.9, 3.0, "x"), "target >= 3x: NOT met");
        assert_eq!(at_least(75.0, 75.0, "%"), "target >= 75%: met");
    }
}
