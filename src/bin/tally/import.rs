//! `tally import FILE --series S --source SRC`: numbers a file of orders with a progress
//! bar, then writes the lines it could not number next to the file.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use tally::file_import::{Progress, Target, import, read_lines};
use tally::orders::OrderService;
use tally::store::{Store, StoreConfig};

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
    /// Orders per request.
    #[arg(long, default_value_t = 100)]
    batch: usize,
    /// Requests in flight at once (1 numbers the file in its own order).
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Where the rejected lines go (default: the file name plus .rejected.jsonl).
    #[arg(long)]
    rejected: Option<PathBuf>,
}

pub async fn run(args: ImportArgs, config: StoreConfig) -> Result<(), String> {
    let lines = read_lines(&args.file)?;
    let total = lines.len() as u64;
    let target = match &args.api {
        Some(base) => Target::api(base),
        None => Target::Table(OrderService::new(Store::connect(&config, None).await)),
    };
    let progress = Arc::new(Progress::default());
    let started = Instant::now();
    let display = tokio::spawn(show_progress(progress.clone(), total, started));
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
    draw(&progress, total, started, true);
    let rejected_path = args.rejected.unwrap_or_else(|| {
        let mut name = args.file.clone().into_os_string();
        name.push(".rejected.jsonl");
        PathBuf::from(name)
    });
    println!(
        "created {}, existing {}, rejected {} in {:.1} s",
        summary.created,
        summary.existing,
        summary.rejected.len(),
        started.elapsed().as_secs_f64()
    );
    if summary.rejected.is_empty() {
        return Ok(());
    }
    let mut out = String::new();
    for line in &summary.rejected {
        out.push_str(&serde_json::to_string(line).map_err(|e| e.to_string())?);
        out.push('\n');
    }
    std::fs::write(&rejected_path, out).map_err(|e| format!("{}: {e}", rejected_path.display()))?;
    Err(format!(
        "{} lines were not numbered; see {} (fix them and run the import again: numbered orders are kept)",
        summary.rejected.len(),
        rejected_path.display()
    ))
}

async fn show_progress(progress: Arc<Progress>, total: u64, started: Instant) {
    let every = if std::io::stderr().is_terminal() {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(2)
    };
    loop {
        tokio::time::sleep(every).await;
        draw(&progress, total, started, false);
    }
}

/// `[#########-----------] 4200/10000  42%  850 orders/s  ETA 7s`
fn draw(progress: &Progress, total: u64, started: Instant, last: bool) {
    let done = progress.done();
    let width = 30;
    let filled = (done * width).checked_div(total).unwrap_or(width);
    let rate = done as f64 / started.elapsed().as_secs_f64().max(1e-3);
    let eta = if rate > 0.0 {
        (total - done) as f64 / rate
    } else {
        0.0
    };
    let bar: String = (0..width)
        .map(|i| if i < filled { '#' } else { '-' })
        .collect();
    let line = format!(
        "[{bar}] {done}/{total} {:>3}%  {rate:.0} orders/s  ETA {eta:.0}s",
        (done * 100).checked_div(total).unwrap_or(100)
    );
    let mut err = std::io::stderr();
    if err.is_terminal() {
        let _ = write!(err, "\r{line}{}", if last { "\n" } else { "" });
    } else {
        let _ = writeln!(err, "{line}");
    }
    let _ = err.flush();
}
