//! The check of a published draw from its public data alone, step by step, so that each
//! verifier (`tally verify-draw`, the browser page) shows which step holds and which does
//! not: the commitment, the eligible list, the list, round and number of prizes shown at
//! the close, the network, the round rule, the signatures, each pick, the prizes, a redraw
//! still waiting (`steps.rs`).

mod steps;

use serde::Serialize;

use super::beacon::{BeaconNetwork, BeaconNetworks};
use super::eligible::EligibleSet;
use super::instant::{InstantProof, check_instant};
use steps::{
    commitment, eligible_list, frozen, pending, picks, rounds, signatures, trusted_network,
};

/// One pick as published: the prize it went to and the ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PickRecord {
    pub pick: u64,
    pub prize: u32,
    pub ticket: u64,
}

/// A round of the draw's network and its signature (hex), as drand publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundSignature {
    pub round: u64,
    pub signature: String,
}

/// A pick in the proof. The first `prizes` use the draw's round; each redraw was
/// requested at a moment and uses the round fixed then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofPick {
    pub record: PickRecord,
    /// A redraw's request time (Unix milliseconds).
    pub requested_at_ms: Option<i64>,
    /// A redraw's round, when the draw has a beacon.
    pub beacon: Option<RoundSignature>,
}

/// A redraw asked for whose pick is not made yet, as the winners answer shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingPick {
    pub prize: u32,
    /// The round whose signature makes the pick.
    pub round: u64,
}

/// What the public holds of a drawn draw, besides the bitmap of its eligible list.
#[derive(Debug, Clone)]
pub struct PublicProof {
    pub seed: [u8; 32],
    pub seed_commitment: [u8; 32],
    pub total_tickets: u64,
    pub eligible_count: u64,
    pub eligible_digest: [u8; 32],
    /// When the eligible list was frozen (Unix milliseconds).
    pub frozen_at_ms: i64,
    pub prizes: u32,
    /// When the winners were drawn (Unix milliseconds): every redraw is asked for later.
    /// Proofs written before it was recorded lack it; step `round` then fails.
    pub drawn_at_ms: Option<i64>,
    /// The draw's network as the proof states it, and the draw's round.
    pub network: Option<BeaconNetwork>,
    pub beacon: Option<RoundSignature>,
    pub picks: Vec<ProofPick>,
    /// The winner each prize names: (prize, ticket).
    pub published_prizes: Vec<(u32, u64)>,
    /// A redraw asked for and not picked yet: the winners are not final.
    pub pending: Option<PendingPick>,
    /// The draw's instant wins, when it was created with some.
    pub instant: Option<InstantProof>,
}

/// The eligible list as served: the bitmap and what the answer says of it.
#[derive(Debug, Clone)]
pub struct PublicList {
    pub total_tickets: u64,
    pub bitmap: Vec<u8>,
    pub eligible_count: u64,
    pub eligible_digest: [u8; 32],
}

/// What a verifier kept of the draw's answer from the close, before the beacon was out.
#[derive(Debug, Clone, Default)]
pub struct KeptDraw {
    pub seed_commitment: [u8; 32],
    pub eligible_count: Option<u64>,
    pub eligible_digest: Option<[u8; 32]>,
    pub frozen_at_ms: Option<i64>,
    pub round: Option<u64>,
    /// The number of prizes the close fixed; `None` when the answer shows none.
    pub prizes: Option<u32>,
    /// The instant-win commitment the answer showed, when the draw has instant wins.
    pub instant_commitment: Option<[u8; 32]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Fail,
    /// Not checked, and why: nothing to check, or an earlier step failed.
    Skip,
}

/// One step of the check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// Stable: `format`, `commitment`, `eligible`, `frozen`, `network`, `round`,
    /// `signature`, `pick`, `prizes`, `pending` for a redraw still waiting, and `instant`
    /// for a draw with instant wins.
    pub id: &'static str,
    pub title: String,
    pub outcome: Outcome,
    pub detail: String,
}

/// Every step, in order.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub steps: Vec<Step>,
}

impl Report {
    pub fn passed(&self) -> bool {
        !self.steps.is_empty() && self.steps.iter().all(|s| s.outcome != Outcome::Fail)
    }

