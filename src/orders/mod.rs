//! Numbering orders: series definitions and idempotent, ordered batches.
//!
//! Gapless series move their counter in the same transaction as the orders it numbers
//! (compare-and-set), so a number exists if and only if its order does. Fast series reserve
//! a block of numbers for a whole batch with one atomic `ADD`, then write the orders; a
//! failure can leave unused numbers in the block, never a number used twice.

pub mod requests;

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use tracing::{info, instrument, warn};

use crate::domain::ids::{ExternalRef, SeriesId, SourceId};
use crate::domain::order::{NewOrder, Order};
use crate::domain::series::{Series, SeriesDefinition};
use crate::store::orders::{CounterMove, OrdersCommit};
use crate::store::{Store, StoreError, backoff};

/// Orders per gapless transaction: the counter plus two items per order within 100 items.
const GAPLESS_CHUNK: usize = 49;
/// Orders per fast transaction: two items per order within 100 items.
const FAST_CHUNK: usize = 50;
/// Attempts per chunk before its orders are reported as contended.
const MAX_ATTEMPTS: u32 = 32;

/// The current time; tests pass a fixed one to cross period boundaries.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error("series {0} does not exist")]
    SeriesNotFound(SeriesId),
    #[error("series {0} exists with another definition")]
    SeriesExists(SeriesId),
    #[error("no such order")]
    OrderNotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why one order of a request was not numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub code: &'static str,
    pub detail: String,
}

/// One order of a request: what was asked, already checked.
#[derive(Debug, Clone)]
pub struct OrderInput {
    /// As sent, for the answer, even when it is not a valid reference.
    pub external_ref: Option<String>,
    pub order: Result<NewOrder, Rejection>,
}

#[derive(Debug, Clone)]
pub enum ItemOutcome {
    Created(Order),
    Existing(Order),
    Rejected(Rejection),
}

/// A series with its current period and the last number issued in it.
#[derive(Debug, Clone)]
pub struct SeriesStatus {
    pub series: Series,
    pub period: String,
    pub last_counter: Option<u64>,
    pub last_number: Option<String>,
}

pub struct OrderService {
    store: Store,
    clock: Clock,
    series: Mutex<HashMap<SeriesId, Series>>,
    /// Last counter value seen per gapless series and period: a lower bound.
    counters: Mutex<HashMap<(SeriesId, String), u64>>,
}

impl OrderService {
    pub fn new(store: Store) -> Self {
        Self::with_clock(store, Arc::new(Utc::now))
    }

    pub fn with_clock(store: Store, clock: Clock) -> Self {
        Self {
            store,
            clock,
            series: Mutex::new(HashMap::new()),
            counters: Mutex::new(HashMap::new()),
        }
    }

    /// Defines a series; `true` when it was created, `false` when an identical one exists.
    #[instrument(skip(self, definition))]
    pub async fn define_series(
        &self,
        series_id: &SeriesId,
        definition: SeriesDefinition,
    ) -> Result<(Series, bool), OrderError> {
        let series = Series {
            series_id: series_id.clone(),
            definition,
            created_at: (self.clock)(),
        };
        if self.store.insert_series(&series).await? {
            info!(format = series.definition.format.as_str(), "series created");
            self.lock_series().insert(series_id.clone(), series.clone());
            return Ok((series, true));
        }
        let existing = self.load_series(series_id).await?;
        if existing.definition == series.definition {
            Ok((existing, false))
        } else {
            Err(OrderError::SeriesExists(series_id.clone()))
        }
    }

    #[instrument(skip(self))]
    pub async fn series_status(&self, series_id: &SeriesId) -> Result<SeriesStatus, OrderError> {
        let series = self.load_series(series_id).await?;
        let now = (self.clock)();
        let period = series.definition.reset.period(now);
        let last_counter = self.store.get_counter(series_id, &period).await?;
        let last_number = last_counter.map(|c| series.definition.format.render(series_id, now, c));
        Ok(SeriesStatus {
            series,
            period,
            last_counter,
            last_number,
        })
    }

    pub async fn get_by_number(&self, number: &str) -> Result<Order, OrderError> {
        self.store
            .get_order_by_number(number)
            .await?
            .ok_or(OrderError::OrderNotFound)
    }

    pub async fn get_by_ref(
        &self,
        source: &SourceId,
        external_ref: &ExternalRef,
    ) -> Result<Order, OrderError> {
        self.store
            .get_order_by_ref(source, external_ref)
            .await?
            .ok_or(OrderError::OrderNotFound)
    }

