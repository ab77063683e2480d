//! The check of a published draw from its public data alone, step by step, so that each
//! verifier (`tally verify-draw`, the browser page) shows which step holds and which does
//! not: the commitment, the eligible list, the list and round shown at the close, the
//! network, the round rule, the signatures, each pick, the prizes.

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::beacon::{BeaconNetwork, BeaconNetworks, ROUND_MARGIN_MS};
use super::eligible::EligibleSet;
use super::instant::{InstantProof, check_instant};
use super::pick::{DrawInputs, Picks};
use crate::hex;

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
    /// The draw's network as the proof states it, and the draw's round.
    pub network: Option<BeaconNetwork>,
    pub beacon: Option<RoundSignature>,
    pub picks: Vec<ProofPick>,
    /// The winner each prize names: (prize, ticket).
    pub published_prizes: Vec<(u32, u64)>,
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
    /// `signature`, `pick`, `prizes`, and `instant` for a draw with instant wins.
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
        "The list and the round are those shown from the close",
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
        "Each beacon round was published after the list was frozen",
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

fn commitment(proof: &PublicProof, kept: Option<&KeptDraw>) -> Checked {
    if <[u8; 32]>::from(Sha256::digest(proof.seed)) != proof.seed_commitment {
        return fail("SHA-256 of the seed is not the proof's commitment");
    }
    match kept {
        Some(kept) if kept.seed_commitment != proof.seed_commitment => {
            fail("the draw's answer you kept publishes another commitment")
        }
        _ => Ok(format!(
            "SHA-256(seed) = {}",
            hex::encode(&proof.seed_commitment)
        )),
    }
}

fn eligible_list(proof: &PublicProof, list: &PublicList, set: Option<&EligibleSet>) -> Checked {
    if list.total_tickets != proof.total_tickets {
        return fail("the list is of a draw of another size");
    }
    if list.eligible_count != proof.eligible_count || list.eligible_digest != proof.eligible_digest
    {
        return fail("the list's answer states another count or digest than the proof");
    }
    let Some(set) = set else {
        return Ok(String::new());
    };
    if set.digest() != proof.eligible_digest {
        return fail("SHA-256 of the bitmap is not the published digest");
    }
    if set.count() != proof.eligible_count {
        return fail(format!(
            "the bitmap holds {} tickets, the proof says {}",
            set.count(),
            proof.eligible_count
        ));
    }
    Ok(format!(
        "{} eligible tickets, digest {}",
        set.count(),
        hex::encode(&proof.eligible_digest)
    ))
}

fn frozen(proof: &PublicProof, kept: Option<&KeptDraw>) -> Checked {
    let Some(kept) = kept else {
        return Err(Not::Skipped(
            "no draw answer kept from the close was given: keep GET /draws/{draw_id} from the close to check this".into(),
        ));
    };
    let (Some(count), Some(digest), Some(at)) =
        (kept.eligible_count, kept.eligible_digest, kept.frozen_at_ms)
    else {
        return fail("the draw answer you kept was read before the close: it shows no frozen list");
    };
    if (count, digest, at)
        != (
            proof.eligible_count,
            proof.eligible_digest,
            proof.frozen_at_ms,
        )
    {
        return fail(
            "the list (count, digest or freeze time) differs from the one shown at the close",
        );
    }
    if kept.round != proof.beacon.as_ref().map(|b| b.round) {
        return fail("the beacon round differs from the one shown at the close");
    }
    Ok("the same digest, count, freeze time and round".into())
}

fn trusted_network(proof: &PublicProof, trusted: &BeaconNetworks) -> Result<BeaconNetwork, Not> {
    let Some(stated) = &proof.network else {
        return Err(Not::Skipped(
            "the draw declared no beacon: it trusts whoever could read its seed before the draw"
                .into(),
        ));
    };
    match trusted.get(stated.name()) {
        Some(known) if known == stated => Ok(known.clone()),
        Some(_) => fail(format!(
            "the proof's network {} has another key or clock than the one you trust",
            stated.name()
        )),
        None => fail(format!(
            "network {} is not one you know: add its definition if you trust its public key {}",
            stated.name(),
            stated.public_key_hex()
        )),
    }
}

