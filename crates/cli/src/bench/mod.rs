//! `tally bench`: sells out a draw with many concurrent buyers, the Tally way and the
//! naive way (random number + conditional put, retry on conflict), and by lucky dip among
//! numbers buyers chose and held; imports orders in batches, posts orders and buys
//! tickets one per request, measures the endpoint's own write rate, and times the
//! parsing of import files, and voids every purchase of a draw as a bulk refund (each
//! with its journal entry), in one run, and prints the figures. Every buyer or source is
//! its own service, like one warm Lambda instance.

mod audit;
mod bundles;
mod cold_start;
mod grid;
mod import_parse;
mod mixed_sale;
mod orders;
mod refunds;
mod sell_out;
mod single;
mod stats;
mod targets;
mod ticket_figures;
mod winners;
mod write_rate;

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use clap::Args;
use tally::store::{RequestCounter, Store, StoreConfig};
use tally::tickets::{NewDraw, TicketService};
use tally_domain::draw::DrawConfig;
use tally_domain::ids::DrawId;

use targets::{GAPLESS_WCU, GAPLESS_WRITE_RATE, at_least, at_most};

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    tickets: sell_out::TicketBenchArgs,
    /// Skip measuring the endpoint's write rate.
    #[arg(long)]
    skip_write_rate: bool,
    /// Seconds of writing per write rate shape.
    #[arg(long, default_value_t = 5)]
    write_rate_seconds: u64,
    #[command(flatten)]
    orders: orders::OrderBenchArgs,
    #[command(flatten)]
    single: single::SingleBenchArgs,
    #[command(flatten)]
    import_parse: import_parse::ImportParseArgs,
    #[command(flatten)]
    cold_start: cold_start::ColdStartArgs,
    #[command(flatten)]
    audit: audit::AuditBenchArgs,
    #[command(flatten)]
    winners: winners::WinnersBenchArgs,
    #[command(flatten)]
    grid: grid::GridBenchArgs,
    #[command(flatten)]
    bundles: bundles::BundleBenchArgs,
    #[command(flatten)]
    mixed_sale: mixed_sale::MixedSaleArgs,
    #[command(flatten)]
    refunds: refunds::RefundBenchArgs,
}

