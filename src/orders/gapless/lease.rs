//! Waiting for other writers' leases: a request that waits too long gives its orders back
//! as contended, saying honestly when to come back: when the lease it waited for ends.

use std::time::{Duration, Instant};

use jiff::Timestamp;
use tally_domain::time::Epoch;

use super::Run;
use crate::store::orders::Pending;
use crate::store::retry;

/// Waits before a batch's lease is tried again: a lease is held for a few transactions,
/// tens of milliseconds each, so the wait stays short (an idle counter is lost
/// throughput) but random (so that waiters do not all come back together), and each try
/// costs one unit.
fn lease_wait(attempt: u32) -> Duration {
    retry::LEASE_WAIT.wait_after(attempt)
}

/// How long a request waits, in all, for other writers to give the counter up before its
/// orders are reported as contended (to be posted again): well within a request's time.
const LEASE_PATIENCE: Duration = Duration::from_secs(8);

/// How long one lease may stay exactly as it is (same owner, same end) before the
/// request stops waiting for it: a live owner renews its lease with every chunk and gives
/// it up at its end, within milliseconds, and a turn ends within a fraction of a second;
/// one that does neither for this long has most likely died, and its lease ends only with
/// its lease.
const LEASE_STALE: Duration = Duration::from_secs(3);

/// What a request has seen of other writers' leases.
#[derive(Debug, Default)]
pub(super) struct Waits {
    /// Leases found taken in a row.
    taken: u32,
    /// The time spent waiting since the last chunk committed.
    waited: Duration,
    /// The last lease seen, and since when it has been the same.
    seen: Option<(Pending, Instant)>,
}

impl Waits {
    /// A lease was found taken (`held`, when DynamoDB told it).
    pub(super) fn saw(&mut self, held: Option<Pending>) {
        self.taken += 1;
        if let Some(held) = held {
            match &self.seen {
                Some((seen, _)) if *seen == held => {}
                _ => self.seen = Some((held, Instant::now())),
            }
        }
    }

    /// A batch found the lease taken: how long to wait before leasing again.
    pub(super) fn busy(&mut self, held: Option<Pending>) -> Duration {
        self.saw(held);
        let wait = lease_wait(self.taken);
        self.waited += wait;
        wait
    }

    pub(super) fn waited_for(&mut self, wait: Duration) {
        self.waited += wait;
    }

    pub(super) fn reset(&mut self) {
        *self = Self::default();
    }

    /// Whole seconds until the lease last seen ends (at least 1, at most the lease and a
    /// second).
    fn until_free(&self, lease_ms: i64) -> u32 {
        let Some((lease, _)) = &self.seen else {
            return 1;
        };
        let left = (lease.until - Timestamp::now().epoch_millis()).clamp(0, lease_ms + 1_000);
        u32::try_from((left + 999) / 1_000).unwrap_or(1).max(1)
    }
}

impl Run {
    /// `Some(retry_after)` once the request should stop: too many lost transactions, too
    /// long a wait, or a lease that stays put (its owner died or lost its release).
    pub(super) fn out_of_patience(&self, lease_ms: i64) -> Option<u32> {
        if !retry::ORDER_WRITE.allows_after(self.attempts) {
            return Some(1);
        }
        let stale = self
            .waits
            .seen
            .as_ref()
            .is_some_and(|(_, since)| since.elapsed() > LEASE_STALE);
        (self.waits.waited > LEASE_PATIENCE || stale).then(|| self.waits.until_free(lease_ms))
    }
}
