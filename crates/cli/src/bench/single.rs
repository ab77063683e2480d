//! Single calls: one order, or one purchase of one ticket, per request, from 1 writer and
//! from 4 (each its own service, as warm Lambda instances are), and purchases of payers
//! under spend limits. DynamoDB requests and write units per call against the floor (the
//! one transaction each call needs, 2 units per item by DynamoDB's pricing rules), and the
//! latency of a call.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use clap::Args;
use tally::store::{RequestCounter, RequestCounts, Store};
use tally::tickets::TicketService;
use tally_domain::draw::DrawConfig;
use tally_domain::ids::{DrawId, PayerId, PaymentId};
use tally_domain::journal::Operator;
use tally_domain::purchase::PurchaseRequest;
use tally_domain::spend::{Currency, Price, Span};

use super::create_draw;
use super::orders::{Import, OrderFigures, import};
use super::sell_out::buy;
use super::stats::percentile_ms;
use super::targets::{FLOOR_MARGIN, SINGLE_FAST_REQUESTS, SINGLE_GAPLESS_REQUESTS, at_most};

#[derive(Args)]
pub struct SingleBenchArgs {
    /// Calls of each run, split evenly over its writers.
    #[arg(long, default_value_t = 400)]
    single_calls: usize,
    /// Skip single posts and purchases.
    #[arg(long)]
    pub skip_single: bool,
}

/// What the calls of one run cost.
struct SingleFigures {
    label: String,
    calls: u64,
    requests: RequestCounts,
    table_units: u64,
    /// Transaction items a call needs: its floor is one request and 2 units each.
    floor_items: u64,
    latencies: Vec<Duration>,
    /// Requests per call it should not pass, where there is a target.
    target: Option<f64>,
}

impl SingleFigures {
    fn of_orders(figures: OrderFigures, floor_items: u64, target: Option<f64>) -> Self {
        Self {
            label: figures.label,
            calls: figures.orders,
            requests: figures.by_operation,
            table_units: figures.table_units,
            floor_items,
            latencies: figures.latencies,
            target,
        }
    }

    fn requests_per_call(&self) -> f64 {
        self.requests.total() as f64 / self.calls as f64
    }

    fn units_per_call(&self) -> f64 {
        self.table_units as f64 / self.calls as f64
    }

    fn print(&self) {
        let floor_units = 2 * self.floor_items;
        let units = self.units_per_call();
        let above = 100.0 * (units / floor_units as f64 - 1.0);
        // Multiplied first, so that 4.0 and 10% give 4.4 exactly as the figure would.
        let most = floor_units as f64 * (100.0 + FLOOR_MARGIN) / 100.0;
        let target = self.target.map_or(String::new(), |target| {
            format!("; {}", at_most(self.requests_per_call(), target, ""))
        });
        println!();
        println!("{} ({} calls)", self.label, self.calls);
        println!(
            "  requests per call    {:>8.3}  (floor 1{target})",
            self.requests_per_call()
        );
        println!("    by operation: {}", self.requests);
        println!(
            "  WCU per call, table  {units:>8.2}  (floor {floor_units}.0: {} items in a transaction; {above:.1}% above it, {})",
            self.floor_items,
            at_most(units, most, "")
        );
        println!(
            "  latency p50 / p99    {:>8.1} / {:.1} ms",
            percentile_ms(&self.latencies, 0.5),
            percentile_ms(&self.latencies, 0.99)
        );
    }
}

/// Posts orders one per request into a fast and a gapless series, and buys one ticket per
/// purchase, each from 1 writer and from 4.
pub(super) async fn run(
    args: &SingleBenchArgs,
    store: &Store,
    counter: &RequestCounter,
) -> Result<(), String> {
    println!();
    println!(
        "Single calls: {} orders or purchases per run, one per request",
        args.single_calls
    );
    for (series, gapless, writers, target) in [
        ("SINGLEF1", false, 1, None),
        ("SINGLEF4", false, 4, Some(SINGLE_FAST_REQUESTS)),
        ("SINGLEG1", true, 1, None),
        ("SINGLEG4", true, 4, Some(SINGLE_GAPLESS_REQUESTS)),
    ] {
        let plan = Import {
            series,
            gapless,
            orders: args.single_calls,
            sources: writers,
            batch: 1,
        };
        let figures = import(store, counter, &plan).await?;
        // An order is its number and its reference; a gapless one moves the counter too.
        let items = if gapless { 3 } else { 2 };
        SingleFigures::of_orders(figures, items, target).print();
    }
    for (buyers, payers) in [(1, Payers::None), (4, Payers::None), (4, Payers::Limited)] {
        purchases(args.single_calls, buyers, payers, store, counter)
            .await?
            .print();
    }
    Ok(())
}

