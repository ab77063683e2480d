//! Lucky dips in a draw where buyers also choose their numbers and hold baskets: one
//! draw sold out by lucky dip while choosers buy chosen numbers, directly or through
//! holds that are paid, released or left to expire. Only the lucky dips are measured:
//! DynamoDB requests per purchase, and the last tenth of the dipped tickets against the
//! first (requests and latency).
//!
//! The schedule: the choosers come first, as buyers who want given numbers come as the
//! sale opens: every basket is bought at once or held. Then the lucky dips sell out the
//! draw at a steady pace over `--mixed-seconds`, while holds are paid or released (2 to
//! 10 s after they were made) or expire (the draw's shortest `hold_seconds`, 30 s), and
//! the dips take the numbers of those that ended back.

mod choosers;
mod dippers;

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use clap::Args;
use tally::store::{Store, StoreConfig};
use tally_domain::draw::DrawConfig;
use tally_domain::ids::DrawId;

use super::targets::{MIXED_REQUESTS, MIXED_TENTHS, PACED_TENTHS, at_most};
use choosers::{ChooserFigures, plan_baskets};
use dippers::{DipFigures, DipMeans, Slowest};

#[derive(Args)]
pub struct MixedSaleArgs {
    /// Tickets in the draw of the mixed sale (lucky dips among chosen and held numbers).
    #[arg(long, default_value_t = 10_000)]
    mixed_tickets: u64,
    /// Concurrent lucky-dip buyers of the mixed sale, each its own service.
    #[arg(long, default_value_t = 64)]
    mixed_buyers: usize,
    /// Processes (warm instances, one call at a time each) that serve the choosers'
    /// baskets; a basket due while all are busy waits for one.
    #[arg(long, default_value_t = 16)]
    mixed_choosers: usize,
    /// Share of the draw's numbers that choosers buy (directly or through paid holds).
    #[arg(long, default_value_t = 0.3)]
    mixed_chosen_share: f64,
    /// Share of the choosers' baskets that are held first.
    #[arg(long, default_value_t = 0.5)]
    mixed_held_share: f64,
    /// Share of the holds left to expire.
    #[arg(long, default_value_t = 0.2)]
    mixed_expired_share: f64,
    /// Share of the holds released; the other holds are paid.
    #[arg(long, default_value_t = 0.1)]
    mixed_released_share: f64,
    /// Seconds the lucky dips are spread over (0: as fast as the buyers can).
    #[arg(long, default_value_t = 90)]
    mixed_seconds: u64,
    /// The draw's `hold_seconds` (30 is the least a draw allows).
    #[arg(long, default_value_t = 30)]
    mixed_hold_seconds: u32,
    /// Tickets sold out by lucky dip alone before the mixed sale, to warm up DynamoDB
    /// Local's JVM (not measured).
    #[arg(long, default_value_t = 3_000)]
    mixed_warmup_tickets: u64,
    /// Stripes of the mixed sale's draw (default: as a draw of its size gets them).
    #[arg(long)]
    mixed_stripes: Option<u32>,
    /// Skip the mixed sale.
    #[arg(long)]
    pub skip_mixed_sale: bool,
}

/// The share of the slowest lucky dips broken down: those past the p99.
const SLOWEST_SHARE: f64 = 0.01;

/// What the lucky dips and the choosers share while the draw sells.
pub(super) struct Sale {
    pub(super) draw_id: DrawId,
    pub(super) total: u64,
    /// Tickets sold by anyone: the sale is over when it reaches `total`.
    pub(super) sold: AtomicU64,
    /// Answers of 503 repeated, as clients do.
    pub(super) repeats: AtomicU64,
    /// After this the bench gives up: something stayed unsold.
    pub(super) deadline: Instant,
}

impl Sale {
    fn new(draw_id: DrawId, total: u64, longest: Duration) -> Arc<Self> {
        Arc::new(Self {
            draw_id,
            total,
            sold: AtomicU64::new(0),
            repeats: AtomicU64::new(0),
            deadline: Instant::now() + longest,
        })
    }
}

