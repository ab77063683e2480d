//! The cold-start benchmark: each Lambda function's binary is started as Lambda starts it,
//! against a local runtime API ([`tally_testkit::lambda_harness`]), answers one event against DynamoDB
//! Local, and is measured: the time from process start to its first poll of `next` (its
//! init), the time it takes to answer the event, and its resident memory after init and
//! at its peak once the event is answered. Every run has a fresh table, so every run does
//! the same work.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use clap::Args;
use tally::store::{Store, StoreConfig};
use tally_domain::ids::DrawId;
use tally_testkit::lambda_harness::bootstrap::{ACCOUNT, Bootstrap, FunctionEnv, Memory, REGION};
use tally_testkit::lambda_harness::runtime_api::{RuntimeApi, RuntimeCall};
use tally_testkit::lambda_harness::{generated_secret, next_call, unexpected};

use super::stats::percentile_ms;
use super::targets::{COLD_INIT, COLD_PEAK_MIB};

#[derive(Args)]
pub struct ColdStartArgs {
    /// A Lambda function and the event it answers; repeat for each function.
    #[arg(long = "cold-start", value_name = "FUNCTION=EVENT_FILE", value_parser = function_and_event)]
    functions: Vec<(String, PathBuf)>,
    /// Where the functions' binaries are: DIR/FUNCTION (cargo build) or
    /// DIR/FUNCTION/bootstrap (cargo lambda build).
    #[arg(long, default_value = "target/release")]
    bootstraps: PathBuf,
    /// Cold starts of each function.
    #[arg(long, default_value_t = 5)]
    cold_start_runs: usize,
    /// Skip the cold-start benchmark.
    #[arg(long)]
    pub skip_cold_start: bool,
}

impl ColdStartArgs {
    pub fn skipped(&self) -> bool {
        self.skip_cold_start || self.functions.is_empty()
    }
}

fn function_and_event(value: &str) -> Result<(String, PathBuf), String> {
    let (function, event) = value
        .split_once('=')
        .ok_or("expected FUNCTION=EVENT_FILE")?;
    Ok((function.to_owned(), PathBuf::from(event)))
}

/// How long the bench waits for any one call of a bootstrap.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// One cold start.
struct ColdStart {
    /// From process start to the first poll of `next`.
    init: Duration,
    after_init: Memory,
    /// From handing out the event to receiving the answer.
    answer_time: Duration,
    /// Memory at the second poll of `next`, once the event is answered.
    after_event: Memory,
    answer: String,
}

/// Measures each function's cold starts on tables reached as `config`'s is.
pub async fn run(args: &ColdStartArgs, config: &StoreConfig) -> Result<(), String> {
    if args.skipped() {
        return Ok(());
    }
    println!(
        "Cold starts: each function's {} binary started {} times as Lambda starts it, against a local runtime API, one event each (DynamoDB Local)",
        std::env::consts::ARCH,
        args.cold_start_runs
    );
    println!(
        "  {:<8} {:>8}  {:>18}  {:>11}  {:>10}  {:>14}  answer",
        "function", "binary", "init median / max", "answer time", "RSS init", "peak RSS, max"
    );
    for (function, event_file) in &args.functions {
        let path = binary(&args.bootstraps, function)?;
        let size = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
        let event =
            std::fs::read(event_file).map_err(|e| format!("{}: {e}", event_file.display()))?;
        let mut runs = Vec::with_capacity(args.cold_start_runs);
        for _ in 0..args.cold_start_runs.max(1) {
            runs.push(cold_start(function, &path, Bytes::from(event.clone()), config).await?);
        }
        print_row(function, size, &runs);
    }
    println!(
        "  targets: init under {} ms, peak RSS under {COLD_PEAK_MIB} MiB",
        COLD_INIT.as_millis()
    );
    Ok(())
}

/// The binary of `function` under `dir`, as cargo build or cargo lambda build lays it out.
fn binary(dir: &Path, function: &str) -> Result<PathBuf, String> {
    [dir.join(function).join("bootstrap"), dir.join(function)]
        .into_iter()
        .find(|path| path.is_file())
        .ok_or(format!(
            "no binary of {function} in {}: build it first (cargo build --release --bin {function})",
            dir.display()
        ))
}

