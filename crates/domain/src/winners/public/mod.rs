//! The public answers a verifier reads (`GET /draws/{id}/winners`, `/eligible`, and the
//! draw's answer kept from the close), turned into a proof and checked. `tally
//! verify-draw` and the browser page's WebAssembly both call [`check_answers`].

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;

use super::MAX_PRIZES;
use super::beacon::{BeaconNetwork, BeaconNetworks, NetworkFields};
use super::check::{
    KeptDraw, Not, PendingPick, PickRecord, ProofPick, PublicList, PublicProof, Report,
    RoundSignature, check,
};
use super::instant::{INSTANT_ALGORITHM, InstantProof, PublishedAward};
use super::pick::ALGORITHM;
use crate::draw::MAX_TOTAL_TICKETS;
use crate::hex;
use crate::instant::MAX_INSTANT_PRIZES;
use crate::time::Epoch;

#[derive(Deserialize)]
struct WinnersAnswer {
    prizes: Vec<PrizeAnswer>,
    #[serde(default)]
    pending_redraw: Option<PendingAnswer>,
    proof: ProofAnswer,
}

#[derive(Deserialize)]
struct PendingAnswer {
    prize: u32,
    beacon_round: u64,
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
    total_tickets: u64,
    prizes: u32,
    eligible_count: u64,
    eligible_digest: String,
    frozen_at: String,
    #[serde(default)]
    drawn_at: Option<String>,
    beacon: Option<BeaconAnswer>,
    picks: Vec<PickAnswer>,
    #[serde(default)]
    instant_wins: Option<InstantAnswer>,
}

#[derive(Deserialize)]
struct InstantAnswer {
    algorithm: String,
    key: String,
    commitment: String,
    prizes: Vec<InstantPrizeAnswer>,
    map: Vec<InstantTicketAnswer>,
    awards: Vec<InstantAwardAnswer>,
}

#[derive(Deserialize)]
struct InstantPrizeAnswer {
    prize: String,
    count: u32,
}

#[derive(Deserialize)]
struct InstantTicketAnswer {
    ticket: u64,
    prize: String,
}

#[derive(Deserialize)]
struct InstantAwardAnswer {
    ticket: u64,
    prize: String,
    status: String,
}

#[derive(Deserialize)]
struct BeaconAnswer {
    network: String,
    scheme: String,
    public_key: String,
    genesis_time: i64,
    period: u32,
    round: u64,
    signature: String,
}

#[derive(Deserialize)]
struct PickAnswer {
    pick: u64,
    prize: u32,
    ticket: u64,
    requested_at: Option<String>,
    beacon_round: Option<u64>,
    beacon_signature: Option<String>,
}

#[derive(Deserialize)]
struct EligibleAnswer {
    total_tickets: u64,
    eligible_count: u64,
    eligible_digest: String,
    bitmap: String,
}

#[derive(Deserialize)]
struct DrawAnswer {
    seed_commitment: String,
    eligible_count: Option<u64>,
    eligible_digest: Option<String>,
    frozen_at: Option<String>,
    beacon: Option<DrawBeaconAnswer>,
    #[serde(default)]
    prizes: Option<u32>,
    #[serde(default)]
    instant_wins: Option<DrawInstantAnswer>,
}

#[derive(Deserialize)]
struct DrawInstantAnswer {
    commitment: String,
}

#[derive(Deserialize)]
struct DrawBeaconAnswer {
    round: Option<u64>,
}

/// Checks a draw from the text of its public answers: the winners, the eligible list,
/// and (when kept) the draw's answer from the close. A file that is not such an answer
/// fails the first step, `format`.
pub fn check_answers(
    winners: &str,
    eligible: &str,
    kept: Option<&str>,
    trusted: &BeaconNetworks,
) -> Report {
    match read(winners, eligible, kept) {
        Ok((proof, list, kept)) => check(&proof, &list, kept.as_ref(), trusted),
        Err(detail) => {
            let mut report = Report::default();
            report.add(
                "format",
                "The files are a Tally draw's answers",
                Err(Not::Failed(detail)),
            );
            report
        }
    }
}

type Read = (PublicProof, PublicList, Option<KeptDraw>);

