//! Numbering orders: series definitions and idempotent, ordered batches; finding, voiding,
//! listing and auditing the numbers of a period; moving a counter and changing a format.
//!
//! A number is its series, period and counter; its text is rendered from them. Gapless
//! series move their counter in the same transaction as the orders it numbers, so a
//! number exists if and only if its order does; each order is a link of the period's hash
//! chain. Fast series reserve blocks of numbers with one atomic `ADD` and number from
//! them in memory, single posts and batches alike; a crash can leave unused numbers of a
//! block, never a number used twice (O6).
//!
//! A process keeps what it learns between requests: the series it numbers (read again at
//! a new period, after [`SERIES_MAX_AGE`], or when a write tells it something changed),
//! the blocks of fast series, and the counters of gapless series.

mod batch;
mod change;
mod chunk;
mod credit;
mod entries;
mod fast;
mod gapless;
mod issuers;
mod ledger;
mod lookup;
mod outcome;
mod repeats;
pub mod requests;
mod void;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tracing::{info, instrument};

pub use change::SeriesChange;
pub use fast::SpareNumbers;
pub use issuers::Entered;
pub use ledger::{AUDIT_PAGE, Audit, AuditScope, ListedPage};
#[cfg(test)]
pub(crate) use outcome::tests::snake_case;
pub use outcome::{ItemOutcome, OrderInput, Rejection, RejectionCode};

use crate::store::orders::SeriesInsert;
use crate::store::{Store, StoreError, random_token, retry};

use batch::Batch;
use fast::Blocks;
use gapless::Counters;
use tally_domain::access::SourceAccess;
use tally_domain::ids::{ExternalRef, SeriesId, SourceId};
use tally_domain::journal::Operator;
use tally_domain::order::Order;
use tally_domain::series::issuer::Overlap;
use tally_domain::series::{
    InvalidPeriod, NumberFormat, Period, RangeLow, Series, SeriesDefinition, SeriesError,
};
use tally_domain::time::Clock;

/// How long a process numbers with a series as it read it before reading it again: how
/// late it may see a change of the settings it does not check in its writes
/// (`range_low_percent`). Formats, codes and ranges it learns from its writes.
pub const SERIES_MAX_AGE: Duration = Duration::from_secs(60);

/// A series and one of its periods: what a counter, and a process's block of it, belong to.
pub(crate) type SeriesPeriod = (SeriesId, Period);

