//! The lucky-dip buyers of the mixed sale, each its own service on its own client, so
//! that the requests of each purchase are counted by operation. They buy at a steady pace
//! of tickets per second until every ticket of the draw is sold; a buyer told the draw is
//! sold out while holds still keep numbers asks again a little later.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tally::store::{CallTimes, RequestCounter, RequestCounts, Store, StoreConfig, WriteMeter};
use tally::tickets::{TicketError, TicketService};
use tally_domain::ids::PaymentId;
use tally_domain::purchase::PurchaseRequest;

use super::super::sell_out::buy;
use super::super::stats::percentile_ms;
use super::super::ticket_figures::tenths;
use super::Sale;

/// Tickets in one lucky dip: 1 to this many.
const DIP_MOST: u32 = 10;
/// How long a buyer told "sold out" waits before asking again while numbers are held or
/// purchases under way.
const REFUSED_WAIT: Duration = Duration::from_millis(500);

/// One lucky dip that committed.
struct Dip {
    quantity: u32,
    /// Requests the service reports for the purchase.
    reported: u32,
    /// Requests its client sent, by operation.
    sent: RequestCounts,
    /// Write capacity units its client spent, by DynamoDB's pricing rules.
    units: u64,
    latency: Duration,
    /// Its buyer's lucky dips that committed before it.
    earlier: usize,
    /// Time its client spent in DynamoDB calls.
    calls: CallTimes,
}

/// The slowest lucky dips, against all of them.
pub(super) struct Slowest {
    pub(super) count: usize,
    /// The least latency among them, in milliseconds.
    pub(super) from_ms: f64,
    /// Their buyers' first lucky dips: a process's first dip starts from a cold view.
    pub(super) first: usize,
    /// The p99 of the lucky dips that were not their buyer's first, in milliseconds.
    pub(super) p99_later: f64,
    pub(super) slowest: DipMeans,
    pub(super) all: DipMeans,
}

/// Means per lucky dip, times in milliseconds.
pub(super) struct DipMeans {
    pub(super) requests: f64,
    /// Operations by requests per dip, most first.
    pub(super) operations: Vec<(String, f64)>,
    pub(super) latency: f64,
    pub(super) in_calls: f64,
    pub(super) in_flight: f64,
}

impl DipMeans {
    fn of(dips: &[&Dip]) -> Self {
        let n = dips.len().max(1) as f64;
        let mut sent = RequestCounts::default();
        for dip in dips {
            sent.add(&dip.sent);
        }
        let mut operations: Vec<(String, f64)> = sent
            .operations()
            .map(|o| (o.to_owned(), sent.of(o) as f64 / n))
            .collect();
        operations.sort_by(|a, b| b.1.total_cmp(&a.1));
        let ms = |f: fn(&Dip) -> Duration| {
            dips.iter().map(|&d| f(d).as_secs_f64()).sum::<f64>() * 1e3 / n
        };
        Self {
            requests: sent.total() as f64 / n,
            operations,
            latency: ms(|d| d.latency),
            in_calls: ms(|d| d.calls.in_calls),
            in_flight: ms(|d| d.calls.in_flight),
        }
    }
}

pub(super) struct DipFigures {
    pub(super) buyers: usize,
    /// In completion order.
    dips: Vec<Dip>,
    /// From the start to the last lucky dip.
    pub(super) elapsed: Duration,
    /// Every request of the buyers' clients.
    pub(super) all_requests: RequestCounts,
    /// Answers "sold out" (or too fragmented) before the last sale: numbers were still
    /// held, or purchases under way.
    pub(super) refusals: u64,
}

impl DipFigures {
    pub(super) fn purchases(&self) -> u64 {
        self.dips.len() as u64
    }

    pub(super) fn tickets(&self) -> u64 {
        self.dips.iter().map(|d| u64::from(d.quantity)).sum()
    }

    /// As the service reports them, over the lucky dips that committed.
    pub(super) fn requests_per_purchase(&self) -> f64 {
        let reported: u64 = self.dips.iter().map(|d| u64::from(d.reported)).sum();
        reported as f64 / self.purchases() as f64
    }

    /// Write capacity units per dipped ticket, by DynamoDB's pricing rules.
    pub(super) fn units_per_ticket(&self) -> f64 {
        let units: u64 = self.dips.iter().map(|d| d.units).sum();
        units as f64 / self.tickets() as f64
    }

    /// Write capacity units per lucky dip, first tenth and last.
    pub(super) fn units_tenths(&self) -> (f64, f64) {
        self.tenths_of(|d| d.units as f64)
    }

    pub(super) fn percentile(&self, p: f64) -> f64 {
        let latencies: Vec<Duration> = self.dips.iter().map(|d| d.latency).collect();
        percentile_ms(&latencies, p)
    }

    /// The mean of `value` over the dips that sold the first and the last tenth.
    fn tenths_of(&self, value: impl Fn(&Dip) -> f64) -> (f64, f64) {
        let sales: Vec<(u32, f64)> = self.dips.iter().map(|d| (d.quantity, value(d))).collect();
        tenths(&sales, self.tickets())
    }

    pub(super) fn requests_tenths(&self) -> (f64, f64) {
        self.tenths_of(|d| f64::from(d.reported))
    }

    /// In milliseconds.
    pub(super) fn latency_tenths(&self) -> (f64, f64) {
        self.tenths_of(|d| d.latency.as_secs_f64() * 1e3)
    }