pub async fn run(args: BenchArgs, config: StoreConfig) -> Result<(), String> {
    // First, so that its peak memory is measured before other parts grow the process.
    if !args.winners.skip_winners {
        winners::synthetic(&args.winners)?;
    }
    if !args.grid.skip_grid {
        grid::synthetic(&args.grid)?;
    }
    import_parse::run(&args.import_parse)?;
    if args.tickets.skip_tickets
        && args.bundles.skip_bundles
        && args.mixed_sale.skip_mixed_sale
        && args.orders.skip_orders
        && args.single.skip_single
        && args.skip_write_rate
        && args.cold_start.skipped()
        && args.audit.skip_audit
        && args.winners.skip_winners
        && args.refunds.skip_refunds
    {
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
    cold_start::run(&args.cold_start, &config).await?;
    if args.tickets.skip_tickets
        && args.bundles.skip_bundles
        && args.mixed_sale.skip_mixed_sale
        && args.orders.skip_orders
        && args.single.skip_single
        && args.skip_write_rate
        && args.refunds.skip_refunds
    {
        return Ok(());
    }
    let table = format!("tally-bench-{}", DrawId::generate());
    let counter = RequestCounter::default();
    let config = config.on_table(table)?;
    let store = Store::connect(&config, Some(counter.clone())).await;
    store
        .ensure_table_without_stream()
        .await
        .map_err(|e| e.to_string())?;
    let result = run_all(&args, &store, &config, &counter).await;
    let _ = store.delete_table().await;
    result
}

async fn run_all(
    args: &BenchArgs,
    store: &Store,
    config: &StoreConfig,
    counter: &RequestCounter,
) -> Result<(), String> {
    if !args.winners.skip_winners {
        winners::end_to_end(&args.winners, store).await?;
    }
    if !args.refunds.skip_refunds {
        refunds::run(&args.refunds, store, counter).await?;
    }
    let tickets = if args.tickets.skip_tickets {
        None
    } else {
        Some(sell_out::compare(&args.tickets, store, counter).await?)
    };
    if !args.bundles.skip_bundles {
        bundles::run(&args.bundles, store, counter).await?;
    }
    if !args.mixed_sale.skip_mixed_sale {
        mixed_sale::run(&args.mixed_sale, store, config).await?;
    }
    let write_rate_time = Duration::from_secs(args.write_rate_seconds);
    let orders = if args.orders.skip_orders {
        None
    } else {
        let around = (!args.skip_write_rate).then_some(write_rate_time);
        Some(orders::run(&args.orders, store, counter, around).await?)
    };
    if !args.single.skip_single {
        single::run(&args.single, store, counter).await?;
    }
    let audit = if args.audit.skip_audit {
        None
    } else {
        Some(audit::run(&args.audit, store).await?)
    };
    if args.skip_write_rate {
        return Ok(());
    }
    let ticket_write_rates = match tickets {
        Some(_) => Some(write_rate::measure_ticket_shapes(store, write_rate_time).await?),
        None => None,
    };
    println!();
    println!("Against the write rate:");
    if let (Some((tally, naive)), Some(rates)) = (&tickets, &ticket_write_rates) {
        let purchases = &rates.purchases;
        let transactions = tally.by_operation.of("TransactWriteItems") as f64;
        let transactions_per_s = transactions / tally.elapsed.as_secs_f64();
        let bound = purchases.requests_per_s() * tally.tickets as f64 / tally.purchases as f64;
        println!(
            "  Tally sent {transactions_per_s:.0} transactions/s ({:.0}% of the write rate); with one transaction per purchase and",
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
                "  naive sent {puts_per_s:.0} PutItem/s ({:.0}% of the write rate, most of them failing their condition)",
                100.0 * puts_per_s / rates.single_puts.requests_per_s()
            );
        }
    }
    if let Some((orders, bracket)) = orders
        .as_ref()
        .and_then(|o| o.bracket.as_ref().map(|b| (o, b)))
    {
        println!(
            "  100-item write rate, 4 writers: {:.0} items/s before the fast batches, {:.0} between them and the gapless ones, {:.0} after those;",
            bracket.before_fast.items_per_s(),
            bracket.between.items_per_s(),
            bracket.after_gapless.items_per_s()
        );
        println!("    each import's share below is of the mean on either side of it");
        for (label, figures, rate) in [
            ("fast", &orders.fast, bracket.around_fast()),
            ("gapless", &orders.gapless, bracket.around_gapless()),
        ] {
            // Every order is two new items: its number and its (source, reference).
            let items = 2.0 * figures.orders_per_s();
            println!(
                "  {label} batches wrote {items:.0} items/s ({:.0}% of the 100-item write rate, {rate:.0})",
                100.0 * items / rate,
            );
        }
        let gapless = &orders.gapless;
        let share = 100.0 * 2.0 * gapless.orders_per_s() / bracket.around_gapless();
        println!(
            "  gapless: {:.2} WCU per order (table; {}), {:.2} with the index; {share:.0}% of the write rate ({})",
            gapless.table_wcu_per_order(),
            at_most(gapless.table_wcu_per_order(), GAPLESS_WCU, ""),
            gapless.total_wcu_per_order(),
            at_least(share, GAPLESS_WRITE_RATE, "%")
        );
        let serial = &bracket.serial_after_gapless;
        println!(
            "  gapless writers take turns on one counter: {:.0}% of the 1-writer write rate right after them ({:.0} items/s; 4 writers reached {:.1}x that)",
            100.0 * 2.0 * gapless.orders_per_s() / serial.items_per_s(),
            serial.items_per_s(),
            bracket.after_gapless.items_per_s() / serial.items_per_s()
        );
        if let Some(audit) = &audit {
            let per_order = Duration::from_secs_f64(1.0 / gapless.orders_per_s());
            println!(
                "  chain: hashing an order takes {:.1} µs, {:.2}% of a gapless order's {:.0} µs",
                audit.hash_per_order.as_secs_f64() * 1e6,
                100.0 * audit.hash_per_order.as_secs_f64() / per_order.as_secs_f64(),
                per_order.as_secs_f64() * 1e6
            );
        }
    }
    if let Some(audit) = &audit {
        println!(
            "  audit of a {}-order period: {:.2} s (filled in {:.1} s)",
            audit.orders,
            audit.audit.as_secs_f64(),
            audit.fill.as_secs_f64()
        );
    }
    Ok(())
}

/// Creates a draw for a part of the bench: no name, schedule, beacon or instant wins.
async fn create_draw(store: &Store, draw_id: &DrawId, config: DrawConfig) -> Result<(), String> {
    // A create is an operator action in a transaction with its journal entry: an outcome
    // lost under faults is repeated as a client would (a repeat answers the draw made).
    let service = TicketService::new(store.clone());
    let draw = NewDraw::new(draw_id.clone(), config);
    sell_out::as_a_client(&AtomicU64::new(0), || service.create_draw(draw.clone()))
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}
