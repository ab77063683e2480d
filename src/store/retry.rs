//! Trying a write again: when a conditional write loses to another writer, or a passing
//! fault refuses it, the request waits a random, growing while and tries again, a bounded
//! number of times; then the contention is its answer (`503` with `Retry-After`). Every
//! loop that tries again takes a [`RetryPolicy`], and the budgets stand side by side
//! below, so that what one request may spend is read in one place.

use std::ops::RangeInclusive;
use std::time::Duration;

use rand::RngExt;

use super::StoreError;

/// How often a loop tries, and how long it waits between tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    attempts: u32,
    base: Duration,
    cap: Duration,
}

impl RetryPolicy {
    /// `attempts` tries, with waits of DynamoDB's usual scale between them (at most
    /// 8 ms × 2^attempt, at most 400 ms).
    pub const fn attempts(attempts: u32) -> Self {
        Self {
            attempts,
            base: Duration::from_millis(8),
            cap: Duration::from_millis(400),
        }
    }

    /// The same tries, with waits of at most `base` × 2^attempt, at most `cap`.
    pub const fn waiting(self, base: Duration, cap: Duration) -> Self {
        Self { base, cap, ..self }
    }

    /// How many tries the policy allows.
    pub const fn budget(self) -> u32 {
        self.attempts
    }

    /// The tries' numbers, from 1.
    pub fn each(self) -> RangeInclusive<u32> {
        1..=self.attempts
    }

    /// Whether `attempt` may be followed by another.
    pub fn allows_after(self, attempt: u32) -> bool {
        attempt < self.attempts
    }

    /// How long to wait after the try numbered `attempt` failed: random in
    /// `0..=min(cap, base × 2^attempt)` (full jitter), so that writers that failed
    /// together spread out.
    pub fn wait_after(self, attempt: u32) -> Duration {
        let ceiling = self.base.saturating_mul(1 << attempt.min(16)).min(self.cap);
        let millis = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(rand::rng().random_range(0..=millis))
    }

    /// Waits as [`Self::wait_after`] says.
    pub async fn pause(self, attempt: u32) {
        tokio::time::sleep(self.wait_after(attempt)).await;
    }

    /// The answer once every try met another writer.
    pub fn exhausted(self) -> StoreError {
        StoreError::Contention {
            attempts: self.attempts,
        }
    }
}

/// A purchase: its steps (leases, reads, commits) until one commits.
pub const PURCHASE: RetryPolicy = RetryPolicy::attempts(32);
/// A hold: its steps until one commits.
pub const HOLD: RetryPolicy = RetryPolicy::attempts(24);
/// Paying a hold (its conversion into a purchase).
pub const CONVERSION: RetryPolicy = RetryPolicy::attempts(16);
/// Releasing a hold.
pub const RELEASE: RetryPolicy = RetryPolicy::attempts(16);
/// Voiding a purchase, freezing the eligible list, recording winners or a redraw: each
/// meets only the few writes of one draw's item. Also the reads of a draw again while
/// voids commit under its eligible list.
pub const DRAW_RECORD: RetryPolicy = RetryPolicy::attempts(8);
/// An order route's write (a number, a void, a series change, an issuer's definitions).
pub const ORDER_WRITE: RetryPolicy = RetryPolicy::attempts(32);
/// The waits of a batch for another writer's lease of a gapless counter (its tries count
/// toward [`ORDER_WRITE`]): leases last a few transactions, so the waits stay short.
pub const LEASE_WAIT: RetryPolicy =
    ORDER_WRITE.waiting(Duration::from_millis(2), Duration::from_millis(20));
/// Giving a gapless counter's lease up before it is left to expire.
pub const LEASE_RELEASE: RetryPolicy = RetryPolicy::attempts(3);
/// A single-item write refused while a transaction holds its item.
pub const HELD_ITEM: RetryPolicy = RetryPolicy::attempts(6);
/// A bundle's follow-up write that failed for a passing reason: hundreds of writes each
/// failing now and then should not send the whole bundle back to its client.
pub const BUNDLE_WRITE: RetryPolicy = RetryPolicy::attempts(4);
/// An operator action's tries to move the journal's head: a try that finds the head moved
/// learns it and goes again after a short wait, as another action took the number.
pub const JOURNAL: RetryPolicy =
    RetryPolicy::attempts(64).waiting(Duration::from_millis(2), Duration::from_millis(100));
/// Rounds of a batch read whose keys DynamoDB left unprocessed.
pub const BATCH_READ: RetryPolicy = RetryPolicy::attempts(10);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_vary_and_stay_under_their_capped_ceiling() {
        let (base, cap) = (Duration::from_millis(200), Duration::from_secs(5));
        let policy = RetryPolicy::attempts(20).waiting(base, cap);
        for attempt in 0..20 {
            let ceiling = (base * 2u32.pow(attempt.min(16))).min(cap);
            let waits: Vec<Duration> = (0..200).map(|_| policy.wait_after(attempt)).collect();
            assert!(waits.iter().all(|w| *w <= ceiling), "attempt {attempt}");
            // 200 draws from 0..=ceiling: equal ones all along would mean no jitter.
            assert!(waits.iter().any(|w| *w != waits[0]), "attempt {attempt}");
        }
    }

    #[test]
    fn a_policy_counts_its_tries_and_names_them_in_its_answer() {
        let policy = RetryPolicy::attempts(3);
        assert_eq!(policy.each().collect::<Vec<_>>(), [1, 2, 3]);
        assert!(policy.allows_after(2) && !policy.allows_after(3));
        assert!(matches!(
            policy.exhausted(),
            StoreError::Contention { attempts: 3 }
        ));
    }
}