    /// The slowest `share` of the lucky dips (at least one).
    pub(super) fn slowest(&self, share: f64) -> Slowest {
        let mut by_latency: Vec<&Dip> = self.dips.iter().collect();
        by_latency.sort_by_key(|d| std::cmp::Reverse(d.latency));
        let count = ((self.dips.len() as f64 * share).ceil() as usize).max(1);
        let slowest = &by_latency[..count.min(by_latency.len())];
        let later: Vec<Duration> = self
            .dips
            .iter()
            .filter(|d| d.earlier > 0)
            .map(|d| d.latency)
            .collect();
        Slowest {
            count: slowest.len(),
            from_ms: slowest
                .last()
                .map_or(0.0, |d| d.latency.as_secs_f64() * 1e3),
            first: slowest.iter().filter(|d| d.earlier == 0).count(),
            p99_later: percentile_ms(&later, 0.99),
            slowest: DipMeans::of(slowest),
            all: DipMeans::of(&by_latency),
        }
    }

    /// Requests per lucky dip of each operation, first tenth and last.
    pub(super) fn operations_by_tenth(&self) -> Vec<(String, f64, f64)> {
        self.all_requests
            .operations()
            .map(|operation| {
                let (first, last) = self.tenths_of(|d| d.sent.of(operation) as f64);
                (operation.to_owned(), first, last)
            })
            .collect()
    }
}

/// Runs `buyers` lucky-dip buyers at `pace` tickets per second until the draw is sold out.
pub(super) async fn run(
    sale: Arc<Sale>,
    config: &StoreConfig,
    buyers: usize,
    pace: f64,
) -> Result<DipFigures, String> {
    let paced = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for buyer in 0..buyers {
        let counter = RequestCounter::default();
        let store = Store::connect(config, Some(counter.clone())).await;
        let meter = store.write_meter().clone();
        let service = TicketService::new(store);
        let (sale, paced) = (sale.clone(), paced.clone());
        tasks.push(tokio::spawn(async move {
            let pace = Pace {
                started,
                tickets: &paced,
                per_second: pace,
            };
            let dips = dip(&sale, &service, (&counter, &meter), buyer, pace).await;
            dips.map(|(dips, refusals)| (dips, refusals, counter.snapshot()))
        }));
    }
    let (mut dips, mut all_requests, mut refusals) = (Vec::new(), RequestCounts::default(), 0);
    for task in tasks {
        let (bought, refused, sent) = task.await.map_err(|e| e.to_string())??;
        dips.extend(bought);
        all_requests.add(&sent);
        refusals += refused;
    }
    dips.sort_by_key(|(at, _)| *at);
    let elapsed = dips.last().map_or(Duration::ZERO, |(at, _)| *at - started);
    Ok(DipFigures {
        buyers,
        dips: dips.into_iter().map(|(_, d)| d).collect(),
        elapsed,
        all_requests,
        refusals,
    })
}

/// The buyers' shared pace: the tickets asked for so far are due at `per_second`.
#[derive(Clone, Copy)]
struct Pace<'a> {
    started: Instant,
    tickets: &'a AtomicU64,
    per_second: f64,
}

/// One buyer: lucky dips of 1 to `DIP_MOST` tickets, each when the pace allows it.
async fn dip(
    sale: &Sale,
    service: &TicketService,
    (counter, meter): (&RequestCounter, &WriteMeter),
    buyer: usize,
    pace: Pace<'_>,
) -> Result<(Vec<(Instant, Dip)>, u64), String> {
    let mut rng = StdRng::seed_from_u64(buyer as u64);
    let (mut dips, mut refusals) = (Vec::new(), 0u64);
    let mut quantity = rng.random_range(1..=DIP_MOST);
    for n in 0.. {
        if sale.sold.load(Ordering::Relaxed) >= sale.total {
            break;
        }
        if Instant::now() > sale.deadline {
            return Err(format!(
                "the mixed sale sold {} of {} tickets before its deadline",
                sale.sold.load(Ordering::Relaxed),
                sale.total
            ));
        }
        let due = pace
            .tickets
            .fetch_add(u64::from(quantity), Ordering::Relaxed) as f64;
        let due = pace.started
            + Duration::try_from_secs_f64(due / pace.per_second).unwrap_or(Duration::ZERO);
        tokio::time::sleep_until(due.into()).await;
        let request = PurchaseRequest {
            draw_id: sale.draw_id.clone(),
            payment_id: PaymentId::parse(&format!("dip-{buyer}-{n}")).expect("valid id"),
            quantity,
            numbers: None,
            payer_id: None,
            token: None,
            channel: Default::default(),
            amount: None,
        };
        let before = counter.snapshot();
        let times_before = counter.times();
        let units_before = meter.table_units();
        let start = Instant::now();
        match buy(service, request, &sale.repeats).await {
            Ok(receipt) => {
                sale.sold.fetch_add(u64::from(quantity), Ordering::Relaxed);
                let dip = Dip {
                    quantity,
                    reported: receipt.requests,
                    sent: counter.snapshot().since(&before),
                    units: meter.table_units() - units_before,
                    latency: start.elapsed(),
                    earlier: dips.len(),
                    calls: counter.times().since(&times_before),
                };
                dips.push((Instant::now(), dip));
                quantity = rng.random_range(1..=DIP_MOST);
            }
            // Sold out for now: numbers may come back from holds.
            Err(
                TicketError::SoldOut { remaining: 0, .. }
                | TicketError::TicketsHeld { remaining: 0, .. },
            ) => {
                refusals += 1;
                tokio::time::sleep(REFUSED_WAIT).await;
            }
            // What is left lies in more stripes than one purchase can take: one at a time.
            Err(TicketError::TooFragmented { .. }) => {
                refusals += 1;
                quantity = 1;
            }
            Err(
                TicketError::SoldOut { remaining, .. } | TicketError::TicketsHeld { remaining, .. },
            ) => {
                quantity = quantity.min(remaining as u32);
            }
            Err(other) => return Err(format!("lucky dip: {other}")),
        }
    }
    Ok((dips, refusals))
}
