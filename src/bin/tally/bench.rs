//! `tally bench`: sells out a draw with many concurrent buyers, the Tally way and the
//! naive way (random number + conditional put, retry on conflict), then imports orders in
//! batches and one by one (see `bench_orders`), in one run, and prints the figures. Every
//! buyer or source is its own service, like one warm Lambda instance.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::AttributeValue;
use clap::Args;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tally::domain::draw::DrawConfig;
use tally::domain::ids::{DrawId, PaymentId};
use tally::domain::purchase::PurchaseRequest;
use tally::store::{RequestCounter, RequestCounts, Store, StoreConfig};
use tally::tickets::{NewDraw, TicketError, TicketService};

#[derive(Args)]
pub struct BenchArgs {
    /// Tickets in the draw.
    #[arg(long, default_value_t = 10_000)]
    tickets: u64,
    /// Concurrent buyers.
    #[arg(long, default_value_t = 64)]
    buyers: usize,
    /// Largest purchase; each buyer picks 1..=this at random.
    #[arg(long, default_value_t = 10)]
    max_quantity: u32,
    /// Stripe cursors of the draw (default: Tally's default for the draw size).
    #[arg(long)]
    stripes: Option<u32>,
    /// Skip the naive approach.
    #[arg(long)]
    skip_naive: bool,
    /// Tickets sold by each approach before measuring, to warm up DynamoDB Local's JVM.
    #[arg(long, default_value_t = 3_000)]
    warmup_tickets: u64,
    /// Skip the ticket benchmark.
    #[arg(long)]
    skip_tickets: bool,
    /// Skip measuring the endpoint's write ceiling.
    #[arg(long)]
    skip_ceiling: bool,
    /// Seconds of writing per ceiling shape.
    #[arg(long, default_value_t = 5)]
    ceiling_seconds: u64,
    #[command(flatten)]
    orders: crate::bench_orders::OrderBenchArgs,
    #[command(flatten)]
    import_parse: crate::bench_import::ImportParseArgs,
}

/// One finished purchase, in completion order.
struct Sale {
    quantity: u32,
    requests: u32,
    latency: Duration,
}

struct Figures {
    label: &'static str,
    /// From the start to the last sale: how long selling the tickets took.
    elapsed: Duration,
    /// From the start until every buyer had its answer (the last ones learn that the draw
    /// is sold out after the last sale).
    answered: Duration,
    purchases: u64,
    tickets: u64,
    by_operation: RequestCounts,
    /// Requests counted by the purchases that succeeded (excludes sold-out answers and
    /// per-instance start-up reads).
    purchase_requests: u64,
    write_units: u64,
    latencies: Vec<Duration>,
    first_tenth: f64,
    last_tenth: f64,
    /// When half, nine tenths and 99% of the tickets were sold.
    milestones: [Duration; 3],
}

impl Figures {
    fn purchases_per_s(&self) -> f64 {
        self.purchases as f64 / self.elapsed.as_secs_f64()
    }

    fn tickets_per_s(&self) -> f64 {
        self.tickets as f64 / self.elapsed.as_secs_f64()
    }

    fn requests_per_purchase(&self) -> f64 {
        self.by_operation.total() as f64 / self.purchases as f64
    }

    fn percentile(&self, p: f64) -> f64 {
        percentile_ms(&self.latencies, p)
    }
}