pub(super) async fn run(
    args: &MixedSaleArgs,
    store: &Store,
    config: &StoreConfig,
) -> Result<(), String> {
    let total = args.mixed_tickets;
    let seconds = Duration::from_secs(args.mixed_seconds);
    let hold = Duration::from_secs(u64::from(args.mixed_hold_seconds));
    let longest = seconds * 2 + hold + Duration::from_secs(120);
    if args.mixed_warmup_tickets > 0 {
        println!();
        println!(
            "Warming up with {} tickets sold by lucky dip (not measured)",
            args.mixed_warmup_tickets
        );
        let warmup = DrawId::parse("mixed-warmup").expect("valid id");
        create_mixed_draw(store, &warmup, args.mixed_warmup_tickets, args).await?;
        let sale = Sale::new(warmup, args.mixed_warmup_tickets, longest);
        dippers::run(sale, config, args.mixed_buyers, f64::INFINITY).await?;
    }
    let draw_id = DrawId::parse("mixed").expect("valid id");
    let stripes = create_mixed_draw(store, &draw_id, total, args).await?;
    let baskets = plan_baskets(args, total);
    // With nothing chosen the sale is T7's paced sale, with its own bound on the tenths.
    let tenths_target = if baskets.is_empty() {
        PACED_TENTHS
    } else {
        MIXED_TENTHS
    };
    let planned_chosen = baskets
        .iter()
        .filter(|b| b.bought())
        .map(|b| b.len())
        .sum::<u64>();
    println!();
    println!(
        "Lucky dips among chosen and held numbers: {total} tickets in {stripes} stripes; first {} baskets of 1 to 10 chosen numbers",
        baskets.len()
    );
    println!(
        "  ({} processes): half bought at once, half held (hold_seconds {}); of the holds {:.0}% left to expire, {:.0}% released",
        args.mixed_choosers,
        args.mixed_hold_seconds,
        100.0 * args.mixed_expired_share,
        100.0 * args.mixed_released_share
    );
    println!(
        "  and the rest paid 2 to 10 s after holding, while {} lucky-dip buyers sell out the draw at a steady pace over {} s",
        args.mixed_buyers, args.mixed_seconds
    );
    let sale = Sale::new(draw_id, total, longest);
    let choosing = Instant::now();
    let placed = choosers::place(sale.clone(), store.clone(), args.mixed_choosers, baskets).await?;
    println!(
        "  baskets placed in {:.1} s; lucky dips start",
        choosing.elapsed().as_secs_f64()
    );
    let dip_pace = (total - planned_chosen) as f64 / seconds.as_secs_f64();
    let dips = dippers::run(sale.clone(), config, args.mixed_buyers, dip_pace).await?;
    let chosen = placed.finish().await?;
    print_figures(&sale, &chosen, &dips, tenths_target);
    Ok(())
}

/// Creates a draw of `total` tickets with the part's `hold_seconds`; answers its stripes.
async fn create_mixed_draw(
    store: &Store,
    draw_id: &DrawId,
    total: u64,
    args: &MixedSaleArgs,
) -> Result<u32, String> {
    let config = DrawConfig::new(total, None, args.mixed_stripes)
        .and_then(|c| c.with_hold_seconds(Some(args.mixed_hold_seconds)))
        .map_err(|e| e.to_string())?;
    super::create_draw(store, draw_id, config).await?;
    Ok(config.stripes())
}

