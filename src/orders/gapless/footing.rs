//! How the next chunk may move the counter: under the request's lease (a batch), in this
//! process's turn, or from the value this process knows (a single post while no other
//! writer numbers the period). A post that finds the counter moved on learns it from the
//! cancellation and tries again at once. Once other writers number the period too (the
//! counter found moved on twice in a short while, a lease or a turn found ahead), single
//! posts take turns: a process books a turn of about [`TURN_ORDERS`] of its transactions,
//! one update that never loses, sleeps until it starts, reads the counter, and numbers
//! each post of its turn in one transaction. No post moves the counter without a turn
//! while one is booked ahead, so turns follow each other instead of cancelling each
//! other's transactions.

use std::time::Duration;

use jiff::Timestamp;
use rand::RngExt;
use tally_domain::time::Epoch;

use super::super::{OrderError, OrderService};
use super::Run;
use crate::orders::batch::Batch;
use crate::store::orders::{Booking, Lease, TurnPlace};
use crate::telemetry::metrics;

/// A turn lasts about this many of its process's transactions: long enough that booking
/// it and reading the counter at its start cost little per order, short enough that the
/// writers booked after it wait little.
const TURN_ORDERS: i64 = 8;
/// The shortest and longest turn, in milliseconds.
const TURN_LIMITS: (i64, i64) = (50, 1_000);

/// Writers waiting for another's lease take it again within this much after it ends, at
/// random, so that one of them leases first.
const WAKE_SPREAD: Duration = Duration::from_millis(10);

/// How long other writers count as numbering the period after the last sign of them.
const CONTENDED_FOR: Duration = Duration::from_secs(2);

/// How the next chunk may move the counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Footing {
    /// The request leased it; it keeps the lease while more chunks follow.
    Leased,
    /// This process's turn.
    Turn,
    /// From the value this process knows, while no turn is booked ahead and no other
    /// writer holds a live lease.
    Free,
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Sleeps until `until` (milliseconds since the epoch) and a random part of `spread`.
async fn sleep_until(until: i64, spread: Duration) {
    let spread = rand::rng().random_range(0..=millis(spread));
    let left = until + spread - Timestamp::now().epoch_millis();
    if left > 0 {
        tokio::time::sleep(Duration::from_millis(left.unsigned_abs())).await;
    }
}

impl Run {
    /// Another writer numbers the period too.
    pub(super) fn contended(&mut self, now: i64) {
        self.view.contended_until = now + millis(CONTENDED_FOR);
    }

    /// A post without a turn found the counter moved on: once in a while that is a writer
    /// that numbered earlier; twice within [`CONTENDED_FOR`], writers that number now.
    pub(super) fn missed(&mut self, now: i64) {
        if now - self.view.last_miss < millis(CONTENDED_FOR) {
            self.contended(now);
        }
        self.view.last_miss = now;
    }
}

impl OrderService {
    /// How the next chunk may move the counter, with the counter's state in the view;
    /// `None` after a wait.
    pub(super) async fn footing(
        &self,
        batch: &Batch,
        run: &mut Run,
    ) -> Result<Option<Footing>, OrderError> {
        let now = Timestamp::now().epoch_millis();
        if run.lease.may_own && run.view.state.is_some() {
            return Ok(Some(Footing::Leased));
        }
        if !run.single {
            return self.lease(batch, run).await;
        }
        if let Some((start, end)) = run.view.turn {
            // A transaction begun now should end within the turn (on an endpoint slower
            // than a turn is long, within its second half).
            if now + run.view.latency.min((end - start) / 2) < end {
                if now < start {
                    self.wait_for(run, start, Duration::ZERO).await;
                    return Ok(None);
                }
                return self.when_free(batch, run, Footing::Turn).await;
            }
            run.view.turn = None;
        }
        if run.view.contended(now) {
            self.book(batch, run, now).await?;
            return Ok(None);
        }
        self.when_free(batch, run, Footing::Free).await
    }

    /// Books this process's next turn.
    async fn book(&self, batch: &Batch, run: &mut Run, now: i64) -> Result<(), OrderError> {
        let known_ahead = run
            .view
            .state
            .as_ref()
            .and_then(|c| c.turns)
            .is_some_and(|end| end >= now);
        let place = if known_ahead {
            TurnPlace::Queued
        } else {
            TurnPlace::Now
        };
        let booking = Booking {
            format_version: batch.series.latest_version(),
            now,
            length: self.turn_length(run),
        };
        let turn = self
            .store
            .book_turn(&batch.series.series_id, &batch.period, booking, place)
            .await?;
        run.view.turn = Some((turn.start, turn.end));
        if turn.start > now {
            // Turns are booked ahead: read the counter when this one starts.
            run.contended(now);
            run.view.state = None;
        } else {
            run.view.state = Some(turn.counter);
        }
        Ok(())
    }

    /// `footing`, once the counter's state is known and free: read if it is not known;
    /// while another writer's lease holds it, wait (and read again after); without a turn,
    /// book one if turns are booked ahead.
    async fn when_free(
        &self,
        batch: &Batch,
        run: &mut Run,
        footing: Footing,
    ) -> Result<Option<Footing>, OrderError> {
        let counter = match &run.view.state {
            Some(counter) => counter.clone(),
            None => self.read_counter(batch, run).await?,
        };
        let now = Timestamp::now().epoch_millis();
        let other = counter
            .pending
            .filter(|p| p.until >= now && p.owner != run.lease.owner);
        if let Some(other) = other {
            run.contended(now);
            run.view.state = None;
            let until = other.until.min(now + self.turn_length(run));
            run.waits.saw(Some(other));
            self.wait_for(run, until, WAKE_SPREAD).await;
            return Ok(None);
        }
        if footing == Footing::Free && counter.turns.is_some_and(|end| end >= now) {
            run.contended(now);
            return Ok(None);
        }
        Ok(Some(footing))
    }

    /// How long this process's turns last: about [`TURN_ORDERS`] of its transactions.
    pub(super) fn turn_length(&self, run: &Run) -> i64 {
        (TURN_ORDERS * run.view.latency).clamp(TURN_LIMITS.0, TURN_LIMITS.1)
    }

    /// Leases the counter for the request's chunks (a batch).
    async fn lease(&self, batch: &Batch, run: &mut Run) -> Result<Option<Footing>, OrderError> {
        let now = Timestamp::now().epoch_millis();
        let lease = self
            .store
            .lease_counter(
                &batch.series.series_id,
                &batch.period,
                &run.lease.owner,
                batch.series.latest_version(),
                now,
                now + self.lease_duration(),
            )
            .await?;
        match lease {
            Lease::Leased(state) => {
                run.lease.may_own = true;
                run.waits.reset();
                run.view.state = Some(state);
                Ok(Some(Footing::Leased))
            }
            Lease::Busy(held) => {
                let wait = run.waits.busy(held);
                metrics::GAPLESS_LEASE_WAIT.add(wait.as_millis() as u64);
                tokio::time::sleep(wait).await;
                Ok(None)
            }
        }
    }

    /// Waits until `until` (and a random part of `spread`): the end of another writer's
    /// lease, or the start of this process's turn.
    pub(super) async fn wait_for(&self, run: &mut Run, until: i64, spread: Duration) {
        let started = std::time::Instant::now();
        sleep_until(until, spread).await;
        let waited = started.elapsed();
        run.waits.waited_for(waited);
        metrics::GAPLESS_LEASE_WAIT.add(waited.as_millis() as u64);
    }
}
