//! `tally import FILE --series S --source SRC`: numbers a file of orders with a progress
//! bar, then writes the lines it could not number next to the file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::file_import::{
    DEFAULT_ANSWER_TIMEOUT, ImportLine, NOT_SENT, Progress, RejectedLine, Target, import,
    read_lines,
};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tally::orders::OrderService;
use tally::store::{Store, StoreConfig};
use tally_domain::ids::SeriesId;
use tally_domain::order::MAX_BATCH;

use crate::outcome::{Failure, Location, say};

/// `[#########>-----] 4200/10000 orders  42%  850/s  ETA 7s` on a terminal.
const BAR_TEMPLATE: &str = "[{bar:30}] {pos}/{len} orders  {percent:>3}%  {per_sec:0}  ETA {eta}";
/// How often the bar follows the import's count.
const TICK: Duration = Duration::from_millis(100);
/// Ticks between two plain progress lines when stderr is not a terminal (a log).
const TICKS_PER_PLAIN_LINE: u32 = 20;

#[derive(Args)]
pub struct ImportArgs {
    /// JSON lines (`{"external_ref": "...", "data": {...}}` per line), or a .csv file whose
    /// header has an external_ref column (the other columns become `data`).
    file: PathBuf,
    #[arg(long)]
    series: String,
    #[arg(long)]
    source: String,
    /// A running Tally API without IAM auth, such as http://127.0.0.1:3000. Without it,
    /// orders go straight to the table (TABLE_NAME, DYNAMODB_ENDPOINT, AWS credentials).
    #[arg(long)]
    api: Option<String>,
    /// Orders per request: 1 to 1,000, as the batch route takes.
    #[arg(long, default_value_t = 100, value_parser = batch_size)]
    batch: usize,
    /// Requests in flight at once (1 numbers the file in its own order).
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Where the rejected lines go (default: the file name plus .rejected.jsonl).
    #[arg(long)]
    rejected: Option<PathBuf>,
    /// With `--api`: how long one request waits for its whole answer before it counts as
    /// unavailable and is sent again (default: 35,000, API Gateway's 30 s and a margin).
    /// Refused without `--api`: the table's own timeouts apply there.
    #[arg(long, requires = "api", value_parser = clap::value_parser!(u64).range(1..))]
    answer_timeout_ms: Option<u64>,
}

/// `--batch`: a whole number from 1 to [`MAX_BATCH`], refused before any line is read.
fn batch_size(text: &str) -> Result<usize, String> {
    text.parse()
        .ok()
        .filter(|size| (1..=MAX_BATCH).contains(size))
        .ok_or_else(|| format!("a batch holds 1 to {MAX_BATCH} orders (the batch route's limit)"))
}

/// Lines it could not number are a finding (exit 1), unless none could be sent at all:
/// then, like a file it cannot read or a series that does not exist, it could not run
/// (exit 2). Why it could not run names where it sent the orders: the API of `--api`, or
/// the table at `location`.
pub async fn run(
    args: ImportArgs,
    config: StoreConfig,
    location: &Location,
) -> Result<(), Failure> {
    let lines = read_lines(&args.file)?;
    let place = match &args.api {
        Some(base) => format!("the Tally API at {base}"),
        None => location.described.clone(),
    };
    number(args, config, lines)
        .await
        .map_err(|failure| failure.within(&place))
}

