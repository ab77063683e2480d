//! Gapless numbering: the counter moves in the same transaction as the orders it numbers,
//! from the value the writer knows, and each order is linked into the period's hash chain.
//! A number exists if and only if its order does.
//!
//! How a writer may move the counter ([`Footing`]): a batch leases it (one conditional
//! update, cheap to lose) and keeps the lease across its chunks. A single post moves it
//! from the value its process knows, without a lease, in its one transaction; if another
//! writer moved it meanwhile, the cancellation tells the new value. Once other writers
//! number the period too, single posts take turns: a process leases the counter for a
//! short turn and numbers its posts of that turn in one transaction each, while the
//! others wait for the turn's end instead of cancelling each other's transactions.
//!
//! A request runs as named steps: [`footing`] (how the next chunk may move the counter,
//! or a wait for another writer), [`chunk`] (the next numbers, a declared jump to the
//! next authorised range, the chain's links), and [`commit`] (one transaction, and what
//! its outcome means for the rest).

mod chunk;
mod commit;
mod counters;
mod footing;
mod lease;

use std::collections::{HashSet, VecDeque};

use tokio::sync::OwnedMutexGuard;
use tracing::warn;

use super::batch::Batch;
use super::{OrderError, OrderService};
use crate::store::{Store, retry};
use tally_domain::ids::SeriesId;
use tally_domain::series::Period;

use counters::CounterView;
pub(crate) use counters::Counters;
pub(super) use footing::Footing;
use lease::Waits;

/// One request's lease of a counter while it numbers its chunks. Dropped while it may
/// still own a lease it means to give up (the request was cut off at its deadline), it
/// gives the lease up from a task of its own, so that the next writer does not wait for
/// the lease to end.
struct CounterLease {
    store: Store,
    series: SeriesId,
    period: Period,
    /// The process's own: its leases and turns are its and no other's.
    owner: String,
    /// Whether this request holds a lease it gives up at its end.
    may_own: bool,
}

impl CounterLease {
    /// Gives the lease up, trying a few times: a lease left behind blocks every writer of
    /// the period until its lease ends.
    async fn release(&mut self) {
        self.may_own = false;
        release(&self.store, &self.series, &self.period, &self.owner).await;
    }
}

impl Drop for CounterLease {
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
    let policy = retry::LEASE_RELEASE;
    for attempt in policy.each() {
        match store.release_lease(series, period, owner).await {
            Ok(()) => return,
            Err(_) if policy.allows_after(attempt) => policy.pause(attempt).await,
            Err(err) => {
                warn!(error = %err, "a counter lease was not released; it will expire");
            }
        }
    }
}

/// A request's numbering under way.
struct Run {
    lease: CounterLease,
    /// What this process knows of the counter, this request's alone while it runs.
    view: OwnedMutexGuard<CounterView>,
    /// One order to number: it may go without a lease, and takes turns under contention.
    single: bool,
    /// The items still to number, in request order.
    queue: VecDeque<usize>,
    /// Transactions tried for the current chunk.
    attempts: u32,
    waits: Waits,
    /// The ranges (by their first counter) whose low notice this request wrote or found
    /// written: no later chunk writes it again, while another range's may still be due.
    noticed: HashSet<u64>,
}

impl OrderService {
    pub(super) async fn number_gapless(
        &self,
        batch: &mut Batch,
        queue: VecDeque<usize>,
    ) -> Result<(), OrderError> {
        let view = self
            .counters
            .view(&batch.series.series_id, &batch.period)
            .await;
        let mut run = Run {
            lease: CounterLease {
                store: self.store.clone(),
                series: batch.series.series_id.clone(),
                period: batch.period.clone(),
                owner: self.instance.clone(),
                may_own: false,
            },
            view,
            single: queue.len() == 1,
            queue,
            attempts: 0,
            waits: Waits::default(),
            noticed: HashSet::new(),
        };
        let result = self.number_run(batch, &mut run).await;
        if result.is_err() {
            // What the counter is now is unknown; whether or not the last transaction
            // committed, nothing of this request can commit once the lease is gone: give
            // it up for the next writer.
            run.view.state = None;
            run.lease.may_own = true;
        }
        if run.lease.may_own {
            run.lease.release().await;
        }
        result
    }

    async fn number_run(&self, batch: &mut Batch, run: &mut Run) -> Result<(), OrderError> {
        while !run.queue.is_empty() {
            if let Some(retry_after) = run.out_of_patience(self.lease_duration()) {
                batch.give_up(std::mem::take(&mut run.queue), retry_after);
                return Ok(());
            }
            let Some(footing) = self.footing(batch, run).await? else {
                continue;
            };
            let state = self.known_counter(batch, run).await?;
            run.attempts += 1;
            let chunk = match self.chunk(batch, run, &state, footing).await? {
                Ok(chunk) => chunk,
                Err(stop) => {
                    batch.stop(std::mem::take(&mut run.queue), stop);
                    return Ok(());
                }
            };
            self.commit(batch, run, chunk).await?;
        }
        Ok(())
    }
}
