//! The state of one request while it is numbered: which items are new, which repeat an
//! earlier item or a known order, and each item's outcome.

use std::collections::{HashMap, VecDeque};

use jiff::Timestamp;
use tracing::{info, warn};

use super::outcome::{ItemOutcome, OrderInput, Rejection, RejectionCode};
use crate::store::orders::InvoiceRef;
use crate::telemetry::metrics;
use tally_domain::ids::{ExternalRef, SourceId};
use tally_domain::order::{NewOrder, Order};
use tally_domain::series::{LocalDate, NumberFormat, Period, Series, Stop};

/// The state of one request while it is numbered.
pub(super) struct Batch {
    pub(super) series: Series,
    pub(super) source: SourceId,
    /// One time for the whole request, in milliseconds as stored.
    pub(super) now: Timestamp,
    /// `now` in the series' calendar, and the period it falls in.
    pub(super) date: LocalDate,
    pub(super) period: Period,
    pub(super) outcomes: Vec<Option<ItemOutcome>>,
    /// The valid inputs, at their request index.
    pub(super) orders: Vec<Option<NewOrder>>,
    /// The invoice each credit note corrects, once found, at its request index.
    pub(super) invoices: Vec<Option<InvoiceRef>>,
    /// Whether the series was read again for ranges added since this process read it.
    pub(super) ranges_reread: bool,
    /// The items refused because the series numbers no more, in request order.
    pub(super) stopped: VecDeque<usize>,
}

impl Batch {
    pub(super) fn new_order(&self, index: usize) -> &NewOrder {
        self.orders[index].as_ref().expect("a valid input")
    }

    /// The order of item `index` with `counter`, rendered in `format` (the period's).
    pub(super) fn numbered(&self, index: usize, counter: u64, format: &NumberFormat) -> Order {
        let new = self.new_order(index);
        let series_id = &self.series.series_id;
        Order {
            order_number: format.render(self.series.names(), &self.date, counter),
            series: series_id.clone(),
            source: self.source.clone(),
            external_ref: new.external_ref.clone(),
            data: new.data.clone(),
            fingerprint: new.fingerprint(series_id),
            period: self.period.to_string(),
            counter,
            created_at: self.now,
            hash: None,
            void: None,
            corrects: new.corrects.clone(),
            credit_notes: Vec::new(),
        }
    }

    /// Item `index` was numbered: its order committed.
    pub(super) fn created(&mut self, index: usize, order: Order) {
        let mode = if self.series.definition.gapless {
            "gapless"
        } else {
            "fast"
        };
        metrics::ORDERS_NUMBERED.add(mode, 1);
        self.outcomes[index] = Some(ItemOutcome::Created(order));
    }

    /// The reference already has an order: the same one, or a different body.
    pub(super) fn found(&mut self, index: usize, existing: Order) {
        let fingerprint = self.new_order(index).fingerprint(&self.series.series_id);
        self.outcomes[index] = Some(if existing.fingerprint == fingerprint {
            ItemOutcome::Existing(existing)
        } else {
            // The caller may act as the source, so it may read the order the reference
            // names: saying which one tells it what to do.
            let why = if existing.series == self.series.series_id {
                "with another body: repeat the first body, or post this order under a new reference"
            } else {
                "(a source's reference names one order across all series): post this order under a new reference"
            };
            ItemOutcome::Rejected(Rejection::new(
                RejectionCode::IdempotencyConflict,
                format!(
                    "reference {} of source {} is taken by order {} of series {} {why}",
                    existing.external_ref, existing.source, existing.order_number, existing.series
                ),
            ))
        });
    }

    /// Too many lost races: the rest is reported as contended, to be posted again after
    /// `retry_after` seconds.
    pub(super) fn give_up(&mut self, queue: VecDeque<usize>, retry_after: u32) {
        warn!(
            left = queue.len(),
            gapless = self.series.definition.gapless,
            retry_after,
            "numbering gave up under contention"
        );
        for index in queue {
            let mut rejection = Rejection::new(
                RejectionCode::Contention,
                "too many concurrent writers; post again",
            );
            rejection.retry_after = Some(retry_after);
            self.outcomes[index] = Some(ItemOutcome::Rejected(rejection));
        }
    }

