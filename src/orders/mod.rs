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
mod reformat;
mod repeats;
pub mod requests;
mod series;
mod void;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use tracing::instrument;

pub use change::{SeriesChange, SettingsChange};
pub use fast::SpareNumbers;
pub use issuers::Entered;
pub use ledger::{AUDIT_PAGE, Audit, AuditScope, ListedPage};
#[cfg(test)]
pub(crate) use outcome::tests::snake_case;
pub use outcome::{ItemOutcome, OrderInput, Rejection, RejectionCode};
pub use series::{SERIES_MAX_AGE, SeriesStatus};

use crate::store::{Store, StoreError, random_token};

use batch::Batch;
use fast::Blocks;
use gapless::Counters;
use series::Known;
use tally_domain::access::SourceAccess;
use tally_domain::ids::{ExternalRef, SeriesId, SourceId};
use tally_domain::order::Order;
use tally_domain::series::issuer::Overlap;
use tally_domain::series::{InvalidPeriod, Period, SeriesError};
use tally_domain::time::Clock;

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
    #[error(
        "the move is for period {named}, which is not the current one ({current}), and none like it was made in {named}: a move applies to the current period"
    )]
    PeriodNotCurrent { named: Period, current: Period },
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
    #[error(
        "format {} could render {}, which format {} of this series could render in another period: a text names one order of a series, so show each date of its periods where that format shows it, or choose numbers that differ (another prefix)",
        .0.format, .0.example, .0.other_format
    )]
    FormatRepeats(Box<Overlap>),
    #[error(
        "the series' next period has numbers while this one is still current here: its periods are turning over; retry after the indicated delay"
    )]
    PeriodTurning,
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
        self.settle_stopped(&mut batch, source).await?;
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

    /// Items refused because the series numbers no more: a series refuses before it
    /// writes, so no write met their reference. One posted again after its first answer
    /// was lost has its order, the last the series had room for: it gets that order, as
    /// any repeat does.
    async fn settle_stopped(&self, batch: &mut Batch, source: &SourceId) -> Result<(), OrderError> {
        let stopped = std::mem::take(&mut batch.stopped);
        if !stopped.is_empty() {
            self.unknown_refs(batch, source, stopped).await?;
        }
        Ok(())
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
}
