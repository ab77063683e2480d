//! The order benchmark: several sources import the same number of orders into a fast
//! series and into a gapless series in batches, in one run, with the endpoint's write
//! write rate measured around each. One order per request is the single-call part
//! (`single.rs`), which imports the same way.

use std::sync::Arc;
use std::time::{Duration, Instant};
use tally_domain::journal::Operator;

use clap::Args;
use tally::orders::{ItemOutcome, OrderInput, OrderService};
use tally::store::{RequestCounter, RequestCounts, Store};
use tally_domain::access::SourceAccess;
use tally_domain::ids::{ExternalRef, SeriesId, SourceId};
use tally_domain::order::{NewOrder, OrderData};
use tally_domain::series::{Reset, SeriesDefinition};

use super::stats::percentile_ms;
use super::targets::{GAPLESS_WCU, at_most};
use super::write_rate::{self, WriteRate};

#[derive(Args)]
pub struct OrderBenchArgs {
    /// Orders imported by each mode, split evenly over the sources.
    #[arg(long, default_value_t = 10_000)]
    orders: usize,
    /// Concurrent sources (systems) posting orders.
    #[arg(long, default_value_t = 4)]
    order_sources: usize,
    /// Orders per batch request.
    #[arg(long, default_value_t = 100)]
    order_batch: usize,
    /// Skip the order benchmark.
    #[arg(long)]
    pub skip_orders: bool,
}

pub struct OrderFigures {
    pub(super) label: String,
    elapsed: Duration,
    pub(super) orders: u64,
    pub(super) by_operation: RequestCounts,
    /// Units of the table's own items, and of the period index's writes.
    pub(super) table_units: u64,
    index_units: u64,
    pub(super) latencies: Vec<Duration>,
}

/// One import: `orders` split evenly over `sources` concurrent sources, each its own
/// service (a warm Lambda instance), in requests of `batch` orders.
pub(super) struct Import<'a> {
    pub(super) series: &'a str,
    pub(super) gapless: bool,
    pub(super) orders: usize,
    pub(super) sources: usize,
    pub(super) batch: usize,
}

/// The batch imports of one run.
pub struct OrderSummary {
    pub fast: OrderFigures,
    pub gapless: OrderFigures,
    /// The write rates measured around the batch imports, unless the write rate is skipped.
    pub bracket: Option<Bracket>,
}

/// The 4-writer 100-item write rate right before the fast batches, between them and the
/// gapless batches, and right after those, with the 1-writer write rate last: DynamoDB Local
/// slows as its table grows and the machine's speed drifts, so each import is read against
/// the endpoint as it was on either side of it, not minutes away.
pub struct Bracket {
    pub before_fast: WriteRate,
    pub between: WriteRate,
    pub after_gapless: WriteRate,
    pub serial_after_gapless: WriteRate,
}

impl Bracket {
    /// The 4-writer write rate around the fast batches, in items/s.
    pub fn around_fast(&self) -> f64 {
        (self.before_fast.items_per_s() + self.between.items_per_s()) / 2.0
    }

    /// The 4-writer write rate around the gapless batches, in items/s.
    pub fn around_gapless(&self) -> f64 {
        (self.between.items_per_s() + self.after_gapless.items_per_s()) / 2.0
    }
}

impl OrderFigures {
    pub fn orders_per_s(&self) -> f64 {
        self.orders as f64 / self.elapsed.as_secs_f64()
    }

    /// WCU per order of the table's own items (the figure the targets speak of).
    pub fn table_wcu_per_order(&self) -> f64 {
        self.table_units as f64 / self.orders as f64
    }

    /// WCU per order with the period index's writes.
    pub fn total_wcu_per_order(&self) -> f64 {
        (self.table_units + self.index_units) as f64 / self.orders as f64
    }

    fn print(&self) {
        println!();
        println!("{}", self.label);
        println!(
            "  elapsed                     {:>10.2} s",
            self.elapsed.as_secs_f64()
        );
        println!(
            "  orders/s                    {:>10.1}",
            self.orders_per_s()
        );
        println!(
            "  DynamoDB requests/order     {:>10.3}",
            self.by_operation.total() as f64 / self.orders as f64
        );
        println!("    by operation: {}", self.by_operation);
        println!(
            "  WCU per order, table        {:>10.2}  (pricing rules; floor 4.0: two items in a transaction)",
            self.table_wcu_per_order()
        );
        println!(
            "  WCU per order, with indexes {:>10.2}  (the period index and the index of number texts each write a number item once more; floor 6.0)",
            self.total_wcu_per_order()
        );
        println!(
            "  request latency p50 / p99   {:>7.1} / {:.1} ms",
            percentile_ms(&self.latencies, 0.5),
            percentile_ms(&self.latencies, 0.99)
        );
    }
}