    /// The series numbers no more: the rest is refused with the reason (and kept in
    /// `stopped`, for those whose reference has an order after all).
    pub(super) fn stop(&mut self, queue: VecDeque<usize>, stop: Stop) {
        let (code, detail) = match stop {
            Stop::SeriesExhausted => (
                RejectionCode::SeriesExhausted,
                "the next number would not fit the series' format (its `max_length` or exact width)",
            ),
            Stop::RangeExhausted => (
                RejectionCode::RangeExhausted,
                "every authorised range of the series is used up: add the next one",
            ),
            Stop::RangeExpired => (
                RejectionCode::RangeExpired,
                "the authorised ranges left have expired: add a live one",
            ),
        };
        info!(
            left = queue.len(),
            code = code.as_str(),
            "series numbers no more"
        );
        self.stopped.extend(&queue);
        self.reject_all(queue, code, detail);
    }

    pub(super) fn reject_all(&mut self, queue: VecDeque<usize>, code: RejectionCode, detail: &str) {
        for index in queue {
            self.reject(index, code, detail);
        }
    }

    pub(super) fn reject(&mut self, index: usize, code: RejectionCode, detail: impl Into<String>) {
        self.outcomes[index] = Some(ItemOutcome::Rejected(Rejection::new(code, detail)));
    }
}

/// A request split into the items to number and the items that repeat a reference.
pub(super) struct Sorted {
    /// The first item of each reference, in request order.
    pub(super) primaries: Vec<usize>,
    /// (item, the earlier item with the same reference).
    pub(super) repeats: Vec<(usize, usize)>,
}

impl Batch {
    /// Takes the inputs of a request; invalid ones are rejected at once. One number per
    /// reference: repeats inside the batch follow their first occurrence.
    pub(super) fn new(
        series: Series,
        source: SourceId,
        now: Timestamp,
        inputs: Vec<OrderInput>,
    ) -> (Self, Sorted) {
        let date = series.date(now);
        let period = series.definition.reset.period(&date);
        let mut batch = Batch {
            series,
            source,
            now,
            date,
            period,
            outcomes: vec![None; inputs.len()],
            orders: vec![None; inputs.len()],
            invoices: vec![None; inputs.len()],
            ranges_reread: false,
            stopped: VecDeque::new(),
        };
        let mut first_of: HashMap<ExternalRef, usize> = HashMap::new();
        let mut sorted = Sorted {
            primaries: Vec::new(),
            repeats: Vec::new(),
        };
        let credits = batch.series.definition.credits.is_some();
        for (index, input) in inputs.into_iter().enumerate() {
            match input.order {
                Err(rejection) => batch.outcomes[index] = Some(ItemOutcome::Rejected(rejection)),
                Ok(order) if credits && order.corrects.is_none() => batch.reject(
                    index,
                    RejectionCode::CorrectsRequired,
                    "this series numbers credit notes: name the invoice in `corrects`",
                ),
                Ok(order) if !credits && order.corrects.is_some() => batch.reject(
                    index,
                    RejectionCode::InvalidCorrects,
                    "this series credits no other series: only its credit notes take `corrects`",
                ),
                Ok(order) => {
                    if let Some(&first) = first_of.get(&order.external_ref) {
                        sorted.repeats.push((index, first));
                    } else {
                        first_of.insert(order.external_ref.clone(), index);
                        sorted.primaries.push(index);
                    }
                    batch.orders[index] = Some(order);
                }
            }
        }
        (batch, sorted)
    }

    /// Gives each repeated reference the outcome of its first occurrence.
    pub(super) fn settle_repeats(&mut self, repeats: Vec<(usize, usize)>) {
        for (index, first) in repeats {
            let outcome = match self.outcomes[first]
                .clone()
                .expect("first occurrences are done")
            {
                ItemOutcome::Created(order) | ItemOutcome::Existing(order) => {
                    self.found(index, order);
                    continue;
                }
                rejected => rejected,
            };
            self.outcomes[index] = Some(outcome);
        }
    }

    /// Every item's outcome, in request order.
    pub(super) fn finish(self) -> Vec<ItemOutcome> {
        let outcomes: Vec<ItemOutcome> = self
            .outcomes
            .into_iter()
            .map(|o| o.expect("every item has an outcome"))
            .collect();
        let count =
            |wanted: fn(&ItemOutcome) -> bool| outcomes.iter().filter(|o| wanted(o)).count();
        info!(
            created = count(|o| matches!(o, ItemOutcome::Created(_))),
            existing = count(|o| matches!(o, ItemOutcome::Existing(_))),
            rejected = count(|o| matches!(o, ItemOutcome::Rejected(_))),
            "orders numbered"
        );
        outcomes
    }
}
