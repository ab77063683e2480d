//! Gapless numbering: a writer claims the period's counter (one conditional update),
//! then moves it in the same transaction as the orders it numbers, each order linked into
//! the period's hash chain. A number exists if and only if its order does. Writers that
//! find the counter claimed wait and try again: losing a claim costs one write unit, not
//! a cancelled transaction of up to a hundred items.

use std::collections::VecDeque;
use std::time::Duration;

use chrono::Utc;

use super::batch::Batch;
use super::{MAX_ATTEMPTS, OrderError, OrderService};
use crate::domain::chain::{GENESIS, Hash, from_hex, order_link, to_hex};
use crate::domain::order::Order;
use crate::store::limits::MAX_TRANSACTION_ITEMS;
use crate::store::orders::{Claim, CounterAdvance, CounterState, OrdersCommit};
use crate::store::{StoreError, backoff, jittered_wait, random_token};
use crate::telemetry::metrics;

/// Orders per gapless transaction: the counter plus two items per order (49).
const GAPLESS_CHUNK: usize = (MAX_TRANSACTION_ITEMS - 1) / 2;

/// Waits before a claim is tried again: a claim is held for a few transactions, tens of
/// milliseconds each, so the wait stays short (an idle counter is lost throughput) but
/// random (so that waiters do not all come back together), and each try costs one unit.
fn claim_wait(attempt: u32) -> Duration {
    jittered_wait(attempt, Duration::from_millis(2), Duration::from_millis(20))
}

/// How long a request waits, in all, for other writers to give the counter up before its
/// orders are reported as contended (to be posted again): well within a request's time.
const CLAIM_PATIENCE: Duration = Duration::from_secs(8);

/// One request's hold on a counter while it numbers its chunks.
struct Hold {
    /// Random per request: the claim is this request's and no other's.
    owner: String,
    /// The counter as this request left it, while it holds the claim.
    claimed: Option<CounterState>,
    /// Whether the claim may still be this request's: then it is given up at the end.
    may_own: bool,
}

impl OrderService {
    pub(super) async fn number_gapless(
        &self,
        batch: &mut Batch,
        queue: VecDeque<usize>,
    ) -> Result<(), OrderError> {
        let mut hold = Hold {
            owner: random_token(),
            claimed: None,
            may_own: false,
        };
        let result = self.number_claimed(batch, queue, &mut hold).await;
        if hold.may_own || result.is_err() {
            // Whether or not the last transaction committed, nothing of this request can
            // commit once the claim is gone: give it up for the next writer.
            self.store
                .release_claim(&batch.series.series_id, &batch.period, &hold.owner)
                .await;
        }
        result
    }

    async fn number_claimed(
        &self,
        batch: &mut Batch,
        mut queue: VecDeque<usize>,
        hold: &mut Hold,
    ) -> Result<(), OrderError> {
        let series_id = batch.series.series_id.clone();
        let period = batch.period.clone();
        let first = batch.series.definition.start;
        let lease = self.claim_lease();
        // Transactions tried for the current chunk; claims found taken in a row; the time
        // spent waiting for the claim since the last chunk committed.
        let (mut attempts, mut taken, mut waited) = (0, 0, Duration::ZERO);
        while !queue.is_empty() {
            if attempts >= MAX_ATTEMPTS || waited > CLAIM_PATIENCE {
                batch.give_up(queue);
                return Ok(());
            }
            let state = match hold.claimed.take() {
                Some(state) => state,
                None => {
                    let now = Utc::now().timestamp_millis();
                    let claim = self
                        .store
                        .claim_counter(
                            &series_id,
                            &period,
                            &hold.owner,
                            batch.series.latest_version(),
                            now,
                            now + lease,
                        )
                        .await?;
                    match claim {
                        Claim::Claimed(state) => {
                            hold.may_own = true;
                            taken = 0;
                            state
                        }
                        Claim::Busy => {
                            taken += 1;
                            let wait = claim_wait(taken);
                            waited += wait;
                            metrics::GAPLESS_CLAIM_WAIT.add(wait.as_millis() as u64);
                            tokio::time::sleep(wait).await;
                            continue;
                        }
                    }
                }
            };
            attempts += 1;
            let version = state
                .format_version
                .unwrap_or_else(|| batch.series.latest_version());
            let format = self.format_version(&mut batch.series, version).await?;
            let last = state.last.unwrap_or(first - 1);
            let mut head = chain_head(&state)?;
            let chunk: Vec<usize> = queue.iter().take(GAPLESS_CHUNK).copied().collect();
            let orders: Vec<Order> = chunk
                .iter()
                .enumerate()
                .map(|(j, &index)| {
                    let mut order = batch.numbered(index, last + 1 + j as u64, &format);
                    head = order_link(&head, &order);
                    order.hash = Some(to_hex(&head));
                    order
                })
                .collect();
            let more = queue.len() > chunk.len();
            let advance = CounterAdvance {
                owner: hold.owner.clone(),
                format_version: version,
                expected: state.last,
                new: last + orders.len() as u64,
                head: to_hex(&head),
                keep_until: more.then(|| Utc::now().timestamp_millis() + lease),
            };
            match self
                .store
                .commit_orders(&series_id, &period, Some(&advance), &orders)
                .await?
            {
                OrdersCommit::Committed => {
                    // The last chunk gave the claim up.
                    hold.may_own = more;
                    if more {
                        hold.claimed = Some(CounterState {
                            last: Some(advance.new),
                            head: Some(advance.head),
                            format_version: Some(version),
                            pending: None,
                        });
                    }
                    for (order, index) in orders.into_iter().zip(&chunk) {
                        batch.created(*index, order);
                    }
                    queue.drain(..chunk.len());
                    (attempts, waited) = (0, Duration::ZERO);
                }
                OrdersCommit::Cancelled(cancelled) => {
                    match cancelled.counter_now {
                        // The claim was taken over (it expired) or the period's format was
                        // changed before its first number: claim again.
                        Some(now) => {
                            hold.may_own = now.pending.is_some_and(|p| p.owner == hold.owner);
                            if now.format_version.is_some_and(|v| v != version) {
                                self.refresh_series(&mut batch.series).await?;
                            }
                        }
                        None => hold.claimed = Some(state),
                    }
                    for (j, order) in cancelled.existing {
                        batch.found(chunk[j], order);
                        queue.retain(|&i| i != chunk[j]);
                    }
                    if cancelled.conflict {
                        backoff(attempts).await;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The head of the chain a claimed counter carries: the genesis before the first entry.
fn chain_head(state: &CounterState) -> Result<Hash, StoreError> {
    match (&state.head, state.last) {
        (None, None) => Ok(GENESIS),
        (Some(head), _) => from_hex(head)
            .ok_or_else(|| StoreError::Invariant(format!("the chain head {head} is not a hash"))),
        (None, Some(last)) => Err(StoreError::Invariant(format!(
            "a gapless counter at {last} carries no chain head"
        ))),
    }
}