    pub(super) fn add(&mut self, id: &'static str, title: impl Into<String>, result: Checked) {
        let (outcome, detail) = match result {
            Ok(detail) => (Outcome::Pass, detail),
            Err(Not::Failed(detail)) => (Outcome::Fail, detail),
            Err(Not::Skipped(detail)) => (Outcome::Skip, detail),
        };
        self.steps.push(Step {
            id,
            title: title.into(),
            outcome,
            detail,
        });
    }

    /// The first failed step, as a line.
    pub fn failure(&self) -> Option<String> {
        self.steps
            .iter()
            .find(|s| s.outcome == Outcome::Fail)
            .map(|s| format!("{}: {}", s.title, s.detail))
    }
}

/// Why a step did not pass.
#[derive(Clone)]
pub(super) enum Not {
    Failed(String),
    Skipped(String),
}

/// A step's result: what held, or why not.
pub(super) type Checked = Result<String, Not>;

fn fail<T>(detail: impl Into<String>) -> Result<T, Not> {
    Err(Not::Failed(detail.into()))
}

/// Checks a published draw. `kept` is the draw's answer kept from the close, `trusted`
/// the networks the verifier trusts.
pub fn check(
    proof: &PublicProof,
    list: &PublicList,
    kept: Option<&KeptDraw>,
    trusted: &BeaconNetworks,
) -> Report {
    let mut report = Report::default();
    report.add(
        "commitment",
        "The seed matches the commitment published before the sale",
        commitment(proof, kept),
    );
    let eligible = EligibleSet::from_bitmap(proof.total_tickets, &list.bitmap);
    report.add(
        "eligible",
        "The eligible list matches its digest and count",
        eligible_list(proof, list, eligible.as_ref().ok()).and_then(|detail| {
            eligible
                .as_ref()
                .map(|_| detail)
                .map_err(|e| Not::Failed(e.to_string()))
        }),
    );
    report.add(
        "frozen",
        "The list, the round and the number of prizes are those shown from the close",
        frozen(proof, kept),
    );
    let network = trusted_network(proof, trusted);
    report.add(
        "network",
        "The beacon network is one you trust",
        network
            .as_ref()
            .map(|n| format!("{} ({})", n.name(), n.scheme().as_str()))
            .map_err(Not::clone),
    );
    report.add(
        "round",
        "Each beacon round is the first published after the freeze or the redraw's request",
        rounds(proof, network.as_ref().ok()),
    );
    let randomness = signatures(proof, network.as_ref().ok());
    let signed = match (&proof.beacon, &randomness) {
        (None, Ok(_)) => Err(Not::Skipped(
            "no beacon: every pick hashes an empty beacon".into(),
        )),
        (Some(_), Ok(r)) => Ok(format!("{} signature(s) valid", 1 + r.redraws.len())),
        (_, Err(not)) => Err(not.clone()),
    };
    report.add(
        "signature",
        "Each round's signature is the network's",
        signed,
    );
    picks(proof, eligible.as_ref().ok(), randomness.ok(), &mut report);
    if let Some(waiting) = &proof.pending {
        report.add("pending", "No redraw waits for its round", pending(waiting));
    }
    let kept_instant = kept.and_then(|k| k.instant_commitment);
    match &proof.instant {
        Some(instant) => report.add(
            "instant",
            "The instant wins follow from the key committed at creation",
            check_instant(
                instant,
                proof.total_tickets,
                kept_instant,
                eligible.as_ref().ok(),
            )
            .map_err(Not::Failed),
        ),
        None if kept_instant.is_some() => report.add(
            "instant",
            "The instant wins follow from the key committed at creation",
            fail("the draw showed an instant-win commitment, the proof has no instant wins"),
        ),
        None => {}
    }
    report
}

/// Each prize's winner: the last pick that went to it.
pub fn current_winners(prizes: u32, picks: &[PickRecord]) -> Vec<PickRecord> {
    (1..=prizes)
        .filter_map(|prize| picks.iter().rev().find(|p| p.prize == prize).copied())
        .collect()
}

#[cfg(test)]
mod tests;