/// The `p` quantile of `latencies`, in milliseconds.
pub fn percentile_ms(latencies: &[Duration], p: f64) -> f64 {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

/// When the sales, in completion order, reached half, nine tenths and 99% of `total`.
fn milestones(sales: &[(Instant, Sale)], started: Instant, total: u64) -> [Duration; 3] {
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

/// Requests per purchase over the purchases that sold the first and the last tenth of the
/// tickets, in completion order.
fn tenths(sales: &[(u32, u32)], total: u64) -> (f64, f64) {
    let mut sold = 0u64;
    let (mut first, mut last) = ((0u64, 0u64), (0u64, 0u64));
    for &(quantity, requests) in sales {
        let position = sold;
        sold += u64::from(quantity);
        if position < total / 10 {
            first = (first.0 + u64::from(requests), first.1 + 1);
        }
        if sold > total - total / 10 {
            last = (last.0 + u64::from(requests), last.1 + 1);
        }
    }
    let ratio = |(r, n): (u64, u64)| if n == 0 { 0.0 } else { r as f64 / n as f64 };
    (ratio(first), ratio(last))
}

pub async fn run(args: BenchArgs, config: StoreConfig) -> Result<(), String> {
    crate::bench_import::run(&args.import_parse)?;
    if args.skip_tickets && args.orders.skip_orders && args.skip_ceiling {
        return Ok(());
    }
    let endpoint = config.endpoint.clone().ok_or(
        "set DYNAMODB_ENDPOINT (or --endpoint) to a DynamoDB Local on 127.0.0.1: the bench writes heavily",
    )?;
    if !endpoint.contains("127.0.0.1") && !endpoint.contains("localhost") {
        return Err(format!(
            "refusing to load {endpoint}: the bench runs against loopback only"
        ));
    }
    let table = format!("tally-bench-{}", DrawId::generate());
    let counter = RequestCounter::default();
    let config = StoreConfig::new(table, Some(endpoint), config.timeouts)?;
    let store = Store::connect(&config, Some(counter.clone())).await;
    store.ensure_table().await.map_err(|e| e.to_string())?;
    let result = run_all(&args, &store, &counter).await;
    let _ = store.delete_table().await;
    result
}

async fn run_all(args: &BenchArgs, store: &Store, counter: &RequestCounter) -> Result<(), String> {
    let tickets = if args.skip_tickets {
        None
    } else {
        println!(
            "Selling out {} tickets with {} concurrent buyers (1..={} tickets each), table {}",
            args.tickets,
            args.buyers,
            args.max_quantity,
            store.table()
        );
        Some(compare(args, store, counter).await?)
    };
    let orders = if args.orders.skip_orders {
        None
    } else {
        Some(crate::bench_orders::run(&args.orders, store, counter).await?)
    };
    if args.skip_ceiling {
        return Ok(());
    }
    let ceilings =
        crate::bench_ceiling::measure_all(store, Duration::from_secs(args.ceiling_seconds)).await?;
    println!();
    println!("Against the ceiling:");
    if let Some((tally, naive)) = &tickets {
        let purchases = &ceilings.purchases;
        let transactions = tally.by_operation.of("TransactWriteItems") as f64;
        let transactions_per_s = transactions / tally.elapsed.as_secs_f64();
        let bound = purchases.requests_per_s() * tally.tickets as f64 / tally.purchases as f64;
        println!(
            "  Tally sent {transactions_per_s:.0} transactions/s ({:.0}% of the ceiling); with one transaction per purchase and",
            100.0 * transactions_per_s / purchases.requests_per_s()
        );
        println!(
            "    no cancelled one, this endpoint sells at most {bound:.0} tickets/s{}",
            naive.as_ref().map_or(String::new(), |naive| format!(
                " ({:.2}x the naive approach's {:.0})",
                bound / naive.tickets_per_s(),
                naive.tickets_per_s()
            ))
        );
        if let Some(naive) = naive {
            let puts_per_s = naive.by_operation.total() as f64 / naive.elapsed.as_secs_f64();
            println!(
                "  naive sent {puts_per_s:.0} PutItem/s ({:.0}% of the ceiling, most of them failing their condition)",
                100.0 * puts_per_s / ceilings.single_puts.requests_per_s()
            );
        }
    }
    if let Some(orders) = &orders {
        let chunks = &ceilings.order_chunks;
        let loop_rate = orders.single.orders_per_s();
        for (label, figures, target) in [
            ("fast", &orders.fast, 20.0),
            ("gapless", &orders.gapless, 5.0),
        ] {
            // Every order is two new items: its number and its (source, reference).
            let items = 2.0 * figures.orders_per_s();
            println!(
                "  {label} batches wrote {items:.0} items/s ({:.0}% of the 100-item ceiling); {target}x the loop needs {:.0} items/s ({:.1}x the ceiling)",
                100.0 * items / chunks.items_per_s(),
                2.0 * target * loop_rate,
                2.0 * target * loop_rate / chunks.items_per_s()
            );
        }
    }
    Ok(())
}

/// Tally's figures, and the naive approach's unless skipped.
async fn compare(
    args: &BenchArgs,
    store: &Store,
    counter: &RequestCounter,
) -> Result<(Figures, Option<Figures>), String> {
    if args.warmup_tickets > 0 {
        println!(
            "Warming up with {} tickets each (not measured)",
            args.warmup_tickets
        );
        tally_sell_out(args, args.warmup_tickets, "warmup", store, counter).await?;
        if !args.skip_naive {
            naive_sell_out(args, args.warmup_tickets, "WARMUP", store, counter).await?;
        }
    }
    let tally = tally_sell_out(args, args.tickets, "bench", store, counter).await?;
    print_figures(&tally);
    if args.skip_naive {
        return Ok((tally, None));
    }
    let naive = naive_sell_out(args, args.tickets, "NAIVE", store, counter).await?;
    print_figures(&naive);
    println!();
    println!("Ratios (Tally / naive):");
    println!(
        "  tickets/s             {:>8.2}x  (target >= 3x)",
        tally.tickets_per_s() / naive.tickets_per_s()
    );
    println!(
        "  requests per ticket   {:>8.2}x",
        (tally.by_operation.total() as f64 / tally.tickets as f64)
            / (naive.by_operation.total() as f64 / naive.tickets as f64)
    );
    println!(
        "  WCU per ticket        {:>8.2}x",
        (tally.write_units as f64 / tally.tickets as f64)
            / (naive.write_units as f64 / naive.tickets as f64)
    );
    Ok((tally, Some(naive)))
}

fn print_figures(f: &Figures) {
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
        "  DynamoDB requests/purchase  {:>10.3}",
        f.requests_per_purchase()
    );
    println!(
        "    within committed purchases {:>9.3}",
        f.purchase_requests as f64 / f.purchases as f64
    );
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
    println!(
        "  requests/purchase, first 10% {:>9.3}, last 10% {:.3} ({:.2}x)",
        f.first_tenth,
        f.last_tenth,
        if f.first_tenth > 0.0 {
            f.last_tenth / f.first_tenth
        } else {
            0.0
        }
    );
}

async fn tally_sell_out(
    args: &BenchArgs,
    total: u64,
    draw: &str,
    store: &Store,
    counter: &RequestCounter,
) -> Result<Figures, String> {
    let config =
        DrawConfig::new(total, Some(args.max_quantity), args.stripes).map_err(|e| e.to_string())?;
    let draw_id = DrawId::parse(draw).expect("valid id");
    TicketService::new(store.clone())
        .create_draw(NewDraw {
            draw_id: Some(draw_id.clone()),
            name: None,
            config,
        })
        .await
        .map_err(|e| e.to_string())?;
    if draw != "warmup" {
        println!("\nTally: {} stripes", config.stripes());
    }
    let next_payment = Arc::new(AtomicU64::new(0));
    let before = counter.snapshot();
    let units_before = store.write_meter().get();
    let started = Instant::now();
    let mut buyers = Vec::new();
    for buyer in 0..args.buyers {
        let service = TicketService::new(store.clone());
        let draw_id = draw_id.clone();
        let next_payment = next_payment.clone();
        let max_quantity = args.max_quantity;
        buyers.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(buyer as u64);
            let mut sales = Vec::new();
            let mut quantity = rng.random_range(1..=max_quantity);
            loop {
                let payment = next_payment.fetch_add(1, Ordering::Relaxed);
                let request = PurchaseRequest {
                    draw_id: draw_id.clone(),
                    payment_id: PaymentId::parse(&format!("pay-{payment}")).expect("valid id"),
                    quantity,
                    payer_id: None,
                    token: None,
                };
                let start = Instant::now();
                match service.purchase(request).await {
                    Ok(receipt) => {
                        sales.push((
                            Instant::now(),
                            Sale {
                                quantity,
                                requests: receipt.requests,
                                latency: start.elapsed(),
                            },
                        ));
                        quantity = rng.random_range(1..=max_quantity);
                    }
                    Err(TicketError::SoldOut { remaining: 0 }) => return Ok(sales),
                    Err(TicketError::SoldOut { remaining }) => quantity = remaining as u32,
                    Err(other) => return Err(other.to_string()),
                }
            }
        }));
    }
    let mut sales = Vec::new();
    for buyer in buyers {
        sales.extend(buyer.await.map_err(|e| e.to_string())??);
    }
    let answered = started.elapsed();
    sales.sort_by_key(|(at, _)| *at);
    let elapsed = sales.last().map_or(answered, |(at, _)| *at - started);
    let tickets: u64 = sales.iter().map(|(_, s)| u64::from(s.quantity)).sum();
    if tickets != total {
        return Err(format!("sold {tickets} tickets of {total}"));
    }
    let order: Vec<(u32, u32)> = sales
        .iter()
        .map(|(_, s)| (s.quantity, s.requests))
        .collect();
    let (first_tenth, last_tenth) = tenths(&order, total);
    Ok(Figures {
        label: "Tally (keyed permutation, striped cursors, one transaction per purchase)",
        elapsed,
        answered,
        purchases: sales.len() as u64,
        tickets,
        by_operation: counter.snapshot().since(&before),
        purchase_requests: sales.iter().map(|(_, s)| u64::from(s.requests)).sum(),
        write_units: store.write_meter().get() - units_before,
        latencies: sales.iter().map(|(_, s)| s.latency).collect(),
        first_tenth,
        last_tenth,
        milestones: milestones(&sales, started, total),
    })
}