fn rounds(proof: &PublicProof, network: Option<&BeaconNetwork>) -> Checked {
    let (Some(network), Some(beacon)) = (network, &proof.beacon) else {
        return Err(Not::Skipped("no trusted beacon network".into()));
    };
    let expected = network.round_after(proof.frozen_at_ms);
    if beacon.round != expected {
        return fail(format!(
            "the draw uses round {}; the first round published more than {} s after the freeze is {expected}",
            beacon.round,
            ROUND_MARGIN_MS / 1_000
        ));
    }
    for pick in &proof.picks {
        let Some(at) = pick.requested_at_ms else {
            continue;
        };
        let expected = network.round_after(at);
        match &pick.beacon {
            Some(redraw) if redraw.round == expected && at >= proof.frozen_at_ms => {}
            _ => {
                return fail(format!(
                    "pick {} (a redraw) does not use the first round published after its request ({expected})",
                    pick.record.pick
                ));
            }
        }
    }
    Ok(format!(
        "round {} of {}, published {} s after the freeze",
        beacon.round,
        network.name(),
        (network.published_at_ms(beacon.round) - proof.frozen_at_ms) / 1_000
    ))
}

/// The randomness of the draw's round and of each redraw's.
struct Randomness {
    draw: Vec<u8>,
    redraws: Vec<(u64, Vec<u8>)>,
}

fn signatures(proof: &PublicProof, network: Option<&BeaconNetwork>) -> Result<Randomness, Not> {
    let Some(beacon) = &proof.beacon else {
        if proof.picks.iter().any(|p| p.beacon.is_some()) {
            return fail("a redraw names a round in a draw without a beacon");
        }
        return Ok(Randomness {
            draw: Vec::new(),
            redraws: Vec::new(),
        });
    };
    let Some(network) = network else {
        return Err(Not::Skipped("no trusted network to check against".into()));
    };
    let verify = |round: &RoundSignature| {
        network
            .randomness(round.round, &round.signature)
            .map(|r| r.to_vec())
            .map_err(|e| Not::Failed(e.to_string()))
    };
    let draw = verify(beacon)?;
    let mut redraws = Vec::new();
    for pick in &proof.picks {
        if let Some(redraw) = &pick.beacon {
            redraws.push((pick.record.pick, verify(redraw)?));
        }
    }
    Ok(Randomness { draw, redraws })
}

/// Each pick recomputed, one step each, then the prizes.
fn picks(
    proof: &PublicProof,
    eligible: Option<&EligibleSet>,
    randomness: Option<Randomness>,
    report: &mut Report,
) {
    let (Some(eligible), Some(randomness)) = (eligible, randomness) else {
        report.add(
            "pick",
            "Each pick is recomputed",
            Err(Not::Skipped(
                "needs a well-formed list and valid signatures".into(),
            )),
        );
        return;
    };
    let mut sequence = Picks::new(
        eligible,
        DrawInputs {
            seed: proof.seed,
            digest: proof.eligible_digest,
        },
    );
    let records: Vec<PickRecord> = proof.picks.iter().map(|p| p.record).collect();
    let assignment = assignment(proof.prizes, &records);
    for (k, published) in (1u64..).zip(&proof.picks) {
        let record = published.record;
        let title = format!(
            "Pick {} for prize {} is ticket {}",
            record.pick, record.prize, record.ticket
        );
        if let Err(detail) = &assignment {
            report.add("pick", title, fail(detail.clone()));
            return;
        }
        let beacon = if k <= u64::from(proof.prizes) {
            randomness.draw.as_slice()
        } else {
            match randomness.redraws.iter().find(|(pick, _)| *pick == k) {
                Some((_, value)) => value.as_slice(),
                None if proof.beacon.is_none() => &[],
                None => {
                    report.add("pick", title, fail("this redraw names no beacon round"));
                    return;
                }
            }
        };
        let result = match sequence.pick(beacon) {
            Some((_, ticket)) if ticket == record.ticket => Ok(format!(
                "recomputed: ticket {ticket} of {} remaining",
                sequence.left() + 1
            )),
            Some((_, ticket)) => fail(format!("the procedure picks ticket {ticket}")),
            None => fail("no eligible ticket is left to pick"),
        };
        report.add("pick", title, result);
    }
    let expected: Vec<(u32, u64)> = current_winners(proof.prizes, &records)
        .iter()
        .map(|p| (p.prize, p.ticket))
        .collect();
    let result = if assignment.is_err() {
        Err(Not::Skipped("the picks are out of order".into()))
    } else if expected == proof.published_prizes {
        Ok(format!("{} prize(s)", expected.len()))
    } else {
        fail("a prize does not name the last pick that went to it")
    };
    report.add("prizes", "Each prize names its last pick", result);
}