async fn number(
    args: ImportArgs,
    config: StoreConfig,
    lines: Vec<ImportLine>,
) -> Result<(), Failure> {
    let total = lines.len() as u64;
    let target = match &args.api {
        Some(base) => Target::api(
            base,
            args.answer_timeout_ms
                .map_or(DEFAULT_ANSWER_TIMEOUT, Duration::from_millis),
        ),
        None => {
            let service = OrderService::new(Store::connect(&config, None).await);
            // Before any line: the table answers, and the series is there.
            let series = SeriesId::parse(&args.series).map_err(|e| e.to_string())?;
            service
                .series_status(&series)
                .await
                .map_err(|e| e.to_string())?;
            Target::Table(service)
        }
    };
    let progress = Arc::new(Progress::default());
    let started = Instant::now();
    let bar = progress_bar(total);
    let display = tokio::spawn(follow(progress.clone(), bar.clone()));
    let summary = import(
        &target,
        &args.series,
        &args.source,
        lines,
        args.batch,
        args.concurrency,
        &progress,
    )
    .await;
    display.abort();
    finish(&bar, progress.done());
    let rejected_path = args.rejected.unwrap_or_else(|| {
        let mut name = args.file.clone().into_os_string();
        name.push(".rejected.jsonl");
        PathBuf::from(name)
    });
    let numbered = summary.created + summary.existing;
    let none_sent = summary.rejected.iter().all(|line| line.code == NOT_SENT);
    let could_not_run = summary
        .rejected
        .first()
        .filter(|_| numbered == 0 && none_sent)
        .map(|first| format!("no line could be sent: {}", first.detail));
    // The rejected lines before the summary: an output closed after the work is done
    // still leaves them where the next run looks.
    if could_not_run.is_none() {
        write_rejected(&rejected_path, &summary.rejected)
            .map_err(|e| format!("{}: {e}", rejected_path.display()))?;
    }
    say!(
        "created {}, existing {}, rejected {} in {:.1} s",
        summary.created,
        summary.existing,
        summary.rejected.len(),
        started.elapsed().as_secs_f64()
    )?;
    if let Some(reason) = could_not_run {
        return Err(Failure::CouldNotRun(reason));
    }
    if summary.rejected.is_empty() {
        return Ok(());
    }
    Err(Failure::Found(format!(
        "{} lines were not numbered; see {} (fix them and run the import again: numbered orders are kept)",
        summary.rejected.len(),
        rejected_path.display()
    )))
}

/// Writes the rejected lines to `path`, one JSON object a line; with none, removes the file
/// an earlier run left, so that it never lists lines this run numbered.
fn write_rejected(path: &Path, rejected: &[RejectedLine]) -> std::io::Result<()> {
    if rejected.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let mut out = String::new();
    for line in rejected {
        out.push_str(&serde_json::to_string(line)?);
        out.push('\n');
    }
    std::fs::write(path, out)
}

/// A bar on stderr; indicatif hides it when stderr is not a terminal.
fn progress_bar(total: u64) -> ProgressBar {
    let style = ProgressStyle::with_template(BAR_TEMPLATE)
        .expect("the template is valid")
        .progress_chars("#>-");
    ProgressBar::new(total).with_style(style)
}

/// Moves the bar to the import's count until aborted. A hidden bar shows nothing, so a
/// log gets a plain line every couple of seconds instead.
async fn follow(progress: Arc<Progress>, bar: ProgressBar) {
    let plain = bar.is_hidden();
    let mut ticks = tokio::time::interval(TICK);
    for tick in 1u32.. {
        ticks.tick().await;
        bar.set_position(progress.done());
        if plain && tick % TICKS_PER_PLAIN_LINE == 0 {
            eprintln!("{}", plain_line(&bar));
        }
    }
}

fn finish(bar: &ProgressBar, done: u64) {
    bar.set_position(done);
    bar.finish();
    if bar.is_hidden() {
        eprintln!("{}", plain_line(bar));
    }
}

/// `4200/10000 orders  42%  850/s  ETA 7s`: the bar's figures as text.
fn plain_line(bar: &ProgressBar) -> String {
    let (done, total) = (bar.position(), bar.length().unwrap_or(0));
    format!(
        "{done}/{total} orders  {:>3}%  {:.0}/s  ETA {}s",
        (done * 100).checked_div(total).unwrap_or(100),
        bar.per_sec(),
        bar.eta().as_secs()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_template_is_valid() {
        assert!(ProgressStyle::with_template(BAR_TEMPLATE).is_ok());
    }

    #[test]
    fn a_plain_line_shows_count_share_rate_and_eta() {
        let bar = ProgressBar::hidden();
        bar.set_length(10_000);
        bar.set_position(4_200);
        let line = plain_line(&bar);
        assert!(line.starts_with("4200/10000 orders   42%  "), "{line}");
        assert!(line.contains("/s  ETA ") && line.ends_with('s'), "{line}");
        bar.finish();
        assert!(plain_line(&bar).ends_with("ETA 0s"));
    }
}
