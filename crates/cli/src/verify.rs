//! `tally verify-draw`: checks a drawn draw from its public data alone (the answers of
//! `GET /draws/{id}/winners` and `/eligible`, and the draw's answer kept from the close),
//! read from files or from a running API, step by step (docs/winners.md).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use tally_domain::winners::{ALGORITHM, BeaconNetworks, Outcome, check_answers};

use crate::outcome::say;

/// What a check without the answer kept from the close leaves unproven.
const UNKEPT: &str = ", but not against the draw's answer kept from the close (--draw): nothing shows that the list, the round and the number of prizes are those fixed before the round was out";

/// How long `--api` waits for each answer, from the request to its last byte.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer `--api` reads: what a Lambda function may return (6 MB). The largest
/// a draw's limits allow is its eligible list, about 1.7 MB of base64 for 10,000,000
/// tickets.
const MAX_ANSWER_BYTES: usize = 6 * 1024 * 1024;

#[derive(Args)]
pub struct VerifyArgs {
    /// The draw, read from `--api`.
    draw_id: Option<String>,
    /// A Tally API without IAM auth, such as http://127.0.0.1:3000.
    #[arg(long, requires = "draw_id", conflicts_with_all = ["winners", "eligible"])]
    api: Option<String>,
    /// The answer of GET /draws/{draw_id}/winners, saved to a file.
    #[arg(long, requires = "eligible")]
    winners: Option<PathBuf>,
    /// The answer of GET /draws/{draw_id}/eligible, saved to a file.
    #[arg(long, requires = "winners")]
    eligible: Option<PathBuf>,
    /// The answer of GET /draws/{draw_id} kept from the close, before the beacon round
    /// was out: checks that the list, the round and the number of prizes are those shown
    /// then. Without it that step is skipped.
    #[arg(long)]
    draw: Option<PathBuf>,
    /// A file of drand networks to trust besides quicknet: a JSON array of {name,
    /// scheme, public_key, genesis_time, period}. Without it, TALLY_BEACON_NETWORKS.
    #[arg(long)]
    networks: Option<PathBuf>,
}

/// Checks the draw, trusting the networks of `--networks`, else `configured` (those of
/// `TALLY_BEACON_NETWORKS`).
pub async fn run(args: VerifyArgs, configured: BeaconNetworks) -> Result<(), String> {
    let trusted = match &args.networks {
        Some(path) => {
            let json =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            BeaconNetworks::with_json(Some(&json)).map_err(|e| e.to_string())?
        }
        None => configured,
    };
    let kept = args.draw.as_ref().map(read).transpose()?;
    let (winners, eligible, kept) = match (&args.api, &args.draw_id) {
        (Some(api), Some(draw_id)) => {
            let base = format!("{}/draws/{draw_id}", api.trim_end_matches('/'));
            // The draw as it reads now proves nothing of the close: without `--draw`,
            // step `frozen` is skipped.
            (
                fetch(&format!("{base}/winners")).await?,
                fetch(&format!("{base}/eligible")).await?,
                kept,
            )
        }
        _ => match (&args.winners, &args.eligible) {
            (Some(w), Some(e)) => (read(w)?, read(e)?, kept),
            _ => return Err("give DRAW_ID --api URL, or --winners FILE --eligible FILE".into()),
        },
    };
    // The texts as read, as the page passes them: a field given twice fails `format`
    // rather than quietly taking one of its values.
    let report = check_answers(&winners, &eligible, kept.as_deref(), &trusted);
    for step in &report.steps {
        let mark = match step.outcome {
            Outcome::Pass => "pass",
            Outcome::Fail => "FAIL",
            Outcome::Skip => "skip",
        };
        say!("{mark}  {:<10}  {}: {}", step.id, step.title, step.detail)?;
    }
    let unkept = report
        .steps
        .iter()
        .any(|s| s.id == "frozen" && s.outcome == Outcome::Skip);
    match report.failure() {
        None => {
            let unproven = if unkept { UNKEPT } else { "" };
            say!("ok: the draw holds ({ALGORITHM}){unproven}")
        }
        Some(failure) => Err(failure),
    }
}

fn read(path: &PathBuf) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The answer's text, within [`FETCH_TIMEOUT`] and [`MAX_ANSWER_BYTES`].
async fn fetch(url: &str) -> Result<String, String> {
    let body = tokio::time::timeout(FETCH_TIMEOUT, fetch_body(url))
        .await
        .map_err(|_| {
            format!(
                "{url}: no whole answer within {} s",
                FETCH_TIMEOUT.as_secs()
            )
        })??;
    String::from_utf8(body).map_err(|e| format!("{url}: the answer is not UTF-8: {e}"))
}

async fn fetch_body(url: &str) -> Result<Vec<u8>, String> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<axum::body::Bytes>>();
    let uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let response = client.get(uri).await.map_err(|e| format!("{url}: {e}"))?;
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
        .collect()
        .await
        .map_err(|e| match e.downcast::<http_body_util::LengthLimitError>() {
            Ok(_) => format!(
                "{url}: the answer is larger than {} MiB, more than any draw's answer",
                MAX_ANSWER_BYTES >> 20
            ),
            Err(e) => format!("{url}: {e}"),
        })?
        .to_bytes();
    if !status.is_success() {
        let detail = serde_json::from_slice::<Value>(&body)
            .map(|problem| problem["detail"].to_string())
            .unwrap_or_default();
        return Err(format!("{url}: {status}: {detail}"));
    }
    Ok(body.to_vec())
}
