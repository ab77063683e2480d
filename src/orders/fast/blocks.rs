//! The blocks of one process: per series and period, the counters it reserved and has not
//! used yet, the period's format version, and how many it reserves next. Requests of the
//! process share them; a request takes its counters at its start and gives back, at its
//! end, those it did not write.

use std::num::NonZeroUsize;
use std::ops::RangeInclusive;
use std::sync::{Mutex, MutexGuard};

use jiff::{SignedDuration, Timestamp};
use lru::LruCache;
use tracing::info;

use super::super::SeriesPeriod;
use tally_domain::ids::SeriesId;
use tally_domain::series::{BLOCK_MAX_AGE, BlockSize, Period, Spare, SpareCounter};

/// The series and periods a process keeps blocks of, least recently used forgotten first
/// (their counters are then left unused).
const KEPT_PERIODS: usize = 256;

#[derive(Debug, Default)]
struct Block {
    /// The period's format version, as its reservations (or a refused one) told it.
    version: Option<u32>,
    spare: Spare,
    size: BlockSize,
    /// When this process last reserved in the period.
    reserved_at: Option<Timestamp>,
}

/// Counters a process holds unused, of one series and period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpareNumbers {
    pub series: SeriesId,
    pub period: Period,
    /// Never written.
    pub counters: Vec<RangeInclusive<u64>>,
    /// Tried by a write whose outcome is unknown: used if it committed.
    pub doubtful: Vec<u64>,
}

pub(crate) struct Blocks(Mutex<LruCache<SeriesPeriod, Block>>);

impl Default for Blocks {
    fn default() -> Self {
        Self(Mutex::new(LruCache::new(
            NonZeroUsize::new(KEPT_PERIODS).expect("positive"),
        )))
    }
}

impl Blocks {
    fn lock(&self) -> MutexGuard<'_, LruCache<SeriesPeriod, Block>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes up to `count` counters, lowest first, with the period's format version;
    /// counters reserved more than [`BLOCK_MAX_AGE`] before `now` are left unused.
    pub(crate) fn take(
        &self,
        key: &SeriesPeriod,
        count: u64,
        now: Timestamp,
    ) -> (Vec<SpareCounter>, Option<u32>) {
        let mut blocks = self.lock();
        let Some(block) = blocks.get_mut(key) else {
            return (Vec::new(), None);
        };
        let oldest = now - SignedDuration::try_from(BLOCK_MAX_AGE).unwrap_or_default();
        let expired = block.spare.expire(oldest);
        if expired > 0 {
            info!(series = %key.0, period = %key.1, expired, "spare counters left unused");
        }
        (block.spare.take(count), block.version)
    }

    /// The size of the next reservation: the process ran dry at `now`.
    pub(crate) fn ran_dry(&self, key: &SeriesPeriod, now: Timestamp) -> BlockSize {
        let mut blocks = self.lock();
        let block = blocks.get_or_insert_mut(key.clone(), Block::default);
        if let Some(lasted) = block
            .reserved_at
            .and_then(|at| std::time::Duration::try_from(now - at).ok())
        {
            block.size.ran_dry(lasted);
        }
        block.size
    }

    /// The period's format version, as this process last learned it.
    pub(crate) fn version(&self, key: &SeriesPeriod) -> Option<u32> {
        self.lock().peek(key).and_then(|block| block.version)
    }

    /// The period numbers in `version`, as a refused reservation told.
    pub(crate) fn learned(&self, key: &SeriesPeriod, version: u32) {
        self.lock()
            .get_or_insert_mut(key.clone(), Block::default)
            .version = Some(version);
    }

    /// Forgets a learned version the series no longer has. Spare counters keep theirs: a
    /// reservation fixed it, so it is never replaced.
    pub(crate) fn forget_version(&self, key: &SeriesPeriod) {
        if let Some(block) = self.lock().get_mut(key)
            && block.spare.is_empty()
        {
            block.version = None;
        }
    }

    /// Keeps the counters of a reservation that the request does not need.
    pub(crate) fn reserved(
        &self,
        key: &SeriesPeriod,
        rest: RangeInclusive<u64>,
        version: u32,
        now: Timestamp,
    ) {
        let mut blocks = self.lock();
        let block = blocks.get_or_insert_mut(key.clone(), Block::default);
        block.version = Some(version);
        block.reserved_at = Some(now);
        block.spare.add(rest, now);
    }

    /// Counters a request took and did not write. The period forgotten meanwhile (least
    /// recently used), they are left unused.
    pub(crate) fn give_back(&self, key: &SeriesPeriod, counters: Vec<SpareCounter>) {
        if counters.is_empty() {
            return;
        }
        match self.lock().get_mut(key) {
            Some(block) => block.spare.give_back(counters),
            None => info!(
                series = %key.0,
                period = %key.1,
                left = counters.len(),
                "spare counters left unused"
            ),
        }
    }

    /// Every counter this process holds unused.
    pub(crate) fn spare(&self) -> Vec<SpareNumbers> {
        self.lock()
            .iter()
            .filter(|(_, block)| !block.spare.is_empty())
            .map(|((series, period), block)| SpareNumbers {
                series: series.clone(),
                period: period.clone(),
                counters: block.spare.ranges(),
                doubtful: block.spare.doubtful(),
            })
            .collect()
    }
}
