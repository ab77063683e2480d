//! The ticket benchmark: one draw sold out by many concurrent buyers, the Tally way and the
//! naive way (random number, conditional put, retry on conflict).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::AttributeValue;
use clap::Args;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tally::store::{RequestCounter, Store};
use tally::tickets::{PurchaseReceipt, TicketError, TicketService};
use tally_domain::draw::DrawConfig;
use tally_domain::ids::{DrawId, PaymentId};
use tally_domain::purchase::PurchaseRequest;

use super::create_draw;
use super::targets::{NAIVE_SPEED_UP, at_least};
use super::ticket_figures::{Figures, Sale, milestones, print_figures, tenths};

#[derive(Args)]
pub struct TicketBenchArgs {
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
    /// Every buyer a task of one process (one service, as `tally serve` answers concurrent
    /// calls) instead of each its own process.
    #[arg(long)]
    one_process: bool,
    /// Skip the naive approach.
    #[arg(long)]
    skip_naive: bool,
    /// Tickets sold by each approach before measuring, to warm up DynamoDB Local's JVM.
    #[arg(long, default_value_t = 3_000)]
    warmup_tickets: u64,
    /// Skip the ticket benchmark.
    #[arg(long)]
    pub skip_tickets: bool,
}

/// Tally's figures, and the naive approach's unless skipped.
pub(super) async fn compare(
    args: &TicketBenchArgs,
    store: &Store,
    counter: &RequestCounter,
) -> Result<(Figures, Option<Figures>), String> {
    println!(
        "Selling out {} tickets with {} concurrent buyers (1..={} tickets each{}), table {}",
        args.tickets,
        args.buyers,
        args.max_quantity,
        if args.one_process {
            ", all in one process"
        } else {
            ""
        },
        store.table()
    );
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
    print_figures(&tally, true);
    if args.skip_naive {
        return Ok((tally, None));
    }
    let naive = naive_sell_out(args, args.tickets, "NAIVE", store, counter).await?;
    print_figures(&naive, false);
    println!();
    println!("Ratios (Tally / naive):");
    let speed_up = tally.tickets_per_s() / naive.tickets_per_s();
    println!(
        "  tickets/s             {speed_up:>8.2}x  ({})",
        at_least(speed_up, NAIVE_SPEED_UP, "x")
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

async fn tally_sell_out(
    args: &TicketBenchArgs,
    total: u64,
    draw: &str,
    store: &Store,
    counter: &RequestCounter,
) -> Result<Figures, String> {
    let config =
        DrawConfig::new(total, Some(args.max_quantity), args.stripes).map_err(|e| e.to_string())?;
    let draw_id = DrawId::parse(draw).expect("valid id");
    create_draw(store, &draw_id, config).await?;
    if draw != "warmup" {
        println!("\nTally: {} stripes", config.stripes());
    }
    let next_payment = Arc::new(AtomicU64::new(0));
    let repeats = Arc::new(AtomicU64::new(0));
    let some_left = Arc::new(AtomicU64::new(0));
    let before = counter.snapshot();
    let units_before = store.write_meter().table_units();
    let started = Instant::now();
    let mut buyers = Vec::new();
    let shared = Arc::new(TicketService::new(store.clone()));
    for buyer in 0..args.buyers {
        let service = if args.one_process {
            shared.clone()
        } else {
            Arc::new(TicketService::new(store.clone()))
        };
        let draw_id = draw_id.clone();
        let next_payment = next_payment.clone();
        let max_quantity = args.max_quantity;
        let (repeats, some_left) = (repeats.clone(), some_left.clone());
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
                    numbers: None,
                    payer_id: None,
                    token: None,
                    channel: Default::default(),
                    amount: None,
                };
                let start = Instant::now();
                match buy(&service, request, &repeats).await {
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
                    Err(TicketError::SoldOut { remaining: 0, .. }) => return Ok(sales),
                    Err(TicketError::SoldOut { remaining, .. }) => {
                        some_left.fetch_add(1, Ordering::Relaxed);
                        quantity = remaining as u32;
                    }
                    Err(other) => {
                        return Err(format!(
                            "{other} (a buyer tries a purchase {MAX_TRIES} times)"
                        ));
                    }
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
    let order: Vec<(u32, f64)> = sales
        .iter()
        .map(|(_, s)| (s.quantity, f64::from(s.requests)))
        .collect();
    let (first_tenth, last_tenth) = tenths(&order, total);
    let repeats = repeats.load(Ordering::Relaxed);
    if repeats > 0 && draw != "warmup" {
        println!("  buyers repeated {repeats} answers of 503, as clients do");
    }
    Ok(Figures {
        label: "Tally (keyed permutation, striped cursors, one transaction per purchase)",
        elapsed,
        answered,
        purchases: sales.len() as u64,
        tickets,
        by_operation: counter.snapshot().since(&before),
        purchase_requests: sales.iter().map(|(_, s)| u64::from(s.requests)).sum(),
        sold_out_answers: Some((args.buyers as u64, some_left.load(Ordering::Relaxed))),
        write_units: store.write_meter().table_units() - units_before,
        latencies: sales.iter().map(|(_, s)| s.latency).collect(),
        first_tenth,
        last_tenth,
        milestones: milestones(&sales, started, total),
    })
}

/// The `Retry-After` of a 503 (contention, throttling, an outcome unknown).
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// How long a buyer waits before repeating a 503: at least its `Retry-After`, and up to 16
/// times that, at random, the more often the same purchase failed, as a careful client
/// does, so that hundreds of buyers do not keep an overloaded endpoint overloaded.
fn repeat_wait(failures: u32) -> Duration {
    let ceiling = RETRY_AFTER.saturating_mul(1 << failures.min(4));
    let spread = (ceiling - RETRY_AFTER).as_millis() as u64;
    RETRY_AFTER + Duration::from_millis(rand::rng().random_range(0..=spread))
}

/// Tries of one purchase before a buyer gives up and the bench fails: with hundreds of
/// buyers on 2 busy cores, DynamoDB Local can time out the same purchase ten times running.
pub(super) const MAX_TRIES: u32 = 30;

/// One purchase as a client makes it: a 503-class answer is repeated with the same payment
/// id (safe: the same id never allocates twice).
pub(super) async fn buy(
    service: &TicketService,
    request: PurchaseRequest,
    repeats: &AtomicU64,
) -> Result<PurchaseReceipt, TicketError> {
    as_a_client(repeats, || service.purchase(request.clone())).await
}

/// A call as a client makes it: a 503-class answer (contention, throttling, an outcome
/// unknown) is repeated unchanged after a wait, a bounded number of times; with many
/// buyers on a busy machine DynamoDB Local can outlast the operation timeout.
pub(super) async fn as_a_client<T, F, Fut>(
    repeats: &AtomicU64,
    mut call: F,
) -> Result<T, TicketError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, TicketError>>,
{
    let mut tries = 1;
    loop {
        match call().await {
            Err(TicketError::Store(err)) if err.is_transient() && tries < MAX_TRIES => {
                repeats.fetch_add(1, Ordering::Relaxed);
                let wait = repeat_wait(tries);
                tries += 1;
                tokio::time::sleep(wait).await;
            }
            other => return other,
        }
    }
}

async fn naive_sell_out(
    args: &TicketBenchArgs,
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
    let order: Vec<(u32, f64)> = sales
        .iter()
        .map(|(_, s)| (s.quantity, f64::from(s.requests)))
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
        sold_out_answers: None,
        // A conditional put costs 1 WCU, failed or not.
        write_units: requests,
        latencies: sales.iter().map(|(_, s)| s.latency).collect(),
        first_tenth,
        last_tenth,
        milestones: milestones(&sales, started, tickets),
    })
}
