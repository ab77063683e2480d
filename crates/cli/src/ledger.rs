//! `tally audit`: a period of a series, straight from the table, with a progress bar on a
//! terminal (a plain line now and then when stderr is a log); what `tally export` shares
//! with it.

use std::sync::atomic::{AtomicU64, Ordering};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tally::orders::{AuditScope, OrderService};
use tally::store::{Store, StoreConfig};
use tally_domain::audit::Break;
use tally_domain::ids::SeriesId;
use tally_domain::series::{Period, Series};

use crate::outcome::{Failure, say};

/// `[#########>-----] 42000/100000 orders  42%  8500/s  ETA 7s`.
const BAR_TEMPLATE: &str = "[{bar:30}] {pos}/{len} entries  {percent:>3}%  {per_sec:0}  ETA {eta}";

#[derive(Args)]
pub struct PeriodArgs {
    #[arg(long)]
    pub series: String,
    /// The period: `all`, `2026`, `2026-11`, `2026-11-29` or `FY2027` (default: the
    /// current one).
    #[arg(long)]
    pub period: Option<String>,
}

/// A bar on stderr for `total` entries; indicatif hides it when stderr is not a terminal.
pub fn progress_bar(total: u64) -> ProgressBar {
    let style = ProgressStyle::with_template(BAR_TEMPLATE)
        .expect("the template is valid")
        .progress_chars("#>-");
    ProgressBar::new(total).with_style(style)
}

/// The period the arguments name, resolved once, so that a run past midnight stays in the
/// period it started in; and the entries it should hold, from its first counter to its last.
pub async fn expected_entries(
    service: &OrderService,
    store: &Store,
    args: &PeriodArgs,
) -> Result<((Series, Period), u64), String> {
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
    Ok(((series, period), total))
}

/// A broken chain is a finding (exit 1); everything else that stops it, a reason it could
/// not run (exit 2).
pub async fn audit(args: PeriodArgs, config: StoreConfig) -> Result<(), Failure> {
    let store = Store::connect(&config, None).await;
    let service = OrderService::new(store.clone());
    let ((series, period), total) = expected_entries(&service, &store, &args).await?;
    let series_id = series.series_id.clone();
    let bar = progress_bar(total);
    let read = AtomicU64::new(0);
    let progress = |n: u64| {
        read.store(n, Ordering::Relaxed);
        bar.set_position(n);
    };
    let audit = service
        .audit_period((series, period), AuditScope::default(), &progress)
        .await
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    let r = &audit.report;
    say!(
        "series {} period {}: counters {}..={}, {} orders ({} void), {} entries read",
        series_id,
        audit.period,
        r.first_counter,
        r.last_counter.map_or("-".to_owned(), |l| l.to_string()),
        r.orders,
        r.voided,
        read.load(Ordering::Relaxed)
    )?;
    for gap in &r.gaps {
        let why = gap
            .declared
            .as_ref()
            .map_or(String::new(), |m| format!(": {}", m.reason.as_str()));
        say!("gap {}..={} {}{why}", gap.from, gap.to, gap.cause.as_str())?;
    }
    for invoice in &r.credited {
        say!(
            "invoice {} corrected by {}",
            invoice.order_number,
            invoice.credit_notes.join(", ")
        )?;
    }
    let overlaps = service
        .overlaps(&audit.series)
        .await
        .map_err(|e| e.to_string())?;
    for overlap in &overlaps {
        say!(
            "series {series_id} overlaps series {} of issuer {}: both could render {} ({} and {})",
            overlap.series,
            overlap.issuer,
            overlap.example,
            overlap.format,
            overlap.other_format
        )?;
    }
    let Some(chain) = &r.chain else {
        say!("no hash chain (fast series)")?;
        return Ok(());
    };
    match &chain.first_break {
        None => {
            say!(
                "chain intact: {} links, head {}",
                chain.links,
                chain.recomputed_head
            )?;
            Ok(())
        }
        Some(Break::Entry {
            counter,
            order_number,
            ..
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_template_is_valid() {
        assert!(ProgressStyle::with_template(BAR_TEMPLATE).is_ok());
    }
}