    /// Numbers a batch: new orders get increasing numbers in request order, known
    /// references get their order back, and each item gets its own outcome.
    #[instrument(skip(self, inputs), fields(items = inputs.len()))]
    pub async fn create_orders(
        &self,
        series_id: &SeriesId,
        source: &SourceId,
        inputs: Vec<OrderInput>,
    ) -> Result<Vec<ItemOutcome>, OrderError> {
        let series = self.load_series(series_id).await?;
        let mut batch = Batch {
            series,
            source: source.clone(),
            now: (self.clock)(),
            outcomes: vec![None; inputs.len()],
            orders: vec![None; inputs.len()],
        };
        // One number per reference: repeats inside the batch follow their first occurrence.
        let mut first_of: HashMap<ExternalRef, usize> = HashMap::new();
        let mut repeats = Vec::new();
        let mut primaries = Vec::new();
        for (index, input) in inputs.into_iter().enumerate() {
            match input.order {
                Err(rejection) => batch.outcomes[index] = Some(ItemOutcome::Rejected(rejection)),
                Ok(order) => {
                    if let Some(&first) = first_of.get(&order.external_ref) {
                        repeats.push((index, first));
                    } else {
                        first_of.insert(order.external_ref.clone(), index);
                        primaries.push(index);
                    }
                    batch.orders[index] = Some(order);
                }
            }
        }
        let refs: Vec<ExternalRef> = primaries
            .iter()
            .map(|&i| batch.new_order(i).external_ref.clone())
            .collect();
        let known = self.store.get_orders_by_refs(source, &refs).await?;
        let mut fresh = VecDeque::new();
        for index in primaries {
            match known.get(&batch.new_order(index).external_ref) {
                Some(order) => batch.found(index, order.clone()),
                None => fresh.push_back(index),
            }
        }
        if batch.series.definition.gapless {
            self.number_gapless(&mut batch, fresh).await?;
        } else {
            self.number_fast(&mut batch, fresh).await?;
        }
        for (index, first) in repeats {
            let outcome = match batch.outcomes[first]
                .clone()
                .expect("first occurrences are done")
            {
                ItemOutcome::Created(order) | ItemOutcome::Existing(order) => {
                    batch.found(index, order);
                    continue;
                }
                rejected => rejected,
            };
            batch.outcomes[index] = Some(outcome);
        }
        let outcomes: Vec<ItemOutcome> = batch
            .outcomes
            .into_iter()
            .map(|o| o.expect("every item has an outcome"))
            .collect();
        info!(
            created = outcomes
                .iter()
                .filter(|o| matches!(o, ItemOutcome::Created(_)))
                .count(),
            existing = outcomes
                .iter()
                .filter(|o| matches!(o, ItemOutcome::Existing(_)))
                .count(),
            rejected = outcomes
                .iter()
                .filter(|o| matches!(o, ItemOutcome::Rejected(_)))
                .count(),
            "orders numbered"
        );
        Ok(outcomes)
    }

    async fn number_gapless(
        &self,
        batch: &mut Batch,
        mut queue: VecDeque<usize>,
    ) -> Result<(), OrderError> {
        let series_id = batch.series.series_id.clone();
        let period = batch.period();
        let first = batch.series.definition.start;
        let cache_key = (series_id.clone(), period.clone());
        let mut attempts = 0;
        // The counter as last seen by this process; `None` means read it first.
        let mut known = self.counter(&cache_key);
        while !queue.is_empty() {
            attempts += 1;
            if attempts > MAX_ATTEMPTS {
                batch.give_up(queue);
                return Ok(());
            }
            let last = match known {
                Some(last) => last,
                None => self
                    .store
                    .get_counter(&series_id, &period)
                    .await?
                    .unwrap_or(first - 1),
            };
            let chunk: Vec<usize> = queue.iter().take(GAPLESS_CHUNK).copied().collect();
            let orders: Vec<Order> = chunk
                .iter()
                .enumerate()
                .map(|(j, &index)| batch.numbered(index, last + 1 + j as u64))
                .collect();
            let counter = CounterMove {
                expected: (last >= first).then_some(last),
                new: last + orders.len() as u64,
            };
            match self
                .store
                .commit_orders(&series_id, &period, Some(counter), &orders)
                .await?
            {
                OrdersCommit::Committed => {
                    self.set_counter(&cache_key, counter.new);
                    known = Some(counter.new);
                    for (order, index) in orders.into_iter().zip(&chunk) {
                        batch.outcomes[*index] = Some(ItemOutcome::Created(order));
                    }
                    queue.drain(..chunk.len());
                    attempts = 0;
                }
                OrdersCommit::Cancelled(cancelled) => {
                    if let Some(now) = cancelled.counter_now {
                        self.set_counter(&cache_key, now.max(first - 1));
                    } else if !cancelled.number_taken.is_empty() && cancelled.existing.is_empty() {
                        // The counter agreed, yet the number exists: another series renders
                        // the same numbers. A gapless series cannot skip it.
                        warn!(number = %orders[cancelled.number_taken[0]].order_number, "order number already used elsewhere");
                        batch.reject_all(
                            queue,
                            "order_number_taken",
                            "the next number of this series is already used by another series",
                        );
                        return Ok(());
                    }
                    let lost_race = cancelled.conflict || cancelled.counter_now.is_some();
                    for (j, order) in cancelled.existing {
                        batch.found(chunk[j], order);
                        queue.retain(|&i| i != chunk[j]);
                    }
                    // Writers that lost the counter to the same winner would all retry at
                    // once and collide again: spread them out, then read the counter afresh,
                    // since what the cancellation said has aged during the wait.
                    if lost_race {
                        backoff(attempts).await;
                        known = None;
                    } else {
                        known = Some(last);
                    }
                }
            }
        }
        Ok(())
    }