fn read(winners: &str, eligible: &str, kept: Option<&str>) -> Result<Read, String> {
    let winners: WinnersAnswer =
        serde_json::from_str(winners).map_err(|e| format!("the winners answer: {e}"))?;
    let eligible: EligibleAnswer =
        serde_json::from_str(eligible).map_err(|e| format!("the eligible list: {e}"))?;
    let proof = winners.proof;
    if proof.algorithm != ALGORITHM {
        return Err(format!(
            "the proof's algorithm is {}, this verifier checks {ALGORITHM}",
            proof.algorithm
        ));
    }
    within_limits(&proof)?;
    let digest = |text: &str, what: &str| {
        hex::decode32(text).ok_or_else(|| format!("{what} is not 32 bytes of hex"))
    };
    let (network, beacon) = match proof.beacon {
        Some(b) => {
            let network = BeaconNetwork::from_fields(&NetworkFields {
                name: b.network,
                scheme: b.scheme,
                public_key: b.public_key,
                genesis_time: b.genesis_time,
                period: b.period,
            })
            .map_err(|e| e.to_string())?;
            let round = RoundSignature {
                round: b.round,
                signature: b.signature,
            };
            (Some(network), Some(round))
        }
        None => (None, None),
    };
    let picks = proof
        .picks
        .into_iter()
        .map(|p| {
            let beacon = match (p.beacon_round, p.beacon_signature) {
                (Some(round), Some(signature)) => Some(RoundSignature { round, signature }),
                (None, None) => None,
                _ => return Err(format!("pick {} has a round without a signature", p.pick)),
            };
            Ok(ProofPick {
                record: PickRecord {
                    pick: p.pick,
                    prize: p.prize,
                    ticket: p.ticket,
                },
                requested_at_ms: p.requested_at.as_deref().map(millis).transpose()?,
                beacon,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let public = PublicProof {
        seed: digest(&proof.seed, "the seed")?,
        seed_commitment: digest(&proof.seed_commitment, "the seed commitment")?,
        total_tickets: proof.total_tickets,
        eligible_count: proof.eligible_count,
        eligible_digest: digest(&proof.eligible_digest, "the eligible digest")?,
        frozen_at_ms: millis(&proof.frozen_at)?,
        prizes: proof.prizes,
        drawn_at_ms: proof.drawn_at.as_deref().map(millis).transpose()?,
        network,
        beacon,
        picks,
        published_prizes: winners.prizes.iter().map(|p| (p.prize, p.ticket)).collect(),
        pending: winners.pending_redraw.map(|p| PendingPick {
            prize: p.prize,
            round: p.beacon_round,
        }),
        instant: proof.instant_wins.map(instant_proof).transpose()?,
    };
    let list = PublicList {
        total_tickets: eligible.total_tickets,
        bitmap: STANDARD
            .decode(&eligible.bitmap)
            .map_err(|e| format!("the bitmap is not base64: {e}"))?,
        eligible_count: eligible.eligible_count,
        eligible_digest: digest(&eligible.eligible_digest, "the list's digest")?,
    };
    let kept = kept
        .map(|text| -> Result<KeptDraw, String> {
            let draw: DrawAnswer =
                serde_json::from_str(text).map_err(|e| format!("the kept draw answer: {e}"))?;
            Ok(KeptDraw {
                seed_commitment: digest(&draw.seed_commitment, "the kept commitment")?,
                eligible_count: draw.eligible_count,
                eligible_digest: draw
                    .eligible_digest
                    .as_deref()
                    .map(|d| digest(d, "the kept digest"))
                    .transpose()?,
                frozen_at_ms: draw.frozen_at.as_deref().map(millis).transpose()?,
                round: draw.beacon.and_then(|b| b.round),
                prizes: draw.prizes,
                instant_commitment: draw
                    .instant_wins
                    .map(|i| digest(&i.commitment, "the kept instant-win commitment"))
                    .transpose()?,
            })
        })
        .transpose()?;
    Ok((public, list, kept))
}

/// The draw's limits (docs/limits.md) hold, so that no check runs without bound: the map
/// of instant wins is derived slot by slot.
fn within_limits(proof: &ProofAnswer) -> Result<(), String> {
    if !(1..=MAX_TOTAL_TICKETS).contains(&proof.total_tickets) {
        return Err(format!(
            "the draw has {} tickets, not 1 to {MAX_TOTAL_TICKETS}",
            proof.total_tickets
        ));
    }
    if !(1..=MAX_PRIZES).contains(&proof.prizes) {
        return Err(format!(
            "the draw has {} prizes, not 1 to {MAX_PRIZES}",
            proof.prizes
        ));
    }
    let instant_wins: u64 = proof
        .instant_wins
        .iter()
        .flat_map(|i| &i.prizes)
        .map(|p| u64::from(p.count))
        .sum();
    if instant_wins > u64::from(MAX_INSTANT_PRIZES) {
        return Err(format!(
            "the draw has {instant_wins} instant-winning numbers, more than {MAX_INSTANT_PRIZES}"
        ));
    }
    Ok(())
}

fn instant_proof(answer: InstantAnswer) -> Result<InstantProof, String> {
    if answer.algorithm != INSTANT_ALGORITHM {
        return Err(format!(
            "the instant wins' algorithm is {}, this verifier checks {INSTANT_ALGORITHM}",
            answer.algorithm
        ));
    }
    let digest = |text: &str, what: &str| {
        hex::decode32(text).ok_or_else(|| format!("{what} is not 32 bytes of hex"))
    };
    Ok(InstantProof {
        key: digest(&answer.key, "the instant-win key")?,
        commitment: digest(&answer.commitment, "the instant-win commitment")?,
        prizes: answer
            .prizes
            .into_iter()
            .map(|p| (p.prize, p.count))
            .collect(),
        map: answer
            .map
            .into_iter()
            .map(|t| (t.ticket, t.prize))
            .collect(),
        awards: answer
            .awards
            .into_iter()
            .map(|a| PublishedAward {
                ticket: a.ticket,
                prize: a.prize,
                voided: a.status == "void",
            })
            .collect(),
    })
}

/// An RFC 3339 time as Unix milliseconds.
fn millis(text: &str) -> Result<i64, String> {
    crate::time::parse_stored(text)
        .map(Epoch::epoch_millis)
        .ok_or_else(|| format!("{text:?} is not an RFC 3339 time"))
}

#[cfg(test)]
mod tests;