/// Runs the two imports; with `write_rate_time`, measures the write rate around them for that
/// long each.
pub async fn run(
    args: &OrderBenchArgs,
    store: &Store,
    counter: &RequestCounter,
    write_rate_time: Option<Duration>,
) -> Result<OrderSummary, String> {
    let before_fast = match write_rate_time {
        Some(time) => Some(write_rate::measure_order_chunks(store, time).await?),
        None => None,
    };
    println!(
        "\nImporting {} orders from {} concurrent sources in batches of {}",
        args.orders, args.order_sources, args.order_batch
    );
    let batches = |series, gapless| Import {
        series,
        gapless,
        orders: args.orders,
        sources: args.order_sources,
        batch: args.order_batch,
    };
    let fast = import(store, counter, &batches("FAST", false)).await?;
    fast.print();
    let between = match write_rate_time {
        Some(time) => {
            println!(
                "\nWrite write rate between the fast and the gapless batches ({} s)",
                time.as_secs()
            );
            Some(write_rate::order_chunks_now(store, time).await?)
        }
        None => None,
    };
    let gapless = import(store, counter, &batches("GAPLESS", true)).await?;
    gapless.print();
    let bracket = match (write_rate_time, before_fast, between) {
        (Some(time), Some(before_fast), Some(between)) => {
            println!(
                "\nWrite write rate after the gapless batches ({} s each)",
                time.as_secs()
            );
            Some(Bracket {
                before_fast,
                between,
                after_gapless: write_rate::order_chunks_now(store, time).await?,
                serial_after_gapless: write_rate::serial_order_chunks_now(store, time).await?,
            })
        }
        _ => None,
    };
    println!();
    println!(
        "  gapless WCU per order {:>8.2}   (table; {}), {:.2} with the index",
        gapless.table_wcu_per_order(),
        at_most(gapless.table_wcu_per_order(), GAPLESS_WCU, ""),
        gapless.total_wcu_per_order()
    );
    Ok(OrderSummary {
        fast,
        gapless,
        bracket,
    })
}

pub(super) async fn import(
    store: &Store,
    counter: &RequestCounter,
    plan: &Import<'_>,
) -> Result<OrderFigures, String> {
    let Import {
        series,
        gapless,
        orders,
        sources,
        batch,
    } = *plan;
    let series_id = SeriesId::parse(series).expect("valid id");
    let definition = SeriesDefinition::new(
        &format!("{series}{{yy}}{{seq:6}}"),
        Reset::Yearly,
        gapless,
        1,
    )
    .map_err(|e| e.to_string())?;
    OrderService::new(store.clone())
        .define_series(&series_id, definition, &Operator::local())
        .await
        .map_err(|e| e.to_string())?;
    let per_source = orders / sources;
    let meter = store.write_meter();
    let (requests_before, table_before, index_before) =
        (counter.snapshot(), meter.table_units(), meter.index_units());
    let started = Instant::now();
    let mut tasks = Vec::new();
    for source in 0..sources {
        let service = Arc::new(OrderService::new(store.clone()));
        let series_id = series_id.clone();
        let source = SourceId::parse(&format!("{series}-src-{source}")).expect("valid id");
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut created = 0u64;
            for start in (0..per_source).step_by(batch) {
                let inputs: Vec<OrderInput> = (start..(start + batch).min(per_source))
                    .map(|i| {
                        let external_ref = format!("ref-{i}");
                        OrderInput {
                            order: Ok(NewOrder {
                                external_ref: ExternalRef::parse(&external_ref).expect("valid"),
                                data: OrderData::empty(),
                                corrects: None,
                            }),
                            external_ref: Some(external_ref),
                        }
                    })
                    .collect();
                // Like a client: post again what was lost to contention (idempotent).
                for _ in 0..5 {
                    let at = Instant::now();
                    let outcomes = service
                        .create_orders(&series_id, &source, inputs.clone(), &SourceAccess::All)
                        .await
                        .map_err(|e| e.to_string())?;
                    latencies.push(at.elapsed());
                    let mut contended = false;
                    for outcome in outcomes {
                        match outcome {
                            ItemOutcome::Created(_) => created += 1,
                            ItemOutcome::Existing(_) => {}
                            ItemOutcome::Rejected(r) if r.code.is_retryable() => contended = true,
                            other => return Err(format!("unexpected outcome {other:?}")),
                        }
                    }
                    if !contended {
                        break;
                    }
                }
            }
            Ok::<_, String>((created, latencies))
        }));
    }
    let mut created = 0;
    let mut latencies = Vec::new();
    for task in tasks {
        let (orders, mut l) = task.await.map_err(|e| e.to_string())??;
        created += orders;
        latencies.append(&mut l);
    }
    let mode = if gapless { "gapless" } else { "fast" };
    let label = if batch == 1 {
        let writers = if sources == 1 { "writer" } else { "writers" };
        format!("{mode} orders, {sources} {writers}")
    } else {
        format!("Batches of {batch} into a {mode} series")
    };
    Ok(OrderFigures {
        label,
        elapsed: started.elapsed(),
        orders: created,
        by_operation: counter.snapshot().since(&requests_before),
        table_units: meter.table_units() - table_before,
        index_units: meter.index_units() - index_before,
        latencies,
    })
}
