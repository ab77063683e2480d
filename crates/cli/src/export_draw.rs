//! `tally export-draw DRAW_ID`: every purchase of a draw as CSV (payment, payer, tickets,
//! channel, status, what the buyer was charged, whether a void came after the freeze), or
//! those of one status or channel (`--status`, `--channel`, as the API's listing filters
//! them), with a progress bar counting the tickets read, and the tickets exported by
//! channel at the end, voided ones included.

use std::path::PathBuf;

use clap::Args;
use futures::TryStreamExt;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tally::store::{Store, StoreConfig};
use tally::tickets::{PurchaseFilter, TicketService};
use tally_domain::ids::DrawId;
use tally_domain::purchase::{Channel, PurchaseStatus};

use super::outcome::say;
use super::output_file::OutputFile;
use super::spreadsheet::SpreadsheetCsv;

/// `[#########>-----] 42000/100000 tickets  42%  ETA 7s` on a terminal.
const BAR_TEMPLATE: &str = "[{bar:30}] {pos}/{len} tickets  {percent:>3}%  ETA {eta}";

#[derive(Args)]
pub struct ExportArgs {
    draw_id: String,
    /// Where the CSV goes, once complete (default: DRAW_ID.csv).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Only the purchases with this status: active or void.
    #[arg(long, value_parser = parse_status)]
    status: Option<PurchaseStatus>,
    /// Only the purchases of this channel: online or postal.
    #[arg(long, value_parser = parse_channel)]
    channel: Option<Channel>,
}

fn parse_status(raw: &str) -> Result<PurchaseStatus, String> {
    PurchaseStatus::parse(raw).ok_or_else(|| "a status is active or void".to_owned())
}

fn parse_channel(raw: &str) -> Result<Channel, String> {
    Channel::parse(raw).ok_or_else(|| "a channel is online or postal".to_owned())
}

pub async fn run(args: ExportArgs, config: StoreConfig) -> Result<(), String> {
    let draw_id = DrawId::parse(&args.draw_id).map_err(|e| e.to_string())?;
    let filter = PurchaseFilter {
        status: args.status,
        channel: args.channel,
    };
    let service = TicketService::new(Store::connect(&config, None).await);
    let summary = service
        .get_draw(&draw_id)
        .await
        .map_err(|e| e.to_string())?;
    let path = args
        .output
        .unwrap_or_else(|| PathBuf::from(format!("{draw_id}.csv")));
    let mut csv = SpreadsheetCsv::new(OutputFile::create(&path)?);
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
        "amount",
        "currency",
        "voided_after_freeze",
    ])?;
    let (mut purchases, mut sold, mut postal) = (0u64, 0u64, 0u64);
    let mut stream = std::pin::pin!(service.export_purchases(&summary.draw));
    while let Some(purchase) = stream.try_next().await.map_err(|e| e.to_string())? {
        bar.inc(u64::from(purchase.quantity));
        if !filter.keeps(&purchase) {
            continue;
        }
        let tickets: Vec<String> = purchase.tickets.iter().map(u64::to_string).collect();
        let time = tally_domain::time::rfc3339_millis;
        csv.write_record([
            purchase.payment_id.as_str(),
            purchase.payer_id.as_ref().map_or("", |p| p.as_str()),
            &purchase.quantity.to_string(),
            &tickets.join(" "),
            purchase.channel.as_str(),
            purchase.status().as_str(),
            &time(purchase.created_at),
            purchase.void.as_ref().map_or("", |v| v.reason.as_str()),
            &purchase.void.as_ref().map_or(String::new(), |v| time(v.at)),
            &purchase
                .amount
                .map_or(String::new(), |m| m.minor.to_string()),
            purchase.amount.as_ref().map_or("", |m| m.currency.as_str()),
            match purchase.void.as_ref().and_then(|v| v.after_freeze) {
                Some(true) => "true",
                Some(false) => "false",
                None => "",
            },
        ])?;
        purchases += 1;
        sold += u64::from(purchase.quantity);
        if purchase.channel == Channel::Postal {
            postal += u64::from(purchase.quantity);
        }
    }
    csv.into_inner()?.commit()?;
    bar.finish_and_clear();
    say!(
        "{purchases} purchases ({sold} tickets: {} online, {postal} postal) of draw {draw_id} written to {}",
        sold - postal,
        path.display()
    )?;
    Ok(())
}
