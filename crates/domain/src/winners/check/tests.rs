use super::*;
use crate::winners::beacon::{ROUND_MARGIN_MS, Scheme};
use crate::winners::pick::{DrawInputs, Picks};
use crate::winners::sold::tests::sold_set;
use sha2::{Digest, Sha256};

/// The tests' drand network: py_ecc signatures of its rounds (tests/fixtures).
fn network() -> (BeaconNetwork, serde_json::Value) {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../../../../../tests/fixtures/beacon.json")).unwrap();
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
/// drawn when round 5 was published, with 3 prizes and a redraw of prize 2 asked for when
/// round 9 was next.
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
        drawn_at_ms: Some(network.published_at_ms(5)),
        network: Some(network),
        beacon: Some(draw_round),
        published_prizes: current_winners(3, &records)
            .iter()
            .map(|p| (p.prize, p.ticket))
            .collect(),
        picks,
        pending: None,
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
    // Fewer picks than prizes, none at all included: no pick is left to fail, yet the
    // draw does not hold.
    assert_eq!(
        tamper(&|p, _| {
            p.picks.clear();
            p.published_prizes.clear();
        }),
        Some("pick")
    );
    assert_eq!(
        tamper(&|p, _| {
            p.picks.truncate(2);
            p.published_prizes.truncate(2);
        }),
        Some("pick")
    );
    // The prizes are a list in prize order, each once.
    assert_eq!(tamper(&|p, _| p.published_prizes.reverse()), Some("prizes"));
    assert_eq!(
        tamper(&|p, _| p.published_prizes.push(p.published_prizes[0])),
        Some("prizes")
    );
    // A redraw that names a later round than its request fixed.
    assert_eq!(
        tamper(&|p, _| p.picks[3].requested_at_ms = Some(p.frozen_at_ms - 1)),
        Some("round")
    );
    // A redraw without a request time: its round would be whoever wrote the proof's.
    assert_eq!(
        tamper(&|p, _| p.picks[3].requested_at_ms = None),
        Some("round")
    );
    assert_eq!(tamper(&|p, _| p.picks[3].beacon = None), Some("round"));
    // A redraw asked for before the winners were drawn, winners drawn before their round
    // was out, a first pick with a round of its own.
    assert_eq!(
        tamper(&|p, _| p.drawn_at_ms = Some(p.picks[3].requested_at_ms.unwrap() + 1)),
        Some("round")
    );
    assert_eq!(
        tamper(&|p, _| p.drawn_at_ms = p.drawn_at_ms.map(|at| at - 1)),
        Some("round")
    );
    assert_eq!(tamper(&|p, _| p.drawn_at_ms = None), Some("round"));
    assert_eq!(
        tamper(&|p, _| p.picks[0].beacon = p.beacon.clone()),
        Some("round")
    );
    // A second redraw asked for no later than the first.
    assert_eq!(
        tamper(&|p, _| {
            let mut again = p.picks[3].clone();
            again.record.pick = 5;
            p.picks.push(again);
        }),
        Some("round")
    );
    // A redraw asked for and not made: the winners are not final.
    assert_eq!(
        tamper(&|p, _| p.pending = Some(PendingPick {
            prize: 1,
            round: 12
        })),
        Some("pending")
    );
    // A network the verifier does not know, or knows with another key.
    let (proof, list, _) = drawn();
    let report = check(&proof, &list, None, &BeaconNetworks::default());
    assert_eq!(failed(&report), Some("network"));
    assert!(!report.passed());
}

#[test]
fn the_kept_answer_of_the_close_must_show_the_same_list_round_and_prizes() {
    let (proof, list, trusted) = drawn();
    let kept = KeptDraw {
        seed_commitment: proof.seed_commitment,
        eligible_count: Some(proof.eligible_count),
        eligible_digest: Some(proof.eligible_digest),
        frozen_at_ms: Some(proof.frozen_at_ms),
        round: Some(5),
        prizes: Some(3),
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
    // Prizes chosen once the round was out: another number, or none fixed at the close.
    let fewer = KeptDraw {
        prizes: Some(2),
        ..kept.clone()
    };
    let unfixed = KeptDraw {
        prizes: None,
        ..kept.clone()
    };
    let other = KeptDraw {
        seed_commitment: [0; 32],
        ..kept
    };
    for (kept, step) in [
        (before_close, "frozen"),
        (moved, "frozen"),
        (fewer, "frozen"),
        (unfixed, "frozen"),
        (other, "commitment"),
    ] {
        assert_eq!(
            failed(&check(&proof, &list, Some(&kept), &trusted)),
            Some(step)
        );
    }
}