    async fn number_fast(
        &self,
        batch: &mut Batch,
        mut queue: VecDeque<usize>,
    ) -> Result<(), OrderError> {
        let series_id = batch.series.series_id.clone();
        let period = batch.period();
        let mut block: Range<u64> = 0..0;
        let mut attempts = 0;
        while !queue.is_empty() {
            attempts += 1;
            if attempts > MAX_ATTEMPTS {
                batch.give_up(queue);
                return Ok(());
            }
            if block.is_empty() {
                let count = queue.len() as u64;
                let last = self
                    .store
                    .reserve_numbers(&series_id, &period, batch.series.definition.start, count)
                    .await?;
                block = last + 1 - count..last + 1;
            }
            let take = queue
                .len()
                .min(FAST_CHUNK)
                .min((block.end - block.start) as usize);
            let chunk: Vec<usize> = queue.iter().take(take).copied().collect();
            let orders: Vec<Order> = chunk
                .iter()
                .enumerate()
                .map(|(j, &index)| batch.numbered(index, block.start + j as u64))
                .collect();
            match self
                .store
                .commit_orders(&series_id, &period, None, &orders)
                .await?
            {
                OrdersCommit::Committed => {
                    block.start += take as u64;
                    for (order, index) in orders.into_iter().zip(&chunk) {
                        batch.outcomes[*index] = Some(ItemOutcome::Created(order));
                    }
                    queue.drain(..take);
                    attempts = 0;
                }
                OrdersCommit::Cancelled(cancelled) => {
                    if let Some(&j) = cancelled.number_taken.iter().max() {
                        // Another series renders the same numbers: skip past them.
                        warn!(number = %orders[j].order_number, "order number already used elsewhere");
                        block.start += j as u64 + 1;
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

    async fn load_series(&self, series_id: &SeriesId) -> Result<Series, OrderError> {
        if let Some(series) = self.lock_series().get(series_id) {
            return Ok(series.clone());
        }
        let series = self
            .store
            .get_series(series_id)
            .await?
            .ok_or_else(|| OrderError::SeriesNotFound(series_id.clone()))?;
        self.lock_series().insert(series_id.clone(), series.clone());
        Ok(series)
    }

    fn lock_series(&self) -> std::sync::MutexGuard<'_, HashMap<SeriesId, Series>> {
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn counter(&self, key: &(SeriesId, String)) -> Option<u64> {
        self.counters
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .copied()
    }

    fn set_counter(&self, key: &(SeriesId, String), value: u64) {
        let mut counters = self.counters.lock().unwrap_or_else(|e| e.into_inner());
        let known = counters.entry(key.clone()).or_insert(value);
        *known = (*known).max(value);
    }
}

/// The state of one request while it is numbered.
struct Batch {
    series: Series,
    source: SourceId,
    now: DateTime<Utc>,
    outcomes: Vec<Option<ItemOutcome>>,
    /// The valid inputs, at their request index.
    orders: Vec<Option<NewOrder>>,
}

impl Batch {
    fn period(&self) -> String {
        self.series.definition.reset.period(self.now)
    }

    fn new_order(&self, index: usize) -> &NewOrder {
        self.orders[index].as_ref().expect("a valid input")
    }

    fn numbered(&self, index: usize, counter: u64) -> Order {
        let new = self.new_order(index);
        let series_id = &self.series.series_id;
        Order {
            order_number: self
                .series
                .definition
                .format
                .render(series_id, self.now, counter),
            series: series_id.clone(),
            source: self.source.clone(),
            external_ref: new.external_ref.clone(),
            data: new.data.clone(),
            fingerprint: new.fingerprint(series_id),
            period: self.period(),
            counter,
            created_at: self.now,
        }
    }

    /// The reference already has an order: the same one, or a different body.
    fn found(&mut self, index: usize, existing: Order) {
        let fingerprint = self.new_order(index).fingerprint(&self.series.series_id);
        self.outcomes[index] = Some(if existing.fingerprint == fingerprint {
            ItemOutcome::Existing(existing)
        } else {
            ItemOutcome::Rejected(Rejection {
                code: "idempotency_conflict",
                detail: format!(
                    "reference {} already has order {} with another body",
                    existing.external_ref, existing.order_number
                ),
            })
        });
    }

    /// Too many lost races: the rest is reported as contended, to be posted again.
    fn give_up(&mut self, queue: VecDeque<usize>) {
        warn!(
            left = queue.len(),
            gapless = self.series.definition.gapless,
            "numbering gave up under contention"
        );
        self.reject_all(
            queue,
            "contention",
            "too many concurrent writers; post again",
        );
    }

    fn reject_all(&mut self, queue: VecDeque<usize>, code: &'static str, detail: &str) {
        for index in queue {
            self.outcomes[index] = Some(ItemOutcome::Rejected(Rejection {
                code,
                detail: detail.to_owned(),
            }));
        }
    }
}
