//! What one process knows of each gapless counter it numbers, between requests: the
//! counter as it last wrote or learned it, its turn while it holds one, and whether other
//! writers number the period too. Requests of the process take the view one at a time
//! (an async lock per series and period): the counter serialises them anyway, and so
//! they share what each learns instead of racing each other.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use super::super::SeriesPeriod;
use crate::store::orders::CounterState;
use tally_domain::ids::SeriesId;
use tally_domain::series::Period;

/// The periods a process keeps views of, least recently used forgotten first.
const KEPT_PERIODS: usize = 256;

/// How long a transaction on a counter takes before this process has timed one, in
/// milliseconds.
const FIRST_LATENCY: i64 = 20;

/// One process's view of one period's counter. Times are milliseconds since the epoch.
#[derive(Debug)]
pub(super) struct CounterView {
    /// The counter as this process last wrote, leased or learned it; `None`: unknown.
    pub(super) state: Option<CounterState>,
    /// The turn this process booked, while it is ahead or under way: (start, end).
    pub(super) turn: Option<(i64, i64)>,
    /// Until when other writers count as numbering the period too: until then single
    /// posts take turns.
    pub(super) contended_until: i64,
    /// How long this process's transactions on the counter take, smoothed.
    pub(super) latency: i64,
    /// When a post without a turn last found the counter moved on by another writer.
    pub(super) last_miss: i64,
}

impl Default for CounterView {
    fn default() -> Self {
        Self {
            state: None,
            turn: None,
            contended_until: 0,
            latency: FIRST_LATENCY,
            last_miss: 0,
        }
    }
}

impl CounterView {
    pub(super) fn contended(&self, now: i64) -> bool {
        self.contended_until > now
    }

    /// A transaction on the counter took `millis`.
    pub(super) fn timed(&mut self, millis: i64) {
        self.latency = (7 * self.latency + millis) / 8;
    }
}

pub(crate) struct Counters(Mutex<LruCache<SeriesPeriod, Arc<AsyncMutex<CounterView>>>>);

impl Default for Counters {
    fn default() -> Self {
        Self(Mutex::new(LruCache::new(
            NonZeroUsize::new(KEPT_PERIODS).expect("positive"),
        )))
    }
}

impl Counters {
    /// The view of a period's counter, once the requests of this process before this one
    /// are done with it.
    pub(super) async fn view(
        &self,
        series: &SeriesId,
        period: &Period,
    ) -> OwnedMutexGuard<CounterView> {
        let view = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert((series.clone(), period.clone()), Arc::default)
            .clone();
        view.lock_owned().await
    }
}
