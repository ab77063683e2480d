//! `tally verify-draw`: checks a drawn draw from its public data alone (the answers of
//! `GET /draws/{id}`, `/winners` and `/eligible`), read from files or from a running API.

use std::path::PathBuf;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use clap::Args;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;
use serde_json::Value;
use tally::domain::seed::DrawSeed;
use tally::domain::winners::{ALGORITHM, PickRecord, PublicProof, current_winners, verify};

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
}

#[derive(Deserialize)]
struct WinnersAnswer {
    prizes: Vec<PrizeAnswer>,
    proof: ProofAnswer,
}

#[derive(Deserialize)]
struct PrizeAnswer {
    prize: u32,
    ticket: u64,
}

#[derive(Deserialize)]
struct ProofAnswer {
    algorithm: String,
    seed: String,
    seed_commitment: String,
    beacon_value: Option<String>,
    total_tickets: u64,
    prizes: u32,
    eligible_count: u64,
    eligible_digest: String,
    picks: Vec<PickAnswer>,
}

#[derive(Deserialize)]
struct PickAnswer {
    pick: u64,
    prize: u32,
    ticket: u64,
}

#[derive(Deserialize)]
struct EligibleAnswer {
    total_tickets: u64,
    bitmap: String,
}

pub async fn run(args: VerifyArgs) -> Result<(), String> {
    let (winners, eligible, published_commitment) = match (&args.api, &args.draw_id) {
        (Some(api), Some(draw_id)) => {
            let base = format!("{}/draws/{draw_id}", api.trim_end_matches('/'));
            let draw = fetch(&base).await?;
            (
                fetch(&format!("{base}/winners")).await?,
                fetch(&format!("{base}/eligible")).await?,
                draw["seed_commitment"].as_str().map(str::to_owned),
            )
        }
        _ => match (&args.winners, &args.eligible) {
            (Some(w), Some(e)) => (read(w)?, read(e)?, None),
            _ => return Err("give DRAW_ID --api URL, or --winners FILE --eligible FILE".into()),
        },
    };
    let winners: WinnersAnswer =
        serde_json::from_value(winners).map_err(|e| format!("winners: {e}"))?;
    let eligible: EligibleAnswer =
        serde_json::from_value(eligible).map_err(|e| format!("eligible list: {e}"))?;
    check(&winners, &eligible, published_commitment.as_deref())?;
    println!(
        "ok: {} picks of {} eligible tickets recomputed with {ALGORITHM}",
        winners.proof.picks.len(),
        winners.proof.eligible_count
    );
    Ok(())
}

fn check(
    winners: &WinnersAnswer,
    eligible: &EligibleAnswer,
    published_commitment: Option<&str>,
) -> Result<(), String> {
    let proof = &winners.proof;
    if proof.algorithm != ALGORITHM {
        return Err(format!("unknown algorithm {}", proof.algorithm));
    }
    if published_commitment.is_some_and(|c| c != proof.seed_commitment) {
        return Err("the draw publishes another seed commitment than the proof".into());
    }
    if eligible.total_tickets != proof.total_tickets {
        return Err("the eligible list is of another draw size".into());
    }
    let seed = decode_hex(&proof.seed)
        .and_then(|bytes| DrawSeed::from_bytes(&bytes))
        .ok_or("the seed is not 32 bytes of hex")?;
    let bitmap = STANDARD
        .decode(&eligible.bitmap)
        .map_err(|e| format!("the bitmap is not base64: {e}"))?;
    let picks: Vec<PickRecord> = proof
        .picks
        .iter()
        .map(|p| PickRecord {
            pick: p.pick,
            prize: p.prize,
            ticket: p.ticket,
        })
        .collect();
    let public = PublicProof {
        seed,
        seed_commitment: proof.seed_commitment.clone(),
        beacon_value: proof.beacon_value.clone().unwrap_or_default(),
        total_tickets: proof.total_tickets,
        eligible_count: proof.eligible_count,
        eligible_digest: proof.eligible_digest.clone(),
        prizes: proof.prizes,
        picks,
    };
    verify(&public, &bitmap).map_err(|e| e.to_string())?;
    let expected: Vec<(u32, u64)> = current_winners(proof.prizes, &public.picks)
        .iter()
        .map(|p| (p.prize, p.ticket))
        .collect();
    let published: Vec<(u32, u64)> = winners.prizes.iter().map(|p| (p.prize, p.ticket)).collect();
    if expected != published {
        return Err("the prizes do not name the last pick of each prize".into());
    }
    Ok(())
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn read(path: &PathBuf) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

async fn fetch(url: &str) -> Result<Value, String> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<axum::body::Bytes>>();
    let uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let response = client.get(uri).await.map_err(|e| format!("{url}: {e}"))?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("{url}: {e}"))?
        .to_bytes();
    let value: Value = serde_json::from_slice(&body).map_err(|e| format!("{url}: {e}"))?;
    if !status.is_success() {
        return Err(format!("{url}: {status}: {}", value["detail"]));
    }
    Ok(value)
}
