//! The steps of the check, one function each.

use sha2::{Digest, Sha256};

use super::super::beacon::{BeaconNetwork, BeaconNetworks, ROUND_MARGIN_MS};
use super::super::eligible::EligibleSet;
use super::super::pick::{DrawInputs, Picks};
use super::{
    Checked, KeptDraw, Not, PendingPick, PickRecord, ProofPick, PublicList, PublicProof, Report,
    RoundSignature, current_winners, fail,
};
use crate::hex;

pub(super) fn commitment(proof: &PublicProof, kept: Option<&KeptDraw>) -> Checked {
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

pub(super) fn eligible_list(
    proof: &PublicProof,
    list: &PublicList,
    set: Option<&EligibleSet>,
) -> Checked {
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

pub(super) fn frozen(proof: &PublicProof, kept: Option<&KeptDraw>) -> Checked {
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
    match kept.prizes {
        None => fail(
            "the draw answer you kept fixes no number of prizes (the draw was closed without \
             `prizes`, or frozen before the close fixed them): they could have been chosen once \
             the round was out",
        ),
        Some(fixed) if fixed != proof.prizes => fail(format!(
            "the close fixed {fixed} prize(s), the proof draws {}",
            proof.prizes
        )),
        Some(_) => Ok("the same digest, count, freeze time, round and number of prizes".into()),
    }
}

pub(super) fn trusted_network(
    proof: &PublicProof,
    trusted: &BeaconNetworks,
) -> Result<BeaconNetwork, Not> {
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

pub(super) fn rounds(proof: &PublicProof, network: Option<&BeaconNetwork>) -> Checked {
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
    let Some(drawn_at_ms) = proof.drawn_at_ms else {
        return fail("the proof does not say when the winners were drawn (`drawn_at`)");
    };
    if drawn_at_ms < network.published_at_ms(beacon.round) {
        return fail("the winners were drawn before their round was published");
    }
    let mut asked_after = None;
    for (k, pick) in (1u64..).zip(&proof.picks) {
        if k <= u64::from(proof.prizes) {
            if pick.requested_at_ms.is_some() || pick.beacon.is_some() {
                return fail(format!(
                    "pick {k} is one of the prizes' first picks: it uses the draw's round, not a request or round of its own"
                ));
            }
            continue;
        }
        let at = redraw_request(pick, drawn_at_ms, asked_after)?;
        let expected = network.round_after(at);
        if pick.beacon.as_ref().map(|b| b.round) != Some(expected) {
            return fail(format!(
                "pick {k} (a redraw) does not use the first round published more than {} s after its request ({expected})",
                ROUND_MARGIN_MS / 1_000
            ));
        }
        asked_after = Some(at);
    }
    Ok(format!(
        "round {} of {}, published {} s after the freeze",
        beacon.round,
        network.name(),
        (network.published_at_ms(beacon.round) - proof.frozen_at_ms) / 1_000
    ))
}

/// A redraw's request time: it names one and a round, and was asked for once the winners
/// were drawn and after the redraw before it.
fn redraw_request(pick: &ProofPick, drawn_at_ms: i64, previous: Option<i64>) -> Result<i64, Not> {
    let k = pick.record.pick;
    let (Some(at), Some(_)) = (pick.requested_at_ms, &pick.beacon) else {
        return fail(format!(
            "pick {k} (a redraw) names no request time and round: its round would be the proof's choice"
        ));
    };
    if at < drawn_at_ms {
        return fail(format!(
            "pick {k} (a redraw) was asked for before the winners were drawn"
        ));
    }
    if previous.is_some_and(|before| at <= before) {
        return fail(format!(
            "pick {k} (a redraw) was asked for no later than the redraw before it"
        ));
    }
    Ok(at)
}

/// The randomness of the draw's round and of each redraw's.
pub(super) struct Randomness {
    draw: Vec<u8>,
    pub(super) redraws: Vec<(u64, Vec<u8>)>,
}

pub(super) fn signatures(
    proof: &PublicProof,
    network: Option<&BeaconNetwork>,
) -> Result<Randomness, Not> {
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

/// The picks' numbering against the prizes, then each pick recomputed, one step each, then
/// the prizes.
pub(super) fn picks(
    proof: &PublicProof,
    eligible: Option<&EligibleSet>,
    randomness: Option<Randomness>,
    report: &mut Report,
) {
    let records: Vec<PickRecord> = proof.picks.iter().map(|p| p.record).collect();
    // Checked before anything else: a proof with fewer picks than prizes has no pick to
    // fail, and would otherwise pass.
    if let Err(detail) = assignment(proof.prizes, &records) {
        report.add(
            "pick",
            "Picks 1 to P go to prizes 1 to P, in order",
            fail(detail),
        );
        report.add(
            "prizes",
            "Each prize names its last pick",
            Err(Not::Skipped("the picks are out of order".into())),
        );
        return;
    }
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
    for (k, published) in (1u64..).zip(&proof.picks) {
        let record = published.record;
        let title = format!(
            "Pick {} for prize {} is ticket {}",
            record.pick, record.prize, record.ticket
        );
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
    let result = if expected == proof.published_prizes {
        Ok(format!("{} prize(s)", expected.len()))
    } else {
        fail("a prize does not name the last pick that went to it")
    };
    report.add("prizes", "Each prize names its last pick", result);
}

/// A redraw asked for and not made: the prize's winner may still change.
pub(super) fn pending(waiting: &PendingPick) -> Checked {
    fail(format!(
        "prize {} waits for the redraw that round {}'s signature makes: the winners are not final until it is made (anyone who may call the API can make it with that public signature)",
        waiting.prize, waiting.round
    ))
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
