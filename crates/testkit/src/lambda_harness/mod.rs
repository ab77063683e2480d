//! A Lambda function's binary run here as Lambda runs it: a local runtime API hands it an
//! event ([`runtime_api`]) and the process gets Lambda's environment ([`bootstrap`]). The
//! cold-start bench measures the functions this way, and the log tests read what each
//! function logs of an event. Nothing deployed uses it.

pub mod bootstrap;
pub mod runtime_api;

use std::time::{Duration, Instant};

use axum::body::Bytes;
use rand::distr::{Alphanumeric, SampleString};

use bootstrap::Bootstrap;
use runtime_api::{RuntimeApi, RuntimeCall};

/// A deployment secret as the template has Secrets Manager generate one: 64 letters and
/// digits.
pub fn generated_secret() -> String {
    Alphanumeric.sample_string(&mut rand::rng(), 64)
}

/// The next call of the bootstrap, or why none came within `patience`.
pub async fn next_call(
    api: &mut RuntimeApi,
    process: &mut Bootstrap,
    patience: Duration,
) -> Result<RuntimeCall, String> {
    let deadline = Instant::now() + patience;
    loop {
        match tokio::time::timeout(Duration::from_millis(20), api.calls.recv()).await {
            Ok(Some(call)) => return Ok(call),
            Ok(None) => return Err("the runtime API stopped".to_owned()),
            Err(_) => {
                if let Some(status) = process.exited() {
                    return Err(format!(
                        "the bootstrap exited ({status}); its output is in {}",
                        process.log.display()
                    ));
                }
                if Instant::now() > deadline {
                    return Err(format!(
                        "no call within {} s; the bootstrap's output is in {}",
                        patience.as_secs(),
                        process.log.display()
                    ));
                }
            }
        }
    }
}

/// Why `call` is not the one `awaited`.
pub fn unexpected(call: &RuntimeCall, awaited: &str) -> String {
    let text = |body: &Bytes| String::from_utf8_lossy(body).into_owned();
    match call {
        RuntimeCall::InitError { body } => format!("init failed: {}", text(body)),
        RuntimeCall::Error { body } => format!("the event failed: {}", text(body)),
        RuntimeCall::Next { .. } => format!("polled again instead of {awaited}"),
        RuntimeCall::Response { .. } => format!("answered instead of {awaited}"),
    }
}

/// Runs the binary at `path` on `event` as function `env.function`, its output in `log`:
/// the answer once the function polls for its next event (so that everything it logged
/// of this one is written).
pub async fn invoke(
    path: &std::path::Path,
    env: &bootstrap::FunctionEnv<'_>,
    event: Bytes,
    log: std::path::PathBuf,
    patience: Duration,
) -> Result<Bytes, String> {
    let arn = format!(
        "arn:aws:lambda:{}:{}:function:tally-{}",
        bootstrap::REGION,
        bootstrap::ACCOUNT,
        env.function
    );
    let mut api = RuntimeApi::start(event, arn).await?;
    let mut process = Bootstrap::start(path, env, api.address, log)?;
    match next_call(&mut api, &mut process, patience).await? {
        RuntimeCall::Next { release, .. } => {
            let _ = release.send(());
        }
        other => return Err(unexpected(&other, "its first poll")),
    }
    let answer = match next_call(&mut api, &mut process, patience).await? {
        RuntimeCall::Response { body, .. } => body,
        other => return Err(unexpected(&other, "its answer")),
    };
    match next_call(&mut api, &mut process, patience).await? {
        RuntimeCall::Next { .. } => Ok(answer),
        other => Err(unexpected(&other, "its second poll")),
    }
}
