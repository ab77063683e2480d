//! Numbering orders: series definitions and idempotent, ordered batches.
//!
//! Gapless series move their counter in the same transaction as the orders it numbers
//! (compare-and-set), so a number exists if and only if its order does. Fast series reserve
//! a block of numbers for a whole batch with one atomic `ADD`, then write the orders; a
//! failure can leave unused numbers in the block, never a number used twice.

mod batch;
mod fast;
mod gapless;
mod outcome;
pub mod requests;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use tracing::{info, instrument};

pub use outcome::{ItemOutcome, OrderInput, Rejection, RejectionCode};

use crate::domain::ids::{ExternalRef, SeriesId, SourceId};
use crate::domain::order::Order;
use crate::domain::series::{Series, SeriesDefinition};
use crate::store::{Inserted, Store, StoreError};

use batch::Batch;

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
        match self.store.insert_series(&series).await? {
            Inserted::New => {
                info!(format = series.definition.format.as_str(), "series created");
                self.lock_series().insert(series_id.clone(), series.clone());
                Ok((series, true))
            }
            Inserted::Existing(existing) if existing.definition == series.definition => {
                Ok((existing, false))
            }
            Inserted::Existing(_) => Err(OrderError::SeriesExists(series_id.clone())),
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
        let (mut batch, sorted) = Batch::new(series, source.clone(), (self.clock)(), inputs);
        let refs: Vec<ExternalRef> = sorted
            .primaries
            .iter()
            .map(|&i| batch.new_order(i).external_ref.clone())
            .collect();
        let known = self.store.get_orders_by_refs(source, &refs).await?;
        let mut fresh = VecDeque::new();
        for index in sorted.primaries {
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
        batch.settle_repeats(sorted.repeats);
        Ok(batch.finish())
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
