//! `tally audit` and `tally export`: a period of a series, straight from the table, with a
//! progress bar on a terminal (a plain line now and then when stderr is a log).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tally::domain::access::SourceAccess;
use tally::domain::audit::{Break, Entry};
use tally::domain::ids::SeriesId;
use tally::orders::{AUDIT_PAGE, AuditScope, OrderService};
use tally::store::{Store, StoreConfig};

use super::spreadsheet::SpreadsheetCsv;
use crate::outcome::Failure;

/// `[#########>-----] 42000/100000 orders  42%  8500/s  ETA 7s`.
const BAR_TEMPLATE: &str = "[{bar:30}] {pos}/{len} entries  {percent:>3}%  {per_sec:0}  ETA {eta}";

#[derive(Args)]
pub struct PeriodArgs {
    #[arg(long)]
    series: String,
    /// The period: `all`, `2026`, `2026-11`, `2026-11-29` or `FY2027` (default: the
    /// current one).
    #[arg(long)]
    period: Option<String>,
}

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    period: PeriodArgs,
    /// Where the CSV goes (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// A bar on stderr for `total` entries; indicatif hides it when stderr is not a terminal.
fn progress_bar(total: u64) -> ProgressBar {
    let style = ProgressStyle::with_template(BAR_TEMPLATE)
        .expect("the template is valid")
        .progress_chars("#>-");
    ProgressBar::new(total).with_style(style)
}

/// The entries a period should hold: from its first counter to its last.
async fn expected_entries(
    service: &OrderService,
    store: &Store,
    args: &PeriodArgs,
) -> Result<(SeriesId, u64), String> {
    let series_id = SeriesId::parse(&args.series).map_err(|e| e.to_string())?;
    let (series, period) = service
        .period_of(&series_id, args.period.as_deref())
        .await
        .map_err(|e| e.to_string())?;
    let last = store
        .get_counter(&series_id, &period)
        .await
        .map_err(|e| e.to_string())?
        .and_then(|c| c.last);
    let total = last.map_or(0, |last| (last + 1).saturating_sub(series.definition.start));
    Ok((series_id, total))
}

/// A broken chain is a finding (exit 1); everything else that stops it, a reason it could
/// not run (exit 2).
pub async fn audit(args: PeriodArgs, config: StoreConfig) -> Result<(), Failure> {
    let store = Store::connect(&config, None).await;
    let service = OrderService::new(store.clone());
    let (series_id, total) = expected_entries(&service, &store, &args).await?;
    let bar = progress_bar(total);
    let read = AtomicU64::new(0);
    let progress = |n: u64| {
        read.store(n, Ordering::Relaxed);
        bar.set_position(n);
    };
    let audit = service
        .audit_period(
            &series_id,
            args.period.as_deref(),
            AuditScope::default(),
            &progress,
        )
        .await
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    let r = &audit.report;
    println!(
        "series {} period {}: counters {}..={}, {} orders ({} void), {} entries read",
        series_id,
        audit.period,
        r.first_counter,
        r.last_counter.map_or("-".to_owned(), |l| l.to_string()),
        r.orders,
        r.voided,
        read.load(Ordering::Relaxed)
    );
    for gap in &r.gaps {
        let why = gap
            .declared
            .as_ref()
            .map_or(String::new(), |m| format!(": {}", m.reason.as_str()));
        println!("gap {}..={} {}{why}", gap.from, gap.to, gap.cause.as_str());
    }
    for invoice in &r.credited {
        println!(
            "invoice {} corrected by {}",
            invoice.order_number,
            invoice.credit_notes.join(", ")
        );
    }
    let Some(chain) = &r.chain else {
        println!("no hash chain (fast series)");
        return Ok(());
    };
    match &chain.first_break {
        None => {
            println!(
                "chain intact: {} links, head {}",
                chain.links, chain.recomputed_head
            );
            Ok(())
        }
        Some(Break::Entry {
            counter,
            order_number,
        }) => Err(Failure::Found(format!(
            "chain broken at counter {counter} ({}): its stored content no longer matches its hash",
            order_number.as_deref().unwrap_or("a declared move")
        ))),
        Some(Break::Head) => Err(Failure::Found(format!(
            "chain broken at its head: the counter carries {}, the entries end at {}",
            chain.stored_head.as_deref().unwrap_or("none"),
            chain.recomputed_head
        ))),
    }
}

const CSV_HEADER: [&str; 11] = [
    "counter",
    "to_counter",
    "order_number",
    "status",
    "source",
    "external_ref",
    "created_at",
    "reason",
    "voided_at",
    "data",
    "hash",
];

pub async fn export(args: ExportArgs, config: StoreConfig) -> Result<(), String> {
    let store = Store::connect(&config, None).await;
    let service = Arc::new(OrderService::new(store.clone()));
    let (series_id, total) = expected_entries(&service, &store, &args.period).await?;
    let out: Box<dyn Write> = match &args.out {
        Some(path) => {
            Box::new(std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?)
        }
        None => Box::new(std::io::stdout().lock()),
    };
    let mut csv = SpreadsheetCsv::new(out);
    csv.write_record(CSV_HEADER)?;
    let bar = progress_bar(total);
    let mut after = 0;
    let mut written = 0u64;
    loop {
        let page = service
            .list_period(
                &series_id,
                args.period.period.as_deref(),
                after,
                AUDIT_PAGE,
                &SourceAccess::All,
            )
            .await
            .map_err(|e| e.to_string())?;
        for entry in &page.entries {
            csv.write_record(row(entry))?;
            written += 1;
        }
        bar.set_position(written);
        match page.next_after {
            Some(next) => after = next,
            None => break,
        }
    }
    csv.flush()?;
    bar.finish_and_clear();
    eprintln!("{written} entries written");
    Ok(())
}

/// One CSV row: an order, or a declared move (status `gap`, its first and last counter).
fn row(entry: &Entry) -> [String; 11] {
    let time = tally::domain::time::rfc3339_millis;
    match entry {
        Entry::Order(o) => [
            o.counter.to_string(),
            String::new(),
            o.order_number.clone(),
            if o.void.is_some() { "void" } else { "active" }.to_owned(),
            o.source.to_string(),
            o.external_ref.to_string(),
            time(o.created_at),
            o.void
                .as_ref()
                .map_or(String::new(), |v| v.reason.as_str().to_owned()),
            o.void.as_ref().map_or(String::new(), |v| time(v.at)),
            o.data.as_raw().to_owned(),
            o.hash.clone().unwrap_or_default(),
        ],
        Entry::Move(m) => [
            m.from.to_string(),
            m.to.to_string(),
            String::new(),
            "gap".to_owned(),
            String::new(),
            String::new(),
            time(m.at),
            m.reason.as_str().to_owned(),
            String::new(),
            String::new(),
            m.hash.clone().unwrap_or_default(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_template_is_valid() {
        assert!(ProgressStyle::with_template(BAR_TEMPLATE).is_ok());
    }
}
