//! The picks of `tally-draw-v2`: each a uniform choice among the eligible tickets not
//! picked yet, from SHA-256 of the seed, the eligible digest, the pick number and the
//! randomness of the beacon round that pick uses, with rejection sampling so that no
//! ticket is favoured (no modulo bias).

use std::fmt;

use sha2::{Digest, Sha256};

use super::eligible::{EligibleError, EligibleSet, Remaining};
use crate::hex;

/// The name of the procedure, also the first bytes of every hashed message.
pub const ALGORITHM: &str = "tally-draw-v2";

/// What every pick of one draw hashes besides its number and its beacon.
#[derive(Clone)]
pub struct DrawInputs {
    pub seed: [u8; 32],
    pub digest: [u8; 32],
}

/// The seed stays hidden: before the draw is revealed it is the draw's secret.
impl fmt::Debug for DrawInputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DrawInputs")
            .field("seed", &format_args!("<secret>"))
            .field("digest", &format_args!("{}", hex::encode(&self.digest)))
            .finish()
    }
}

impl DrawInputs {
    /// The index (0-based) that pick `pick` (1-based) takes among `remaining` tickets:
    /// `x mod remaining` for the first `x` below the largest multiple of `remaining` that
    /// fits in 2^64, where `x` is the first 8 bytes (big-endian) of
    /// `SHA-256("tally-draw-v2" || seed || digest || u64be(pick) || u64be(len(beacon))
    /// || beacon || u64be(attempt))` for attempt 0, 1, 2, ...; `beacon` is the randomness
    /// of the pick's round, empty for a draw without a beacon.
    pub fn index(&self, pick: u64, beacon: &[u8], remaining: u64) -> u64 {
        assert!(remaining > 0, "nothing left to pick from");
        // 2^64 mod remaining: values at or above 2^64 minus it would favour small indices.
        let cut = (u64::MAX % remaining + 1) % remaining;
        for attempt in 0u64.. {
            let x = self.draw(pick, beacon, attempt);
            if x <= u64::MAX - cut {
                return x % remaining;
            }
        }
        unreachable!("an attempt is rejected with probability below one half")
    }

    fn draw(&self, pick: u64, beacon: &[u8], attempt: u64) -> u64 {
        let hash = Sha256::new()
            .chain_update(ALGORITHM.as_bytes())
            .chain_update(self.seed)
            .chain_update(self.digest)
            .chain_update(pick.to_be_bytes())
            .chain_update((beacon.len() as u64).to_be_bytes())
            .chain_update(beacon)
            .chain_update(attempt.to_be_bytes())
            .finalize();
        u64::from_be_bytes(hash[..8].try_into().expect("8 bytes"))
    }
}

/// The sequence of picks of one draw: pick 1, 2, ... each from the tickets not picked
/// before, each with the randomness of its own round.
pub struct Picks {
    inputs: DrawInputs,
    remaining: Remaining,
    next: u64,
}

impl Picks {
    pub fn new(eligible: &EligibleSet, inputs: DrawInputs) -> Self {
        Self {
            inputs,
            remaining: Remaining::new(eligible),
            next: 1,
        }
    }

    /// The picks that follow `picked`, the tickets of picks 1 to n: pick n + 1 on.
    pub fn after(
        eligible: &EligibleSet,
        inputs: DrawInputs,
        picked: &[u64],
    ) -> Result<Self, EligibleError> {
        let mut left = eligible.clone();
        left.remove_voided(picked)?;
        Ok(Self {
            inputs,
            remaining: Remaining::new(&left),
            next: picked.len() as u64 + 1,
        })
    }

    /// Eligible tickets not picked yet.
    pub fn left(&self) -> u64 {
        self.remaining.len()
    }

    /// The next pick with `beacon`: (pick number, ticket), or `None` when every eligible
    /// ticket was picked.
    pub fn pick(&mut self, beacon: &[u8]) -> Option<(u64, u64)> {
        let left = self.remaining.len();
        if left == 0 {
            return None;
        }
        let pick = self.next;
        self.next += 1;
        let index = self.inputs.index(pick, beacon, left);
        Some((pick, self.remaining.take(index)))
    }

