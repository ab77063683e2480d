//! The order benchmark: several sources import the same number of orders into a fast
//! series and into a gapless series in batches, and one order per request (the classic
//! loop, one counter update per order), in one run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use tally::domain::access::SourceAccess;
use tally::domain::ids::{ExternalRef, SeriesId, SourceId};
use tally::domain::order::{NewOrder, OrderData};
use tally::domain::series::{Reset, SeriesDefinition};
use tally::orders::{ItemOutcome, OrderInput, OrderService};
use tally::store::{RequestCounter, RequestCounts, Store};

use super::ceiling::{self, Ceiling};
use super::stats::percentile_ms;

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
    label: String,
    elapsed: Duration,
    orders: u64,
    by_operation: RequestCounts,
    /// Units of the table's own items, and of the period index's writes.
    table_units: u64,
    index_units: u64,
    latencies: Vec<Duration>,
}

/// The batch imports of one run (the one-per-request loop is their yardstick, printed as
/// ratios).
pub struct OrderSummary {
    pub fast: OrderFigures,
    pub gapless: OrderFigures,
    /// The ceilings measured around the batch imports, unless the ceiling is skipped.
    pub bracket: Option<Bracket>,
}

/// The 4-writer 100-item ceiling right before the fast batches, between them and the
/// gapless batches, and right after those, with the 1-writer ceiling last: DynamoDB Local
/// slows as its table grows and the machine's speed drifts, so each import is read against
/// the endpoint as it was on either side of it, not minutes away.
pub struct Bracket {
    pub before_fast: Ceiling,
    pub between: Ceiling,
    pub after_gapless: Ceiling,
    pub serial_after_gapless: Ceiling,
}

impl Bracket {
    /// The 4-writer ceiling around the fast batches, in items/s.
    pub fn around_fast(&self) -> f64 {
        (self.before_fast.items_per_s() + self.between.items_per_s()) / 2.0
    }

    /// The 4-writer ceiling around the gapless batches, in items/s.
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

/// Runs the three imports; with `ceiling_time`, measures the ceiling around the batch
/// imports for that long each.
pub async fn run(
    args: &OrderBenchArgs,
    store: &Store,
    counter: &RequestCounter,
    ceiling_time: Option<Duration>,
) -> Result<OrderSummary, String> {
    let before_fast = match ceiling_time {
        Some(time) => Some(ceiling::measure_order_chunks(store, time).await?),
        None => None,
    };
    println!(
        "\nImporting {} orders from {} concurrent sources: batches of {}, and one per request",
        args.orders, args.order_sources, args.order_batch
    );
    let fast = import(args, store, counter, "FAST", false, args.order_batch).await?;
    fast.print();
    let between = match ceiling_time {
        Some(time) => {
            println!(
                "\nWrite ceiling between the fast and the gapless batches ({} s)",
                time.as_secs()
            );
            Some(ceiling::order_chunks_now(store, time).await?)
        }
        None => None,
    };
    let gapless = import(args, store, counter, "GAPLESS", true, args.order_batch).await?;
    gapless.print();
    let bracket = match (ceiling_time, before_fast, between) {
        (Some(time), Some(before_fast), Some(between)) => {
            println!(
                "\nWrite ceiling after the gapless batches ({} s each)",
                time.as_secs()
            );
            Some(Bracket {
                before_fast,
                between,
                after_gapless: ceiling::order_chunks_now(store, time).await?,
                serial_after_gapless: ceiling::serial_order_chunks_now(store, time).await?,
            })
        }
        _ => None,
    };
    let single = import(args, store, counter, "LOOP", false, 1).await?;
    single.print();
    println!();
    println!("Ratios (orders/s against one order per request):");
    println!(
        "  fast batches          {:>8.2}x",
        fast.orders_per_s() / single.orders_per_s()
    );
    println!(
        "  gapless batches       {:>8.2}x",
        gapless.orders_per_s() / single.orders_per_s()
    );
    println!(
        "  gapless WCU per order {:>8.2}   (table; target <= 4.6), {:.2} with the index",
        gapless.table_wcu_per_order(),
        gapless.total_wcu_per_order()
    );
    Ok(OrderSummary {
        fast,
        gapless,
        bracket,
    })
}

async fn import(
    args: &OrderBenchArgs,
    store: &Store,
    counter: &RequestCounter,
    series: &str,
    gapless: bool,
    batch: usize,
) -> Result<OrderFigures, String> {
    let series_id = SeriesId::parse(series).expect("valid id");
    let definition = SeriesDefinition::new(
        &format!("{series}{{yy}}{{seq:6}}"),
        Reset::Yearly,
        gapless,
        1,
    )
    .map_err(|e| e.to_string())?;
    OrderService::new(store.clone())
        .define_series(&series_id, definition)
        .await
        .map_err(|e| e.to_string())?;
    let per_source = args.orders / args.order_sources;
    let meter = store.write_meter();
    let (requests_before, table_before, index_before) =
        (counter.snapshot(), meter.table_units(), meter.index_units());
    let started = Instant::now();
    let mut sources = Vec::new();
    for source in 0..args.order_sources {
        let service = Arc::new(OrderService::new(store.clone()));
        let series_id = series_id.clone();
        let source = SourceId::parse(&format!("{series}-src-{source}")).expect("valid id");
        sources.push(tokio::spawn(async move {
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
    let mut orders = 0;
    let mut latencies = Vec::new();
    for source in sources {
        let (created, mut l) = source.await.map_err(|e| e.to_string())??;
        orders += created;
        latencies.append(&mut l);
    }
    let mode = if gapless { "gapless" } else { "fast" };
    let label = if batch == 1 {
        "One order per request, one counter update each (fast series)".to_owned()
    } else {
        format!("Batches of {batch} into a {mode} series")
    };
    Ok(OrderFigures {
        label,
        elapsed: started.elapsed(),
        orders,
        by_operation: counter.snapshot().since(&requests_before),
        table_units: meter.table_units() - table_before,
        index_units: meter.index_units() - index_before,
        latencies,
    })
}
