//! What one sell-out measured, and how it is printed.

use std::time::{Duration, Instant};

use tally::store::RequestCounts;

use super::stats::percentile_ms;
use super::targets::{SELL_OUT_REQUESTS, SELL_OUT_TENTHS, at_most};

/// One finished purchase, in completion order.
pub(super) struct Sale {
    pub(super) quantity: u32,
    pub(super) requests: u32,
    pub(super) latency: Duration,
}

pub(super) struct Figures {
    pub(super) label: &'static str,
    /// From the start to the last sale: how long selling the tickets took.
    pub(super) elapsed: Duration,
    /// From the start until every buyer had its answer (the last ones learn that the draw
    /// is sold out after the last sale).
    pub(super) answered: Duration,
    pub(super) purchases: u64,
    pub(super) tickets: u64,
    pub(super) by_operation: RequestCounts,
    /// Requests counted by the purchases that succeeded, a process's first read of the
    /// draw with its first purchase. The rest went to answers of sold out and to each
    /// process's record of the sell-out.
    pub(super) purchase_requests: u64,
    /// Tally's answers of sold out: with nothing left (one a buyer, its last), and with
    /// some left, fewer than asked (the buyer asks for those next).
    pub(super) sold_out_answers: Option<(u64, u64)>,
    pub(super) write_units: u64,
    pub(super) latencies: Vec<Duration>,
    pub(super) first_tenth: f64,
    pub(super) last_tenth: f64,
    /// When half, nine tenths and 99% of the tickets were sold.
    pub(super) milestones: [Duration; 3],
}

impl Figures {
    pub(super) fn purchases_per_s(&self) -> f64 {
        self.purchases as f64 / self.elapsed.as_secs_f64()
    }

    pub(super) fn tickets_per_s(&self) -> f64 {
        self.tickets as f64 / self.elapsed.as_secs_f64()
    }

    pub(super) fn requests_per_purchase(&self) -> f64 {
        self.by_operation.total() as f64 / self.purchases as f64
    }

    pub(super) fn percentile(&self, p: f64) -> f64 {
        percentile_ms(&self.latencies, p)
    }
}

/// When the sales, in completion order, reached half, nine tenths and 99% of `total`.
pub(super) fn milestones(sales: &[(Instant, Sale)], started: Instant, total: u64) -> [Duration; 3] {
    let mut sold = 0u64;
    let mut reached = [Duration::ZERO; 3];
    for (at, sale) in sales {
        let before = sold;
        sold += u64::from(sale.quantity);
        for (i, permille) in [500, 900, 990].into_iter().enumerate() {
            let mark = total * permille / 1000;
            if before < mark && sold >= mark {
                reached[i] = *at - started;
            }
        }
    }
    reached
}

/// The mean of a value of the purchases (requests, latency) over those that sold the
/// first and the last tenth of the tickets, in completion order: each sale is its quantity
/// and its value.
pub(super) fn tenths(sales: &[(u32, f64)], total: u64) -> (f64, f64) {
    let mut sold = 0u64;
    let (mut first, mut last) = ((0.0, 0u64), (0.0, 0u64));
    for &(quantity, value) in sales {
        let position = sold;
        sold += u64::from(quantity);
        if position < total / 10 {
            first = (first.0 + value, first.1 + 1);
        }
        if sold > total - total / 10 {
            last = (last.0 + value, last.1 + 1);
        }
    }
    let mean = |(sum, n): (f64, u64)| if n == 0 { 0.0 } else { sum / n as f64 };
    (mean(first), mean(last))
}

/// Prints the figures of a sell-out; `targeted`: beside the tickets part's targets.
pub(super) fn print_figures(f: &Figures, targeted: bool) {
    let target = |figure: f64, bound: f64, unit: &str| match targeted {
        true => format!("  ({})", at_most(figure, bound, unit)),
        false => String::new(),
    };
    println!();
    println!("{}", f.label);
    println!(
        "  sold out after              {:>10.2} s (every buyer answered after {:.2} s)",
        f.elapsed.as_secs_f64(),
        f.answered.as_secs_f64()
    );
    println!("  purchases                   {:>10}", f.purchases);
    println!(
        "  purchases/s                 {:>10.1}",
        f.purchases_per_s()
    );
    println!("  tickets/s                   {:>10.1}", f.tickets_per_s());
    println!(
        "  DynamoDB requests/purchase  {:>10.3}{}",
        f.requests_per_purchase(),
        target(f.requests_per_purchase(), SELL_OUT_REQUESTS, "")
    );
    println!(
        "    within committed purchases {:>9.3}",
        f.purchase_requests as f64 / f.purchases as f64
    );
    if let Some((none_left, some_left)) = f.sold_out_answers {
        let rest = f.by_operation.total().saturating_sub(f.purchase_requests);
        println!(
            "    the rest (sold out)        {:>9.3}  ({none_left} answers with none left, {some_left} with some; records of the sell-out)",
            rest as f64 / f.purchases as f64,
        );
    }
    println!("    by operation: {}", f.by_operation);
    println!(
        "  WCU per ticket (pricing)    {:>10.2}",
        f.write_units as f64 / f.tickets as f64
    );
    println!(
        "  latency p50 / p99           {:>7.1} / {:.1} ms",
        f.percentile(0.5),
        f.percentile(0.99)
    );
    println!(
        "  sold 50% / 90% / 99% after  {:>7.2} / {:.2} / {:.2} s",
        f.milestones[0].as_secs_f64(),
        f.milestones[1].as_secs_f64(),
        f.milestones[2].as_secs_f64()
    );
    let tenths = if f.first_tenth > 0.0 {
        f.last_tenth / f.first_tenth
    } else {
        0.0
    };
    println!(
        "  requests/purchase, first 10% {:>9.3}, last 10% {:.3} ({tenths:.2}x){}",
        f.first_tenth,
        f.last_tenth,
        target(tenths, SELL_OUT_TENTHS, "x")
    );
}
