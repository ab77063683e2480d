//! Winners that anyone can check (`tally-draw-v1`, specified in docs/winners.md): the
//! eligible list and its public form, the picks, and the check of a published draw.

mod eligible;
mod pick;

pub use eligible::{EligibleError, EligibleSet};
pub use pick::{ALGORITHM, DrawInputs, Picks};

use sha2::{Digest, Sha256};

use super::purchase::hex;
use super::seed::DrawSeed;

/// The most prizes a draw may have: the winners and their draw record are written in one
/// transaction.
pub const MAX_PRIZES: u32 = 99;

/// One pick as published: the prize it went to and the ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PickRecord {
    pub pick: u64,
    pub prize: u32,
    pub ticket: u64,
}

/// What the public holds of a drawn draw, besides the bitmap of its eligible list.
#[derive(Debug, Clone)]
pub struct PublicProof {
    pub seed: DrawSeed,
    pub seed_commitment: String,
    /// Empty when the draw declared no beacon.
    pub beacon_value: String,
    pub total_tickets: u64,
    pub eligible_count: u64,
    pub eligible_digest: String,
    pub prizes: u32,
    /// Every pick, in order: the first `prizes` went to prizes 1, 2, ...; each later one
    /// replaced the winner of the prize it names.
    pub picks: Vec<PickRecord>,
}

/// Why a published draw does not hold up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the seed does not hash to the published commitment")]
    Commitment,
    #[error("the eligible list is malformed: {0}")]
    Eligible(#[from] EligibleError),
    #[error("the eligible list does not hash to the published digest")]
    Digest,
    #[error("the eligible list holds {actual} tickets, the proof says {published}")]
    Count { published: u64, actual: u64 },
    #[error("pick {pick} is ticket {expected:?} by the procedure, the proof says {published}")]
    Pick {
        pick: u64,
        published: u64,
        expected: Option<u64>,
    },
    #[error("pick {pick} is out of order or goes to a prize it cannot")]
    Assignment { pick: u64 },
}

/// Checks a published draw from its public data alone: the seed against its commitment,
/// the bitmap against the digest and count, and every pick against the procedure.
pub fn verify(proof: &PublicProof, bitmap: &[u8]) -> Result<(), VerifyError> {
    if hex(&Sha256::digest(proof.seed.as_bytes())) != proof.seed_commitment {
        return Err(VerifyError::Commitment);
    }
    let eligible = EligibleSet::from_bitmap(proof.total_tickets, bitmap)?;
    if hex(&eligible.digest()) != proof.eligible_digest {
        return Err(VerifyError::Digest);
    }
    if eligible.count() != proof.eligible_count {
        return Err(VerifyError::Count {
            published: proof.eligible_count,
            actual: eligible.count(),
        });
    }
    check_assignment(proof.prizes, &proof.picks)?;
    let mut picks = Picks::new(
        &eligible,
        DrawInputs {
            seed: proof.seed.clone(),
            beacon_value: proof.beacon_value.clone(),
            digest: eligible.digest(),
        },
    );
    for published in &proof.picks {
        let expected = picks.next().map(|(_, ticket)| ticket);
        if expected != Some(published.ticket) {
            return Err(VerifyError::Pick {
                pick: published.pick,
                published: published.ticket,
                expected,
            });
        }
    }
    Ok(())
}

/// Picks are numbered 1, 2, ... in order; pick `k` of the first `prizes` went to prize
/// `k`, every later one to some prize.
pub fn check_assignment(prizes: u32, picks: &[PickRecord]) -> Result<(), VerifyError> {
    for (k, record) in (1u64..).zip(picks) {
        let valid = record.pick == k
            && if k <= u64::from(prizes) {
                u64::from(record.prize) == k
            } else {
                (1..=prizes).contains(&record.prize)
            };
        if !valid {
            return Err(VerifyError::Assignment { pick: record.pick });
        }
    }
    if (picks.len() as u64) < u64::from(prizes) {
        return Err(VerifyError::Assignment {
            pick: picks.len() as u64 + 1,
        });
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
    use std::num::NonZeroUsize;

    use super::*;
    use crate::domain::permutation::{Permutation, PermutationKey};

    fn drawn(prizes: u32) -> (PublicProof, Vec<u8>) {
        let permutation = Permutation::new(500, &PermutationKey::from_bytes(&[5; 16]).unwrap());
        let mut eligible = EligibleSet::sold(
            &permutation,
            &[0..150, 150..300],
            NonZeroUsize::new(2).unwrap(),
        );
        let voided: Vec<u64> = eligible.tickets().step_by(10).collect();
        eligible.remove_voided(&voided).unwrap();
        let seed = DrawSeed::generate();
        let inputs = DrawInputs {
            seed: seed.clone(),
            beacon_value: "round 42".into(),
            digest: eligible.digest(),
        };
        // Prizes 1..=3, then a redraw of prize 2.
        let picks = Picks::new(&eligible, inputs)
            .take(prizes as usize + 1)
            .map(|(pick, ticket)| PickRecord {
                pick,
                prize: if pick <= u64::from(prizes) {
                    pick as u32
                } else {
                    2
                },
                ticket,
            })
            .collect();
        let proof = PublicProof {
            seed_commitment: seed.commitment(),
            seed,
            beacon_value: "round 42".into(),
            total_tickets: 500,
            eligible_count: eligible.count(),
            eligible_digest: hex(&eligible.digest()),
            prizes,
            picks,
        };
        (proof, eligible.to_bitmap())
    }

    #[test]
    fn a_true_draw_verifies_and_each_tampering_is_named() {
        let (proof, bitmap) = drawn(3);
        assert_eq!(verify(&proof, &bitmap), Ok(()));
        let winners = current_winners(3, &proof.picks);
        assert_eq!(
            winners.iter().map(|w| w.pick).collect::<Vec<_>>(),
            [1, 4, 3]
        );

        let mut seed = proof.clone();
        seed.seed = DrawSeed::generate();
        assert_eq!(verify(&seed, &bitmap), Err(VerifyError::Commitment));

        let mut list = bitmap.clone();
        list[3] ^= 0b100;
        assert_eq!(verify(&proof, &list), Err(VerifyError::Digest));

        let mut winner = proof.clone();
        winner.picks[1].ticket = winner.picks[0].ticket;
        assert!(matches!(
            verify(&winner, &bitmap),
            Err(VerifyError::Pick { pick: 2, .. })
        ));

        let mut beacon = proof.clone();
        beacon.beacon_value = "round 43".into();
        assert!(matches!(
            verify(&beacon, &bitmap),
            Err(VerifyError::Pick { pick: 1, .. })
        ));

        let mut order = proof.clone();
        order.picks.swap(0, 1);
        assert_eq!(
            verify(&order, &bitmap),
            Err(VerifyError::Assignment { pick: 2 })
        );
    }
}
