//! Figures shared by the benchmarks.

use std::time::Duration;

/// The `p` quantile of `latencies`, in milliseconds.
pub fn percentile_ms(latencies: &[Duration], p: f64) -> f64 {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}
