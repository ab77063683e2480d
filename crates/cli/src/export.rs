//! `tally export`: every entry of a period of a series as CSV, orders and declared moves in
//! counter order, straight from the table, with a progress bar on a terminal.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use tally::orders::{AUDIT_PAGE, OrderService};
use tally::store::{Store, StoreConfig};
use tally_domain::access::SourceAccess;
use tally_domain::audit::Entry;
use tally_domain::series::{Period, Series};

use super::ledger::{PeriodArgs, expected_entries, progress_bar};
use super::output_file::OutputFile;
use super::spreadsheet::SpreadsheetCsv;

#[derive(Args)]
pub struct ExportArgs {
    #[command(flatten)]
    period: PeriodArgs,
    /// Where the CSV goes, once complete (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
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

pub async fn run(args: ExportArgs, config: StoreConfig) -> Result<(), String> {
    let store = Store::connect(&config, None).await;
    let service = OrderService::new(store.clone());
    let (period, total) = expected_entries(&service, &store, &args.period).await?;
    let written = match &args.out {
        Some(path) => {
            let mut csv = SpreadsheetCsv::new(OutputFile::create(path)?);
            let written = write_entries(&mut csv, &service, period, total).await?;
            csv.into_inner()?.commit()?;
            written
        }
        None => {
            let mut csv = SpreadsheetCsv::new(std::io::stdout().lock());
            let written = write_entries(&mut csv, &service, period, total).await?;
            csv.flush()?;
            written
        }
    };
    eprintln!("{written} entries written");
    Ok(())
}

/// The header and every entry of `period`, page by page: how many entries.
async fn write_entries(
    csv: &mut SpreadsheetCsv<impl Write>,
    service: &OrderService,
    mut period: (Series, Period),
    total: u64,
) -> Result<u64, String> {
    csv.write_record(CSV_HEADER)?;
    let bar = progress_bar(total);
    let mut after = 0;
    let mut written = 0u64;
    loop {
        let page = service
            .list_period(
                period,
                after,
                // A file, not a response: no weight limits a page.
                (AUDIT_PAGE, usize::MAX),
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
        // Every page in the period of the first, even past midnight.
        period = (page.series, page.period);
    }
    bar.finish_and_clear();
    Ok(written)
}

/// One CSV row: an order, or a declared move (status `gap`, its first and last counter).
fn row(entry: &Entry) -> [String; 11] {
    let time = tally_domain::time::rfc3339_millis;
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
