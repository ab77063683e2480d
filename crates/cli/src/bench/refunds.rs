//! A bulk refund: every purchase of a draw voided by a few operators at once, each void
//! an operator action with its journal entry, so every one of them moves the journal's
//! one head. The figures are how long 10,000 take against DynamoDB Local and what a void
//! costs in requests and write units (the head's contention among them), and the journal
//! is checked to have grown by exactly one entry per void.

use std::time::Instant;

use clap::Args;
use tally::store::{RequestCounter, Store};
use tally::tickets::TicketService;
use tally_domain::draw::DrawConfig;
use tally_domain::ids::{DrawId, PaymentId};
use tally_domain::journal::Operator;
use tally_domain::purchase::PurchaseRequest;

use super::create_draw;

#[derive(Args)]
pub struct RefundBenchArgs {
    /// Purchases of one ticket sold, then all voided.
    #[arg(long, default_value_t = 10_000)]
    refunds: u64,
    /// Operators voiding at once.
    #[arg(long, default_value_t = 8)]
    refund_operators: u64,
    /// Skip the bulk refund.
    #[arg(long)]
    pub skip_refunds: bool,
}

/// Tries of one void before the bench gives up, as an operator's script would repeat a
/// 503.
const VOID_TRIES: u32 = 20;

pub(super) async fn run(
    args: &RefundBenchArgs,
    store: &Store,
    counter: &RequestCounter,
) -> Result<(), String> {
    let count = args.refunds;
    let draw_id = DrawId::parse("bulk-refund").expect("valid id");
    let config = DrawConfig::new(count, None, None).map_err(|e| e.to_string())?;
    create_draw(store, &draw_id, config).await?;
    println!("\nA bulk refund of {count} purchases (DynamoDB Local)");
    let payment = |i: u64| PaymentId::parse(&format!("refund-{i}")).expect("valid id");
    let mut buyers = Vec::new();
    for buyer in 0..16 {
        let service = TicketService::new(store.clone());
        let draw_id = draw_id.clone();
        buyers.push(tokio::spawn(async move {
            for i in (buyer..count).step_by(16) {
                let request = PurchaseRequest {
                    draw_id: draw_id.clone(),
                    payment_id: payment(i),
                    quantity: 1,
                    numbers: None,
                    payer_id: None,
                    token: None,
                    channel: Default::default(),
                    amount: None,
                };
                service.purchase(request).await.map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(())
        }));
    }
    for buyer in buyers {
        buyer.await.map_err(|e| e.to_string())??;
    }
    let before = store.journal_head().await.map_err(|e| e.to_string())?.last;
    let (requests_before, units_before) = (counter.snapshot(), store.write_meter().table_units());
    let started = Instant::now();
    let operators = args.refund_operators.max(1);
    let mut voiders = Vec::new();
    for operator in 0..operators {
        let service = TicketService::new(store.clone());
        let draw_id = draw_id.clone();
        let by = Operator::named(format!("bench-operator-{operator}"));
        voiders.push(tokio::spawn(async move {
            let mut repeats = 0;
            for i in (operator..count).step_by(operators as usize) {
                let mut tries = 1;
                while let Err(err) = service
                    .void_purchase(&draw_id, &payment(i), "bulk refund", &by)
                    .await
                {
                    if tries == VOID_TRIES {
                        return Err(format!("refund-{i}: {err}"));
                    }
                    tries += 1;
                    repeats += 1;
                }
            }
            Ok::<_, String>(repeats)
        }));
    }
    let mut repeats = 0;
    for voider in voiders {
        repeats += voider.await.map_err(|e| e.to_string())??;
    }
    let took = started.elapsed();
    let requests = counter.snapshot().since(&requests_before);
    let units = store.write_meter().table_units() - units_before;
    let after = store.journal_head().await.map_err(|e| e.to_string())?.last;
    if after - before != count {
        return Err(format!(
            "{count} voids journalled {} entries",
            after - before
        ));
    }
    println!(
        "  {count} voids by {operators} operators: {:.1} s, {:.0} voids/s, {repeats} voids repeated; \
         journal {before} -> {after}, one entry each",
        took.as_secs_f64(),
        count as f64 / took.as_secs_f64()
    );
    println!(
        "  per void: {:.2} requests, {:.2} WCU (by operation: {requests})",
        requests.total() as f64 / count as f64,
        units as f64 / count as f64
    );
    Ok(())
}