fn print_row(function: &str, size: u64, runs: &[ColdStart]) {
    let inits: Vec<Duration> = runs.iter().map(|run| run.init).collect();
    let answers: Vec<Duration> = runs.iter().map(|run| run.answer_time).collect();
    let mib = |kib: u64| kib as f64 / 1024.0;
    let after_init = runs
        .iter()
        .map(|run| run.after_init.rss_kib)
        .max()
        .unwrap_or(0);
    let peak = runs
        .iter()
        .map(|run| run.after_event.peak_rss_kib)
        .max()
        .unwrap_or(0);
    println!(
        "  {:<8} {:>5.2} MB  {:>7.1} / {:>5.1} ms  {:>8.1} ms  {:>6.1} MiB  {:>10.1} MiB  {}",
        function,
        size as f64 / 1e6,
        percentile_ms(&inits, 0.5),
        percentile_ms(&inits, 1.0),
        percentile_ms(&answers, 0.5),
        mib(after_init),
        mib(peak),
        runs.first().map_or("", |run| run.answer.as_str()),
    );
}

/// One cold start of `function` on a fresh table, which is dropped afterwards.
async fn cold_start(
    function: &str,
    path: &Path,
    event: Bytes,
    config: &StoreConfig,
) -> Result<ColdStart, String> {
    let table = format!("tally-cold-start-{}", DrawId::generate());
    let config = config.on_table(table)?;
    let store = Store::connect(&config, None).await;
    store
        .ensure_table_without_stream()
        .await
        .map_err(|e| e.to_string())?;
    let secret = generated_secret();
    let env = FunctionEnv {
        function,
        table: store.table(),
        dynamodb_endpoint: config
            .endpoint
            .as_deref()
            .ok_or("cold starts are measured against DynamoDB Local")?,
        deployment_secret: &secret,
        overrides: &[],
    };
    let result = measure(path, env, event).await;
    let _ = store.delete_table().await;
    result.map_err(|e| format!("cold start of {function}: {e}"))
}

async fn measure(path: &Path, env: FunctionEnv<'_>, event: Bytes) -> Result<ColdStart, String> {
    let arn = format!(
        "arn:aws:lambda:{REGION}:{ACCOUNT}:function:tally-{}",
        env.function
    );
    let mut api = RuntimeApi::start(event, arn).await?;
    let log = std::env::temp_dir().join(format!("tally-cold-start-{}.log", env.function));
    let started = Instant::now();
    let mut process = Bootstrap::start(path, &env, api.address, log)?;

    let (polled, release) = match next_call(&mut api, &mut process, CALL_TIMEOUT).await? {
        RuntimeCall::Next { at, release } => (at, release),
        other => return Err(unexpected(&other, "its first poll")),
    };
    let after_init = process.memory()?;
    let handed_out = Instant::now();
    let _ = release.send(());

    let (answered, body) = match next_call(&mut api, &mut process, CALL_TIMEOUT).await? {
        RuntimeCall::Response { at, body } => (at, body),
        other => return Err(unexpected(&other, "its answer")),
    };
    // The second poll: the event is done with, and the process waits for the next one.
    match next_call(&mut api, &mut process, CALL_TIMEOUT).await? {
        RuntimeCall::Next { .. } => {}
        other => return Err(unexpected(&other, "its second poll")),
    }
    let after_event = process.memory()?;
    Ok(ColdStart {
        init: polled.saturating_duration_since(started),
        after_init,
        answer_time: answered.saturating_duration_since(handed_out),
        after_event,
        answer: summary(&body),
    })
}

/// What the answer says, in a few words: an HTTP status, or the failed items of a batch.
fn summary(body: &Bytes) -> String {
    let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    if let Some(status) = value.get("statusCode") {
        format!("statusCode {status}")
    } else if let Some(failures) = value.get("batchItemFailures").and_then(|f| f.as_array()) {
        format!("{} batch item failures", failures.len())
    } else {
        String::from_utf8_lossy(&body[..body.len().min(60)]).into_owned()
    }
}