#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error("series {0} does not exist")]
    SeriesNotFound(SeriesId),
    #[error("series {0} exists with another definition")]
    SeriesExists(SeriesId),
    #[error("no such order")]
    OrderNotFound,
    /// The text is the number of several orders (of several series, or of one series
    /// whose formats changed): each of them.
    #[error("{} orders have this number; name the series and period", .0.len())]
    AmbiguousNumber(Vec<Order>),
    #[error("order {number} is void already, for another reason: {reason}")]
    AlreadyVoided { number: String, reason: String },
    #[error("the next number of this period is {}: a move goes forward only", .last + 1)]
    MoveNotForward { last: u64 },
    #[error("a series that never resets keeps the format of its numbers once it has one")]
    FormatInUse,
    #[error("the series has numbers: its validation code is fixed")]
    CodeInUse,
    #[error("the series has had {0} formats, the most it keeps")]
    TooManyFormats(usize),
    #[error(
        "format {} could render {}, which series {} (format {}) of issuer {} could render too: no two series of one issuer may render one text, so give this series a format whose numbers differ (another prefix), or another issuer",
        .0.format, .0.example, .0.series, .0.other_format, .0.issuer
    )]
    FormatOverlaps(Box<Overlap>),
    #[error("the series of this issuer have {0} formats between them, the most one issuer keeps")]
    IssuerFull(usize),
    #[error("order {number} has credit notes: it stays live, corrected by them")]
    InvoiceCredited { number: String },
    #[error("this caller may not act as source {0}")]
    SourceNotAllowed(SourceId),
    #[error(transparent)]
    Series(#[from] SeriesError),
    #[error(transparent)]
    Period(#[from] InvalidPeriod),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A series with its current period and the last number issued in it.
#[derive(Debug, Clone)]
pub struct SeriesStatus {
    pub series: Series,
    pub period: Period,
    pub last_counter: Option<u64>,
    pub last_number: Option<String>,
}

/// A series as this process last read it, and when and in which period it read it: a
/// process that numbers in a new period reads the series again, so it sees a format change
/// made for that period.
#[derive(Clone)]
struct Known {
    series: Series,
    period: Period,
    read_at: Timestamp,
}

pub struct OrderService {
    store: Store,
    clock: Clock,
    /// Random per service value (a process): the owner of its leases and turns.
    instance: String,
    series: Mutex<HashMap<SeriesId, Known>>,
    /// Ranges whose low notice this process knows is written.
    noticed_ranges: Mutex<HashSet<(SeriesId, u64)>>,
    /// The blocks of fast series this process numbers from.
    blocks: Blocks,
    /// What this process knows of gapless counters.
    counters: Counters,
}

impl OrderService {
    pub fn new(store: Store) -> Self {
        Self::with_clock(store, Arc::new(Timestamp::now))
    }

    pub fn with_clock(store: Store, clock: Clock) -> Self {
        Self {
            store,
            clock,
            instance: random_token(),
            series: Mutex::new(HashMap::new()),
            noticed_ranges: Mutex::new(HashSet::new()),
            blocks: Blocks::default(),
            counters: Counters::default(),
        }
    }

    /// The numbers of fast series this process reserved and has not used (the audit
    /// lists them as `reserved_unused` until it does; a crash leaves them unused).
    pub fn spare_numbers(&self) -> Vec<SpareNumbers> {
        self.blocks.spare()
    }

    /// The time now, to the millisecond as stored.
    fn now(&self) -> Timestamp {
        let now = (self.clock)();
        tally_domain::time::to_millis(now)
    }

    /// How long a gapless lease lasts before another writer may take it over: longer
    /// than any call of its owner can still be in flight.
    fn lease_duration(&self) -> i64 {
        let lease = self.store.operation_timeout() + Duration::from_secs(1);
        i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// Defines a series; `true` when it was created, `false` when an identical one exists.
    /// Its format must render no text another series of its issuer could (S2): the
    /// issuer's item is written in the same transaction, so of two definitions that race
    /// one wins and the other is checked again against it. The definition is journalled
    /// under `by` in the same transaction; an identical one again journals nothing.
    #[instrument(skip(self, definition, by))]
    pub async fn define_series(
        &self,
        series_id: &SeriesId,
        definition: SeriesDefinition,
        by: &Operator,
    ) -> Result<(Series, bool), OrderError> {
        let series = Series::new(series_id.clone(), definition, self.now());
        series.check(self.now())?;
        if let Some(credited) = &series.definition.credits
            && self.store.get_series(credited).await?.is_none()
        {
            return Err(SeriesError::Credits(format!("series {credited} does not exist")).into());
        }
        for attempt in retry::ORDER_WRITE.each() {
            let issuer = match self.admit(None, &series).await {
                Ok(issuer) => issuer,
                // A series of this id answers first: the same one, or another definition.
                Err(refusal) => match self.store.get_series(series_id).await? {
                    Some(existing) => return self.defined_before(existing, &series).await,
                    None => return Err(refusal),
                },
            };
            let entry = entries::defined(&series, by);
            match self
                .store
                .insert_series(&series, issuer.as_ref(), &entry)
                .await?
            {
                SeriesInsert::New => {
                    info!(format = series.definition.format.as_str(), "series created");
                    self.remember(&series);
                    return Ok((series, true));
                }
                SeriesInsert::Existing(existing) => {
                    return self.defined_before(*existing, &series).await;
                }
                SeriesInsert::IssuerChanged => retry::ORDER_WRITE.pause(attempt).await,
            }
        }
        Err(retry::ORDER_WRITE.exhausted().into())
    }

    /// A definition whose id is taken: the same definition again is answered with the
    /// series (entered on its issuer if it was defined before issuers existed), another
    /// one is refused.
    async fn defined_before(
        &self,
        existing: Series,
        asked: &Series,
    ) -> Result<(Series, bool), OrderError> {
        if existing.definition != asked.definition {
            return Err(OrderError::SeriesExists(existing.series_id));
        }
        self.enter_series(&existing).await?;
        Ok((existing, false))
    }

    #[instrument(skip(self))]
    pub async fn series_status(&self, series_id: &SeriesId) -> Result<SeriesStatus, OrderError> {
        let now = self.now();
        let mut series = self.load_series(series_id, now).await?;
        let period = series.period(now);
        let counter = self
            .store
            .get_counter(series_id, &period)
            .await?
            .unwrap_or_default();
        let last_counter = counter.last;
        let version = counter
            .format_version
            .unwrap_or_else(|| series.latest_version());
        let last_number = match last_counter {
            // The last counter was skipped by a move, never issued: the last number is
            // the last order before it.
            Some(last) if counter.moved_to == Some(last) => self
                .store
                .last_order_below(series_id, &period, last + 1)
                .await?
                .map(|order| order.order_number),
            Some(last) => {
                let format = self.format_version(&mut series, version).await?;
                Some(format.render(series.names(), &series.date(now), last))
            }
            None => None,
        };
        Ok(SeriesStatus {
            series,
            period,
            last_counter,
            last_number,
        })
    }

    /// Refuses a source the caller may not act as.
    pub fn check_source(access: &SourceAccess, source: &SourceId) -> Result<(), OrderError> {
        if access.allows(source) {
            Ok(())
        } else {
            Err(OrderError::SourceNotAllowed(source.clone()))
        }
    }

    pub async fn get_by_ref(
        &self,
        source: &SourceId,
        external_ref: &ExternalRef,
        access: &SourceAccess,
    ) -> Result<Order, OrderError> {
        Self::check_source(access, source)?;
        self.store
            .get_order_by_ref(source, external_ref)
            .await?
            .ok_or(OrderError::OrderNotFound)
    }

    /// Numbers a batch: new orders get increasing numbers in request order, known
    /// references get their order back (void ones too), and each item gets its own
    /// outcome. A credit note corrects only an invoice the caller, `access`, may read.
    #[instrument(skip(self, inputs, access), fields(items = inputs.len()))]
    pub async fn create_orders(
        &self,
        series_id: &SeriesId,
        source: &SourceId,
        inputs: Vec<OrderInput>,
        access: &SourceAccess,
    ) -> Result<Vec<ItemOutcome>, OrderError> {
        let now = self.now();
        let series = self.load_series(series_id, now).await?;
        let series = self.numbering(series).await?;
        let (mut batch, sorted) = Batch::new(series, source.clone(), now, inputs);
        let mut fresh: VecDeque<usize> = sorted.primaries.iter().copied().collect();
        // One order: its write finds a repeat by the reference's condition. A batch reads
        // its references first, as one request for all, so that a repost does not cancel
        // transactions of up to a hundred items. So does a credit note, whose invoice may
        // have been voided since it was numbered.
        if fresh.len() > 1 || batch.series.definition.credits.is_some() {
            fresh = self.unknown_refs(&mut batch, source, fresh).await?;
        }
        if batch.series.definition.credits.is_some() {
            fresh = self.find_invoices(&mut batch, fresh, access).await?;
        }
        if batch.series.definition.gapless {
            self.number_gapless(&mut batch, fresh).await?;
        } else {
            self.number_fast(&mut batch, fresh).await?;
        }
        batch.settle_repeats(sorted.repeats);
        Ok(batch.finish())
    }

    /// Numbers the orders of a request as [`Self::create_orders`] does.
    pub async fn create_request(
        &self,
        request: requests::OrderRequest,
        access: &SourceAccess,
    ) -> Result<Vec<ItemOutcome>, OrderError> {
        self.create_orders(&request.series, &request.source, request.inputs, access)
            .await
    }

    /// The items whose reference has no order yet; the others get their order.
    async fn unknown_refs(
        &self,
        batch: &mut Batch,
        source: &SourceId,
        queue: VecDeque<usize>,
    ) -> Result<VecDeque<usize>, OrderError> {
        let refs: Vec<ExternalRef> = queue
            .iter()
            .map(|&i| batch.new_order(i).external_ref.clone())
            .collect();
        let known = self.store.get_orders_by_refs(source, &refs).await?;
        let mut fresh = VecDeque::new();
        for index in queue {
            match known.get(&batch.new_order(index).external_ref) {
                Some(order) => batch.found(index, order.clone()),
                None => fresh.push_back(index),
            }
        }
        Ok(fresh)
    }

    /// The series, as this process knows it if it was read in the period of `now` less
    /// than [`SERIES_MAX_AGE`] ago, else read again.
    async fn load_series(
        &self,
        series_id: &SeriesId,
        now: Timestamp,
    ) -> Result<Series, OrderError> {
        let max_age = SignedDuration::try_from(SERIES_MAX_AGE).unwrap_or_default();
        if let Some(known) = self.lock_series().get(series_id)
            && known.series.period(now) == known.period
            && now - known.read_at < max_age
        {
            return Ok(known.series.clone());
        }
        let series = self
            .store
            .get_series(series_id)
            .await?
            .ok_or_else(|| OrderError::SeriesNotFound(series_id.clone()))?;
        self.remember(&series);
        Ok(series)
    }

    /// The series as it numbers: one with a validation code or ranges is set as
    /// numbering first (once), which fixes the code and lets its ranges only grow, and
    /// numbers with the code and ranges that write returns.
    async fn numbering(&self, series: Series) -> Result<Series, OrderError> {
        let d = &series.definition;
        if series.numbered || (d.validation_code.is_none() && d.ranges.is_empty()) {
            return Ok(series);
        }
        let numbered = self
            .store
            .set_numbered(&series.series_id)
            .await?
            .ok_or_else(|| OrderError::SeriesNotFound(series.series_id.clone()))?;
        self.remember(&numbered);
        Ok(numbered)
    }

    /// Reads `series` again, for a format version it does not know yet.
    async fn refresh_series(&self, series: &mut Series) -> Result<(), OrderError> {
        *series = self
            .store
            .get_series(&series.series_id)
            .await?
            .ok_or_else(|| OrderError::SeriesNotFound(series.series_id.clone()))?;
        self.remember(series);
        Ok(())
    }

    /// The format of `version`, reading the series again if this process does not know it.
    async fn format_version(
        &self,
        series: &mut Series,
        version: u32,
    ) -> Result<NumberFormat, OrderError> {
        if series.format(version).is_none() {
            self.refresh_series(series).await?;
        }
        series.format(version).cloned().ok_or_else(|| {
            StoreError::Invariant(format!(
                "series {} has no format version {version}",
                series.series_id
            ))
            .into()
        })
    }

    fn remember(&self, series: &Series) {
        let now = self.now();
        let known = Known {
            series: series.clone(),
            period: series.period(now),
            read_at: now,
        };
        self.lock_series().insert(series.series_id.clone(), known);
    }

    fn low_notice_written(&self, low: &RangeLow) -> bool {
        self.noticed_ranges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(low.series.clone(), low.range.from))
    }

    fn remember_low_notice(&self, low: &RangeLow) {
        self.noticed_ranges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((low.series.clone(), low.range.from));
    }

    fn lock_series(&self) -> std::sync::MutexGuard<'_, HashMap<SeriesId, Known>> {
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }
}