    /// The next `count` picks, all with `beacon`.
    pub fn take(&mut self, count: usize, beacon: &[u8]) -> Vec<(u64, u64)> {
        std::iter::from_fn(|| self.pick(beacon))
            .take(count)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::winners::sold::tests::sold_set;

    fn inputs() -> DrawInputs {
        DrawInputs {
            seed: [7; 32],
            digest: [3; 32],
        }
    }

    #[test]
    fn indices_are_below_the_count_and_rejection_keeps_them_uniform() {
        let draw = inputs();
        // A count just above 2^63 rejects almost half the draws: what is kept is uniform.
        let huge = (1u64 << 63) + 1;
        for pick in 1..200 {
            assert!(draw.index(pick, b"", huge) < huge);
            assert_eq!(draw.index(pick, b"", 1), 0);
        }
        // Six tickets, 60,000 picks: each index about 10,000 times (chi-square, 5 df,
        // p = 0.001 at 20.5).
        let mut counts = [0u64; 6];
        for pick in 1..=60_000 {
            counts[draw.index(pick, b"r", 6) as usize] += 1;
        }
        let chi: f64 = counts
            .iter()
            .map(|&c| (c as f64 - 10_000.0).powi(2) / 10_000.0)
            .sum();
        assert!(chi < 20.5, "{counts:?}");
    }

    #[test]
    fn a_known_pick_matches_its_definition() {
        // The message of pick 1, attempt 0, written out by hand.
        let draw = inputs();
        let mut message = b"tally-draw-v2".to_vec();
        message.extend([7u8; 32]);
        message.extend([3u8; 32]);
        message.extend(1u64.to_be_bytes());
        message.extend(7u64.to_be_bytes());
        message.extend(b"round 5");
        message.extend(0u64.to_be_bytes());
        let hash = Sha256::digest(&message);
        let x = u64::from_be_bytes(hash[..8].try_into().unwrap());
        assert_eq!(draw.index(1, b"round 5", 1_000), x % 1_000);
        assert_ne!(
            draw.index(1, b"round 6", 1 << 40),
            draw.index(1, b"round 5", 1 << 40)
        );
    }

    #[test]
    fn picks_are_distinct_eligible_and_exhaust_the_list() {
        let mut eligible = sold_set(50, &[0..20, 20..40]);
        let voided: Vec<u64> = eligible.tickets().take(5).collect();
        eligible.remove_voided(&voided).unwrap();
        let picks = Picks::new(&eligible, inputs()).take(100, b"");
        assert_eq!(picks.len(), 35);
        let mut tickets: Vec<u64> = picks.iter().map(|p| p.1).collect();
        assert!(tickets.iter().all(|t| eligible.contains(*t)));
        assert_eq!(
            picks.iter().map(|p| p.0).collect::<Vec<_>>(),
            (1..=35).collect::<Vec<_>>()
        );
        tickets.sort();
        tickets.dedup();
        assert_eq!(tickets.len(), 35);
        // The same inputs pick the same tickets.
        let again = Picks::new(&eligible, inputs()).take(3, b"");
        assert_eq!(again, picks[..3]);
        let picked: Vec<u64> = picks[..3].iter().map(|p| p.1).collect();
        let mut resumed = Picks::after(&eligible, inputs(), &picked).unwrap();
        assert_eq!(resumed.pick(b""), Some(picks[3]));
        // Another beacon for pick 2 moves pick 2 and what follows, never pick 1.
        let mut other = Picks::new(&eligible, inputs());
        assert_eq!(other.pick(b""), Some(picks[0]));
        assert_ne!(other.take(3, b"other"), picks[1..4]);
    }

    #[test]
    fn debug_hides_the_seed() {
        let shown = format!("{:?}", inputs());
        assert_eq!(
            shown,
            format!(
                "DrawInputs {{ seed: <secret>, digest: {} }}",
                "03".repeat(32)
            )
        );
    }
}