async fn naive_sell_out(
    args: &BenchArgs,
    total: u64,
    prefix: &'static str,
    store: &Store,
    counter: &RequestCounter,
) -> Result<Figures, String> {
    let sold = Arc::new(AtomicU64::new(0));
    let before = counter.snapshot();
    let started = Instant::now();
    let mut buyers = Vec::new();
    for buyer in 0..args.buyers {
        let store = store.clone();
        let sold = sold.clone();
        let max_quantity = args.max_quantity;
        buyers.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(1_000 + buyer as u64);
            let mut sales = Vec::new();
            'purchases: loop {
                let quantity = rng.random_range(1..=max_quantity);
                let start = Instant::now();
                let (mut got, mut requests) = (0u32, 0u32);
                while got < quantity {
                    if sold.load(Ordering::Relaxed) >= total {
                        if got > 0 {
                            sales.push((
                                Instant::now(),
                                Sale {
                                    quantity: got,
                                    requests,
                                    latency: start.elapsed(),
                                },
                            ));
                        }
                        break 'purchases;
                    }
                    let number = rng.random_range(1..=total);
                    requests += 1;
                    let put = store
                        .client()
                        .put_item()
                        .table_name(store.table())
                        .item("pk", AttributeValue::S(format!("{prefix}#TICKET#{number}")))
                        .item("number", AttributeValue::N(number.to_string()))
                        .condition_expression("attribute_not_exists(pk)")
                        .send()
                        .await;
                    match put {
                        Ok(_) => {
                            got += 1;
                            sold.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(err) if err.code() == Some("ConditionalCheckFailedException") => {}
                        Err(err) => return Err(format!("naive put failed: {err}")),
                    }
                }
                sales.push((
                    Instant::now(),
                    Sale {
                        quantity,
                        requests,
                        latency: start.elapsed(),
                    },
                ));
            }
            Ok::<_, String>(sales)
        }));
    }
    let mut sales = Vec::new();
    for buyer in buyers {
        sales.extend(buyer.await.map_err(|e| e.to_string())??);
    }
    let answered = started.elapsed();
    sales.sort_by_key(|(at, _)| *at);
    let elapsed = sales.last().map_or(answered, |(at, _)| *at - started);
    let tickets: u64 = sales.iter().map(|(_, s)| u64::from(s.quantity)).sum();
    let by_operation = counter.snapshot().since(&before);
    let requests = by_operation.total();
    let order: Vec<(u32, u32)> = sales
        .iter()
        .map(|(_, s)| (s.quantity, s.requests))
        .collect();
    let (first_tenth, last_tenth) = tenths(&order, tickets);
    Ok(Figures {
        label: "Naive (random number, conditional put, retry on conflict)",
        elapsed,
        answered,
        purchases: sales.len() as u64,
        tickets,
        by_operation,
        purchase_requests: requests,
        // A conditional put costs 1 WCU, failed or not.
        write_units: requests,
        latencies: sales.iter().map(|(_, s)| s.latency).collect(),
        first_tenth,
        last_tenth,
        milestones: milestones(&sales, started, tickets),
    })
}