/// Whom the purchases of a run name as their payer.
#[derive(Clone, Copy, PartialEq)]
enum Payers {
    /// No payer: nothing counts spend.
    None,
    /// Each buyer its own payer, with a limit on every span that the run stays under, in a
    /// priced draw: every purchase counts its amount on the payer's item.
    Limited,
}

/// The price of a ticket in the draws of payers under limits, in minor units.
const PRICE: u64 = 100;

/// Gives each of `buyers` payers a day, week and month limit above what `calls` tickets
/// cost, as an operator would.
async fn limit_payers(
    service: &TicketService,
    label: &str,
    buyers: usize,
    calls: usize,
) -> Result<(), String> {
    let room = 2 * PRICE * calls as u64;
    let currency = Currency::parse("EUR").map_err(|e| e.to_string())?;
    let spans = Span::ALL.into_iter().map(|span| (span, room)).collect();
    let wanted = BTreeMap::from([(currency, spans)]);
    for buyer in 0..buyers {
        service
            .set_limits(&payer(label, buyer)?, &wanted, &Operator::local())
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn payer(label: &str, buyer: usize) -> Result<PayerId, String> {
    PayerId::parse(&format!("{label}-payer-{buyer}")).map_err(|e| e.to_string())
}

/// `calls` purchases of one ticket each, split over `buyers` concurrent buyers.
async fn purchases(
    calls: usize,
    buyers: usize,
    payers: Payers,
    store: &Store,
    counter: &RequestCounter,
) -> Result<SingleFigures, String> {
    let limited = payers == Payers::Limited;
    let label = format!("single-{buyers}{}", if limited { "-limited" } else { "" });
    let draw_id = DrawId::parse(&label).map_err(|e| e.to_string())?;
    let mut config =
        DrawConfig::new(10 * calls as u64, Some(1), None).map_err(|e| e.to_string())?;
    if limited {
        let price = Price::new(Some(PRICE), Some("EUR")).map_err(|e| e.to_string())?;
        config = config.with_price(price);
        limit_payers(&TicketService::new(store.clone()), &label, buyers, calls).await?;
    }
    create_draw(store, &draw_id, config).await?;
    let (requests_before, units_before) = (counter.snapshot(), store.write_meter().table_units());
    let repeats = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for buyer in 0..buyers {
        let service = TicketService::new(store.clone());
        let (draw_id, repeats) = (draw_id.clone(), repeats.clone());
        let payer_id = limited.then(|| payer(&label, buyer)).transpose()?;
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            for n in 0..calls / buyers {
                let request = PurchaseRequest {
                    draw_id: draw_id.clone(),
                    payment_id: PaymentId::parse(&format!("b{buyer}-{n}")).expect("valid id"),
                    quantity: 1,
                    numbers: None,
                    payer_id: payer_id.clone(),
                    token: None,
                    channel: Default::default(),
                    amount: None,
                };
                let at = Instant::now();
                buy(&service, request, &repeats)
                    .await
                    .map_err(|e| e.to_string())?;
                latencies.push(at.elapsed());
            }
            Ok::<_, String>(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.map_err(|e| e.to_string())??);
    }
    let buyers_label = if buyers == 1 { "buyer" } else { "buyers" };
    let payers_label = if limited {
        ", each a payer under spend limits"
    } else {
        ""
    };
    Ok(SingleFigures {
        label: format!("purchases of one ticket, {buyers} {buyers_label}{payers_label}"),
        calls: latencies.len() as u64,
        requests: counter.snapshot().since(&requests_before),
        table_units: store.write_meter().table_units() - units_before,
        // The cursor, the purchase and its ticket, and the payer's item that counts spend.
        floor_items: if limited { 4 } else { 3 },
        latencies,
        target: None,
    })
}