/// Picks are numbered 1, 2, ... in order; pick `k` of the first `prizes` went to prize
/// `k`, every later one to some prize.
fn assignment(prizes: u32, picks: &[PickRecord]) -> Result<(), String> {
    for (k, record) in (1u64..).zip(picks) {
        let valid = record.pick == k
            && if k <= u64::from(prizes) {
                u64::from(record.prize) == k
            } else {
                (1..=prizes).contains(&record.prize)
            };
        if !valid {
            return Err(format!(
                "pick {} is out of order or goes to a prize it cannot",
                record.pick
            ));
        }
    }
    if (picks.len() as u64) < u64::from(prizes) {
        return Err(format!("{} picks for {prizes} prizes", picks.len()));
    }
    Ok(())
}

/// Each prize's winner: the last pick that went to it.
pub fn current_winners(prizes: u32, picks: &[PickRecord]) -> Vec<PickRecord> {
    (1..=prizes)
        .filter_map(|prize| picks.iter().rev().find(|p| p.prize == prize).copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::winners::beacon::Scheme;
    use crate::winners::sold::tests::sold_set;

    /// The tests' drand network: py_ecc signatures of its rounds (tests/fixtures).
    fn network() -> (BeaconNetwork, serde_json::Value) {
        let fixture: serde_json::Value =
            serde_json::from_str(include_str!("../../../../tests/fixtures/beacon.json")).unwrap();
        let key = fixture["public_key"].as_str().unwrap();
        let network =
            BeaconNetwork::new("test", Scheme::PedersenUnchained, key, 1_700_000_000, 10).unwrap();
        (network, fixture)
    }

    fn signed(fixture: &serde_json::Value, round: u64) -> RoundSignature {
        RoundSignature {
            round,
            signature: fixture["signatures"][round.to_string()]
                .as_str()
                .unwrap()
                .to_owned(),
        }
    }

    /// A draw of 300 tickets frozen just before round 5 is the first after the margin,
    /// with 3 prizes and a redraw of prize 2 asked for when round 9 was next.
    fn drawn() -> (PublicProof, PublicList, BeaconNetworks) {
        let (network, fixture) = network();
        let mut trusted = BeaconNetworks::default();
        trusted.add(network.clone()).unwrap();
        let mut eligible = sold_set(300, &[0..120, 200..260]);
        let voided: Vec<u64> = eligible.tickets().step_by(7).collect();
        eligible.remove_voided(&voided).unwrap();
        let frozen_at_ms = network.published_at_ms(5) - ROUND_MARGIN_MS - 1;
        let requested_at_ms = network.published_at_ms(9) - ROUND_MARGIN_MS - 1;
        let seed = [9u8; 32];
        let inputs = DrawInputs {
            seed,
            digest: eligible.digest(),
        };
        let draw_round = signed(&fixture, 5);
        let redraw_round = signed(&fixture, 9);
        let random = |r: &RoundSignature| network.randomness(r.round, &r.signature).unwrap();
        let mut sequence = Picks::new(&eligible, inputs);
        let mut picks: Vec<ProofPick> = sequence
            .take(3, &random(&draw_round))
            .into_iter()
            .map(|(pick, ticket)| ProofPick {
                record: PickRecord {
                    pick,
                    prize: pick as u32,
                    ticket,
                },
                requested_at_ms: None,
                beacon: None,
            })
            .collect();
        let (pick, ticket) = sequence.pick(&random(&redraw_round)).unwrap();
        picks.push(ProofPick {
            record: PickRecord {
                pick,
                prize: 2,
                ticket,
            },
            requested_at_ms: Some(requested_at_ms),
            beacon: Some(redraw_round),
        });
        let records: Vec<PickRecord> = picks.iter().map(|p| p.record).collect();
        let proof = PublicProof {
            seed,
            seed_commitment: Sha256::digest(seed).into(),
            total_tickets: 300,
            eligible_count: eligible.count(),
            eligible_digest: eligible.digest(),
            frozen_at_ms,
            prizes: 3,
            network: Some(network),
            beacon: Some(draw_round),
            published_prizes: current_winners(3, &records)
                .iter()
                .map(|p| (p.prize, p.ticket))
                .collect(),
            picks,
            instant: None,
        };
        let list = PublicList {
            total_tickets: 300,
            bitmap: eligible.to_bitmap(),
            eligible_count: eligible.count(),
            eligible_digest: eligible.digest(),
        };
        (proof, list, trusted)
    }

    /// The first step that failed.
    fn failed(report: &Report) -> Option<&'static str> {
        report
            .steps
            .iter()
            .find(|s| s.outcome == Outcome::Fail)
            .map(|s| s.id)
    }

    #[test]
    fn a_true_draw_passes_every_step_and_each_tampering_fails_its_own() {
        let (proof, list, trusted) = drawn();
        let report = check(&proof, &list, None, &trusted);
        assert!(report.passed(), "{report:?}");
        let ids: Vec<&str> = report.steps.iter().map(|s| s.id).collect();
        assert_eq!(
            ids,
            [
                "commitment",
                "eligible",
                "frozen",
                "network",
                "round",
                "signature",
                "pick",
                "pick",
                "pick",
                "pick",
                "prizes"
            ]
        );
        assert_eq!(report.steps[2].outcome, Outcome::Skip);

        let tamper = |change: &dyn Fn(&mut PublicProof, &mut PublicList)| {
            let (mut proof, mut list, _) = drawn();
            change(&mut proof, &mut list);
            failed(&check(&proof, &list, None, &trusted))
        };
        assert_eq!(tamper(&|p, _| p.seed[0] ^= 1), Some("commitment"));
        assert_eq!(tamper(&|_, l| l.bitmap[2] ^= 0x10), Some("eligible"));
        assert_eq!(tamper(&|_, l| l.eligible_count += 1), Some("eligible"));
        // A round already published at the freeze.
        assert_eq!(
            tamper(&|p, _| p.frozen_at_ms += 10_000),
            Some("round"),
            "a round published before the freeze plus the margin"
        );
        let (_, fixture) = network();
        assert_eq!(
            tamper(&|p, _| p.beacon = Some(signed(&fixture, 4))),
            Some("round")
        );
        assert_eq!(
            tamper(&|p, _| p.beacon.as_mut().unwrap().signature =
                fixture["foreign_signatures"]["5"].as_str().unwrap().into()),
            Some("signature")
        );
        assert_eq!(
            tamper(&|p, _| p.picks[1].record.ticket = p.picks[0].record.ticket),
            Some("pick")
        );
        assert_eq!(
            tamper(&|p, _| p.published_prizes[0].1 = p.picks[3].record.ticket),
            Some("prizes")
        );
        // A redraw that names a later round than its request fixed.
        assert_eq!(
            tamper(&|p, _| p.picks[3].requested_at_ms = Some(p.frozen_at_ms - 1)),
            Some("round")
        );
        // A network the verifier does not know, or knows with another key.
        let (proof, list, _) = drawn();
        let report = check(&proof, &list, None, &BeaconNetworks::default());
        assert_eq!(failed(&report), Some("network"));
        assert!(!report.passed());
    }

    #[test]
    fn the_kept_answer_of_the_close_must_show_the_same_list_and_round() {
        let (proof, list, trusted) = drawn();
        let kept = KeptDraw {
            seed_commitment: proof.seed_commitment,
            eligible_count: Some(proof.eligible_count),
            eligible_digest: Some(proof.eligible_digest),
            frozen_at_ms: Some(proof.frozen_at_ms),
            round: Some(5),
            instant_commitment: None,
        };
        assert!(check(&proof, &list, Some(&kept), &trusted).passed());
        let before_close = KeptDraw {
            eligible_digest: None,
            ..kept.clone()
        };
        let moved = KeptDraw {
            round: Some(6),
            ..kept.clone()
        };
        let other = KeptDraw {
            seed_commitment: [0; 32],
            ..kept
        };
        for (kept, step) in [
            (before_close, "frozen"),
            (moved, "frozen"),
            (other, "commitment"),
        ] {
            assert_eq!(
                failed(&check(&proof, &list, Some(&kept), &trusted)),
                Some(step)
            );
        }
    }
}