fn print_figures(sale: &Sale, chosen: &ChooserFigures, dips: &DipFigures, tenths_target: f64) {
    let total = sale.total as f64;
    println!(
        "  choosers: {} tickets bought chosen ({} purchases), {} through {} paid holds: {:.1}% of the draw chosen",
        chosen.bought.tickets,
        chosen.bought.count,
        chosen.paid.tickets,
        chosen.paid.count,
        100.0 * (chosen.bought.tickets + chosen.paid.tickets) as f64 / total
    );
    let expired = chosen.expired.count + chosen.paid_late.count;
    let holds = chosen.paid.count + chosen.released.count + expired;
    println!(
        "    {holds} holds: {} paid, {} released ({} tickets), {expired} expired ({} tickets, {:.0}% of the holds; {} of them paid too late)",
        chosen.paid.count,
        chosen.released.count,
        chosen.released.tickets,
        chosen.expired.tickets + chosen.paid_late.tickets,
        100.0 * expired as f64 / holds.max(1) as f64,
        chosen.paid_late.count
    );
    println!(
        "    {} answers numbers_taken (numbers a lucky dip sold first: the basket takes others from a fresh grid), {} baskets given up, {} holds turned away (holds_full, tickets_held)",
        chosen.taken, chosen.given_up, chosen.turned_away
    );
    println!(
        "  lucky dips: {} purchases, {} tickets, the last sold after {:.1} s ({:.0} tickets/s)",
        dips.purchases(),
        dips.tickets(),
        dips.elapsed.as_secs_f64(),
        dips.tickets() as f64 / dips.elapsed.as_secs_f64()
    );
    let per_purchase = dips.requests_per_purchase();
    println!(
        "  DynamoDB requests per lucky dip   {per_purchase:>7.3}  ({})",
        at_most(per_purchase, MIXED_REQUESTS, "")
    );
    println!(
        "    every request of the dippers     {:>6.3}  ({} answers sold out before the last sale, while numbers were held or purchases under way; {} buyers)",
        dips.all_requests.total() as f64 / dips.purchases() as f64,
        dips.refusals,
        dips.buyers
    );
    println!("    by operation: {}", dips.all_requests);
    let (first_units, last_units) = dips.units_tenths();
    println!(
        "  WCU per dipped ticket (pricing)   {:>7.2}  (per lucky dip, first 10% / last 10%: {first_units:.2} / {last_units:.2})",
        dips.units_per_ticket()
    );
    println!(
        "  latency p50 / p99                 {:>7.1} / {:.1} ms",
        dips.percentile(0.5),
        dips.percentile(0.99)
    );
    let (first, last) = dips.requests_tenths();
    let (first_ms, last_ms) = dips.latency_tenths();
    println!(
        "  first 10% / last 10% of the dipped tickets: requests {first:.3} / {last:.3} (last {:.2}x the first, {}),",
        last / first,
        at_most(last / first, tenths_target, "x")
    );
    println!(
        "    mean latency {first_ms:.1} / {last_ms:.1} ms (last {:.2}x the first, {})",
        last_ms / first_ms,
        at_most(last_ms / first_ms, tenths_target, "x")
    );
    println!("  requests per lucky dip by operation, first 10% / last 10%:");
    for (operation, first, last) in dips.operations_by_tenth() {
        println!("    {operation:<20} {first:>6.3} / {last:.3}");
    }
    print_slowest(&dips.slowest(SLOWEST_SHARE));
    let repeats = sale.repeats.load(std::sync::atomic::Ordering::Relaxed);
    if repeats > 0 {
        println!("  clients repeated {repeats} answers of 503");
    }
}

/// Where the tail's time goes: a buyer's first dips (a cold view) or others, requests, and
/// time in DynamoDB calls against time in the process.
fn print_slowest(slowest: &Slowest) {
    println!(
        "  slowest {:.0}% of the lucky dips ({}, from {:.1} ms): {} a buyer's first; p99 without first dips {:.1} ms",
        100.0 * SLOWEST_SHARE,
        slowest.count,
        slowest.from_ms,
        slowest.first,
        slowest.p99_later
    );
    for (label, means) in [("slowest", &slowest.slowest), ("all", &slowest.all)] {
        print_means(label, means);
    }
}

fn print_means(label: &str, means: &DipMeans) {
    let operations: Vec<String> = means
        .operations
        .iter()
        .map(|(o, n)| format!("{o} {n:.2}"))
        .collect();
    println!(
        "    {label:<8} {:.1} ms a dip: {:.1} in DynamoDB calls ({:.1} in flight), {:.1} in the process; {:.2} requests ({})",
        means.latency,
        means.in_calls,
        means.in_flight,
        means.latency - means.in_calls,
        means.requests,
        operations.join(", ")
    );
}
