//! Gapless numbering: a writer claims the period's counter (one conditional update),
//! then moves it in the same transaction as the orders it numbers, each order linked into
//! the period's hash chain. A number exists if and only if its order does. Writers that
//! find the counter claimed wait and try again: losing a claim costs one write unit, not
//! a cancelled transaction of up to a hundred items.
//!
//! A request runs as named steps: [`claim`] (hold the counter, or wait for it), [`chunk`]
//! (the next numbers, a declared jump to the next authorised range, the chain's links),
//! and [`commit`] (one transaction, and what its outcome means for the rest).

mod chunk;
mod claim;
mod commit;

use std::collections::VecDeque;

use tracing::warn;

use super::batch::Batch;
use super::{OrderError, OrderService};
use crate::domain::ids::SeriesId;
use crate::domain::series::Period;
use crate::store::orders::CounterState;
use crate::store::{Store, backoff, random_token};

use claim::Waits;

/// Attempts to give a claim up before it is left to expire.
const RELEASE_ATTEMPTS: u32 = 3;

/// One request's hold on a counter while it numbers its chunks. Dropped while it may
/// still own the claim (the request was cut off at its deadline), it gives the claim up
/// from a task of its own, so that the next writer does not wait for the lease to end.
struct Hold {
    store: Store,
    series: SeriesId,
    period: Period,
    /// Random per request: the claim is this request's and no other's.
    owner: String,
    /// The counter as this request left it, while it holds the claim.
    claimed: Option<CounterState>,
    /// Whether the claim may still be this request's: then it is given up at the end.
    may_own: bool,
}

impl Hold {
    /// Gives the claim up, trying a few times: a claim left behind blocks every writer of
    /// the period until its lease ends.
    async fn release(&mut self) {
        self.may_own = false;
        release(&self.store, &self.series, &self.period, &self.owner).await;
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if !self.may_own {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (store, series, period, owner) = (
                self.store.clone(),
                self.series.clone(),
                self.period.clone(),
                self.owner.clone(),
            );
            runtime.spawn(async move { release(&store, &series, &period, &owner).await });
        }
    }
}

async fn release(store: &Store, series: &SeriesId, period: &Period, owner: &str) {
    for attempt in 1..=RELEASE_ATTEMPTS {
        match store.release_claim(series, period, owner).await {
            Ok(()) => return,
            Err(err) if attempt == RELEASE_ATTEMPTS => {
                warn!(error = %err, "a counter claim was not released; it will expire");
            }
            Err(_) => backoff(attempt).await,
        }
    }
}

/// A request's numbering under way.
struct Run {
    hold: Hold,
    /// The items still to number, in request order.
    queue: VecDeque<usize>,
    /// Transactions tried for the current chunk.
    attempts: u32,
    waits: Waits,
    /// The range mark was found written: no chunk writes it again.
    low_written: bool,
}

impl OrderService {
    pub(super) async fn number_gapless(
        &self,
        batch: &mut Batch,
        queue: VecDeque<usize>,
    ) -> Result<(), OrderError> {
        let mut run = Run {
            hold: Hold {
                store: self.store.clone(),
                series: batch.series.series_id.clone(),
                period: batch.period.clone(),
                owner: random_token(),
                claimed: None,
                may_own: false,
            },
            queue,
            attempts: 0,
            waits: Waits::default(),
            low_written: false,
        };
        let result = self.number_claimed(batch, &mut run).await;
        if run.hold.may_own || result.is_err() {
            // Whether or not the last transaction committed, nothing of this request can
            // commit once the claim is gone: give it up for the next writer.
            run.hold.release().await;
        }
        result
    }

    async fn number_claimed(&self, batch: &mut Batch, run: &mut Run) -> Result<(), OrderError> {
        while !run.queue.is_empty() {
            if let Some(retry_after) = run.out_of_patience(self.claim_lease()) {
                batch.give_up(std::mem::take(&mut run.queue), retry_after);
                return Ok(());
            }
            let Some(state) = self.claim(batch, run).await? else {
                continue;
            };
            run.attempts += 1;
            let chunk = match self.chunk(batch, run, &state).await? {
                Ok(chunk) => chunk,
                Err(stop) => {
                    batch.stop(std::mem::take(&mut run.queue), stop);
                    return Ok(());
                }
            };
            self.commit(batch, run, state, chunk).await?;
        }
        Ok(())
    }
}
