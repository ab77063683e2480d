//! Bundles: purchases of more tickets than one transaction holds, one after another in a
//! fresh draw. What each costs in write units by DynamoDB's pricing rules, against the
//! floor of a ticket item written in a transaction (2 units), and in requests and time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::Args;
use tally::store::{RequestCounter, Store};
use tally::tickets::{NewDraw, TicketService};
use tally_domain::draw::DrawConfig;
use tally_domain::ids::{DrawId, PaymentId};
use tally_domain::purchase::PurchaseRequest;

use super::sell_out::buy;
use super::targets::{BUNDLE_WCU, at_most};

#[derive(Args)]
pub struct BundleBenchArgs {
    /// Tickets in each bundle (the draw's `max_per_purchase`).
    #[arg(long, default_value_t = 500)]
    bundle_tickets: u32,
    /// Bundles bought, one after another.
    #[arg(long, default_value_t = 10)]
    bundles: u32,
    /// Tickets in the draw.
    #[arg(long, default_value_t = 100_000)]
    bundle_draw_tickets: u64,
    /// Skip the bundle benchmark.
    #[arg(long)]
    pub skip_bundles: bool,
}

pub(super) async fn run(
    args: &BundleBenchArgs,
    store: &Store,
    counter: &RequestCounter,
) -> Result<(), String> {
    println!();
    println!(
        "Bundles: {} purchases of {} tickets each in a draw of {}",
        args.bundles, args.bundle_tickets, args.bundle_draw_tickets
    );
    let service = TicketService::new(store.clone());
    let draw_id = DrawId::parse("bundles").map_err(|e| e.to_string())?;
    let config = DrawConfig::new(args.bundle_draw_tickets, Some(args.bundle_tickets), None)
        .map_err(|e| e.to_string())?;
    service
        .create_draw(NewDraw::new(draw_id.clone(), config))
        .await
        .map_err(|e| e.to_string())?;
    let meter = store.write_meter();
    let (table_before, index_before) = (meter.table_units(), meter.index_units());
    let requests_before = counter.snapshot();
    let started = Instant::now();
    let mut tickets = 0;
    let repeats = AtomicU64::new(0);
    for bundle in 0..args.bundles {
        let request = PurchaseRequest {
            draw_id: draw_id.clone(),
            payment_id: PaymentId::parse(&format!("bundle-{bundle}")).map_err(|e| e.to_string())?,
            quantity: args.bundle_tickets,
            numbers: None,
            payer_id: None,
            token: None,
            channel: Default::default(),
            amount: None,
        };
        let receipt = buy(&service, request, &repeats)
            .await
            .map_err(|e| e.to_string())?;
        tickets += receipt.purchase.tickets.len() as u64;
    }
    let elapsed = started.elapsed();
    let table = meter.table_units() - table_before;
    let index = meter.index_units() - index_before;
    let requests = counter.snapshot().since(&requests_before);
    let per_ticket = table as f64 / tickets as f64;
    println!(
        "  WCU per ticket, table        {per_ticket:>8.2}  (pricing rules, floor 2.0 for a ticket item in a transaction; {})",
        at_most(per_ticket, BUNDLE_WCU, "")
    );
    println!(
        "  WCU per ticket, with indexes {:>8.2}",
        (table + index) as f64 / tickets as f64
    );
    println!(
        "  requests per bundle          {:>8.1}  ({requests})",
        requests.total() as f64 / f64::from(args.bundles)
    );
    println!(
        "  503 answers repeated         {:>8}",
        repeats.load(Ordering::Relaxed)
    );
    println!(
        "  time per bundle              {:>8.0} ms",
        elapsed.as_secs_f64() * 1_000.0 / f64::from(args.bundles)
    );
    Ok(())
}
