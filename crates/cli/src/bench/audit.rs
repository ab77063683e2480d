//! The audit benchmark: one source fills a period of a gapless series (batches of 1,000),
//! then the period is audited: every entry read from the period index in pages and the
//! hash chain recomputed. Also what the chain costs a gapless order: the time to hash it
//! and the bytes it adds to the order's items.

use std::time::{Duration, Instant};
use tally_domain::journal::Operator;

use clap::Args;
use tally::orders::{AuditScope, ItemOutcome, OrderInput, OrderService};
use tally::store::Store;
use tally_domain::access::SourceAccess;
use tally_domain::chain::{GENESIS, order_link};
use tally_domain::ids::{ExternalRef, SeriesId, SourceId};
use tally_domain::order::{NewOrder, Order, OrderData};
use tally_domain::series::{Reset, SeriesDefinition};

#[derive(Args)]
pub struct AuditBenchArgs {
    /// Orders in the audited period.
    #[arg(long, default_value_t = 100_000)]
    audit_orders: usize,
    /// Skip the audit benchmark.
    #[arg(long)]
    pub skip_audit: bool,
}

/// What the audit part measured.
pub struct AuditFigures {
    pub orders: usize,
    pub fill: Duration,
    pub audit: Duration,
    /// Hashing one order into the chain.
    pub hash_per_order: Duration,
}

pub async fn run(args: &AuditBenchArgs, store: &Store) -> Result<AuditFigures, String> {
    println!(
        "\nAuditing a period of {} gapless orders (filled by one source in batches of 1,000)",
        args.audit_orders
    );
    let service = OrderService::new(store.clone());
    let series_id = SeriesId::parse("AUDIT").expect("valid id");
    let definition = SeriesDefinition::new("AUDIT{yy}{seq:6}", Reset::Yearly, true, 1)
        .map_err(|e| e.to_string())?;
    service
        .define_series(&series_id, definition, &Operator::local())
        .await
        .map_err(|e| e.to_string())?;
    let source = SourceId::parse("audit-src").expect("valid id");
    let started = Instant::now();
    let mut sample = None;
    for start in (0..args.audit_orders).step_by(1_000) {
        let inputs: Vec<OrderInput> = (start..(start + 1_000).min(args.audit_orders))
            .map(|i| {
                let external_ref = format!("a-{i}");
                OrderInput {
                    order: Ok(NewOrder {
                        external_ref: ExternalRef::parse(&external_ref).expect("valid"),
                        data: OrderData::parse(Some(&format!(r#"{{"total": "{i}.00"}}"#)))
                            .expect("valid"),
                        corrects: None,
                    }),
                    external_ref: Some(external_ref),
                }
            })
            .collect();
        for outcome in service
            .create_orders(&series_id, &source, inputs, &SourceAccess::All)
            .await
            .map_err(|e| e.to_string())?
        {
            match outcome {
                ItemOutcome::Created(order) => sample = Some(order),
                other => return Err(format!("unexpected outcome {other:?}")),
            }
        }
    }
    let fill = started.elapsed();
    println!(
        "  filled in                   {:>10.2} s ({:.0} orders/s)",
        fill.as_secs_f64(),
        args.audit_orders as f64 / fill.as_secs_f64()
    );
    let started = Instant::now();
    let period = service
        .period_of(&series_id, None)
        .await
        .map_err(|e| e.to_string())?;
    let audit = service
        .audit_period(period, AuditScope::default(), &|_| {})
        .await
        .map_err(|e| e.to_string())?;
    let audit_time = started.elapsed();
    let intact = audit
        .report
        .chain
        .as_ref()
        .is_some_and(|c| c.first_break.is_none());
    if audit.report.orders != args.audit_orders as u64 || !intact || !audit.report.gaps.is_empty() {
        return Err(format!("the audit found a fault: {:?}", audit.report.gaps));
    }
    println!(
        "  audit time                  {:>10.2} s ({:.0} orders/s read and re-hashed; chain intact, no gap)",
        audit_time.as_secs_f64(),
        args.audit_orders as f64 / audit_time.as_secs_f64()
    );
    let sample = sample.ok_or("no order was created")?;
    let hash_per_order = time_hashing(&sample);
    println!(
        "  hashing one order           {:>10.2} µs; the hash adds {} bytes to each of its two items",
        hash_per_order.as_secs_f64() * 1e6,
        "hash".len() + sample.hash.as_ref().map_or(0, String::len)
    );
    Ok(AuditFigures {
        orders: args.audit_orders,
        fill,
        audit: audit_time,
        hash_per_order,
    })
}

/// The mean time to link one order into a chain, over 100,000 links.
fn time_hashing(order: &Order) -> Duration {
    const LINKS: u32 = 100_000;
    let started = Instant::now();
    let mut head = GENESIS;
    for _ in 0..LINKS {
        head = order_link(&head, order);
    }
    std::hint::black_box(head);
    started.elapsed() / LINKS
}
