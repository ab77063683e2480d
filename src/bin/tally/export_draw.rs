//! `tally export-draw DRAW_ID`: every purchase of a draw as CSV (payment, payer, tickets,
//! channel, status), with a progress bar counting the tickets sold, and the entries by
//! channel at the end.

use std::path::PathBuf;

use clap::Args;
use futures::TryStreamExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tally::domain::ids::DrawId;
use tally::domain::purchase::Channel;
use tally::store::{Store, StoreConfig};
use tally::tickets::TicketService;

use super::spreadsheet::SpreadsheetCsv;

/// `[#########>-----] 42000/100000 tickets  42%  ETA 7s` on a terminal.
const BAR_TEMPLATE: &str = "[{bar:30}] {pos}/{len} tickets  {percent:>3}%  ETA {eta}";

#[derive(Args)]
pub struct ExportArgs {
    draw_id: String,
    /// Where the CSV goes (default: DRAW_ID.csv).
    #[arg(long)]
    output: Option<PathBuf>,
}

pub async fn run(args: ExportArgs, config: StoreConfig) -> Result<(), String> {
    let draw_id = DrawId::parse(&args.draw_id).map_err(|e| e.to_string())?;
    let service = TicketService::new(Store::connect(&config, None).await);
    let summary = service
        .get_draw(&draw_id)
        .await
        .map_err(|e| e.to_string())?;
    let path = args
        .output
        .unwrap_or_else(|| PathBuf::from(format!("{draw_id}.csv")));
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut csv = SpreadsheetCsv::new(std::io::BufWriter::new(file));
    let bar = ProgressBar::with_draw_target(Some(summary.sold), ProgressDrawTarget::stderr())
        .with_style(
            ProgressStyle::with_template(BAR_TEMPLATE)
                .map_err(|e| e.to_string())?
                .progress_chars("#>-"),
        );
    csv.write_record([
        "payment_id",
        "payer_id",
        "quantity",
        "tickets",
        "channel",
        "status",
        "created_at",
        "void_reason",
        "voided_at",
    ])?;
    let mut purchases = 0u64;
    let mut postal = 0u64;
    let mut stream = std::pin::pin!(service.export_purchases(&summary.draw));
    while let Some(purchase) = stream.try_next().await.map_err(|e| e.to_string())? {
        let tickets: Vec<String> = purchase.tickets.iter().map(u64::to_string).collect();
        let time = tally::domain::time::rfc3339_millis;
        csv.write_record([
            purchase.payment_id.as_str(),
            purchase.payer_id.as_ref().map_or("", |p| p.as_str()),
            &purchase.quantity.to_string(),
            &tickets.join(" "),
            purchase.channel.as_str(),
            if purchase.void.is_some() {
                "void"
            } else {
                "active"
            },
            &time(purchase.created_at),
            purchase.void.as_ref().map_or("", |v| v.reason.as_str()),
            &purchase.void.as_ref().map_or(String::new(), |v| time(v.at)),
        ])?;
        purchases += 1;
        if purchase.channel == Channel::Postal {
            postal += u64::from(purchase.quantity);
        }
        bar.inc(u64::from(purchase.quantity));
    }
    csv.flush()?;
    bar.finish_and_clear();
    println!(
        "{purchases} purchases ({} tickets: {} online, {postal} postal) of draw {draw_id} written to {}",
        bar.position(),
        bar.position() - postal,
        path.display()
    );
    Ok(())
}
