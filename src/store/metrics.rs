//! Request and capacity counters for benchmarks, tests and logs.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextRef, BeforeSerializationInterceptorContextRef,
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_types::config_bag::{Storable, StoreReplace};

use crate::telemetry;

/// An SDK interceptor that counts requests sent to DynamoDB, per operation, and times
/// them. Clones share the counts.
#[derive(Clone, Debug, Default)]
pub struct RequestCounter {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
    /// Nanoseconds from the start of each call to its end, and from sending each attempt
    /// to its answer.
    in_calls: Arc<AtomicU64>,
    in_flight: Arc<AtomicU64>,
}

/// Time spent in DynamoDB calls so far, summed over calls (calls made at once add up).
#[derive(Clone, Copy, Debug, Default)]
pub struct CallTimes {
    /// From the SDK's start of a call to its end: building and signing requests, waiting
    /// for and reading answers, retries.
    pub in_calls: Duration,
    /// From sending a request to its answer: the round trips and the table's own work.
    pub in_flight: Duration,
}

impl CallTimes {
    pub fn since(&self, earlier: &CallTimes) -> CallTimes {
        CallTimes {
            in_calls: self.in_calls.saturating_sub(earlier.in_calls),
            in_flight: self.in_flight.saturating_sub(earlier.in_flight),
        }
    }
}

/// When the SDK started a call, and sent its latest attempt.
#[derive(Clone, Copy, Debug)]
struct CallStarted(Instant);

impl Storable for CallStarted {
    type Storer = StoreReplace<Self>;
}

#[derive(Clone, Copy, Debug)]
struct AttemptSent(Instant);

impl Storable for AttemptSent {
    type Storer = StoreReplace<Self>;
}

impl RequestCounter {
    /// Requests sent so far, all operations.
    pub fn get(&self) -> u64 {
        self.snapshot().total()
    }

    /// Requests sent so far, per operation.
    pub fn snapshot(&self) -> RequestCounts {
        RequestCounts(
            self.counts
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }

    /// Time in calls so far.
    pub fn times(&self) -> CallTimes {
        CallTimes {
            in_calls: Duration::from_nanos(self.in_calls.load(Ordering::Relaxed)),
            in_flight: Duration::from_nanos(self.in_flight.load(Ordering::Relaxed)),
        }
    }
}

/// Adds the nanoseconds since `start`, if the SDK passed it on.
fn add_since(total: &AtomicU64, start: Option<Instant>) {
    if let Some(start) = start {
        let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        total.fetch_add(nanos, Ordering::Relaxed);
    }
}

impl Intercept for RequestCounter {
    fn name(&self) -> &'static str {
        "RequestCounter"
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        cfg.interceptor_state()
            .store_put(CallStarted(Instant::now()));
        Ok(())
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let operation = cfg.load::<Metadata>().map_or("unknown", Metadata::name);
        {
            let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
            *counts.entry(operation.to_owned()).or_default() += 1;
        }
        cfg.interceptor_state()
            .store_put(AttemptSent(Instant::now()));
        Ok(())
    }

    fn read_after_transmit(
        &self,
        _context: &BeforeDeserializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        add_since(&self.in_flight, cfg.load::<AttemptSent>().map(|s| s.0));
        Ok(())
    }

    fn read_after_execution(
        &self,
        _context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        add_since(&self.in_calls, cfg.load::<CallStarted>().map(|s| s.0));
        Ok(())
    }
}

/// An SDK interceptor that adds every request sent to DynamoDB, each retry included, to
/// the `DynamoDbAttempts` metric of the request or delivery it serves.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AttemptMetric;

impl Intercept for AttemptMetric {
    fn name(&self) -> &'static str {
        "AttemptMetric"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        telemetry::metrics::DYNAMODB_ATTEMPTS.add(1);
        Ok(())
    }
}

/// Requests per DynamoDB operation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestCounts(BTreeMap<String, u64>);

impl RequestCounts {
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    pub fn of(&self, operation: &str) -> u64 {
        self.0.get(operation).copied().unwrap_or(0)
    }

    /// Adds `other`'s requests to these.
    pub fn add(&mut self, other: &RequestCounts) {
        for (operation, n) in &other.0 {
            *self.0.entry(operation.clone()).or_default() += n;
        }
    }

    /// The operations with at least one request.
    pub fn operations(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// The requests sent after `earlier` was taken.
    pub fn since(&self, earlier: &RequestCounts) -> RequestCounts {
        RequestCounts(
            self.0
                .iter()
                .map(|(operation, &n)| (operation.clone(), n - earlier.of(operation)))
                .filter(|&(_, n)| n > 0)
                .collect(),
        )
    }
}

impl fmt::Display for RequestCounts {
    /// `TransactWriteItems 120, UpdateItem 4`, most frequent first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut counts: Vec<_> = self.0.iter().collect();
        counts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (i, (operation, n)) in counts.into_iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            write!(f, "{separator}{operation} {n}")?;
        }
        Ok(())
    }
}

/// Write capacity units spent, by DynamoDB's pricing rules: a write of an item costs one
/// unit per started kilobyte of the item (failed conditions included), an item of a
/// transaction twice that (cancelled ones included), and every write a global secondary
/// index makes (an item with the index's key attributes entering, changing in or leaving
/// it) one unit per started kilobyte of what the index holds of it, for writes that took
/// effect. DynamoDB Local reports its own figure, which undercounts transactions and
/// leaves out indexes. Clones share the counts.
#[derive(Clone, Debug, Default)]
pub struct WriteMeter(Arc<WriteCounts>);

#[derive(Debug, Default)]
struct WriteCounts {
    table: AtomicU64,
    index: AtomicU64,
}

impl WriteMeter {
    /// Units spent on the table's own items.
    pub fn table_units(&self) -> u64 {
        self.0.table.load(Ordering::Relaxed)
    }

    /// Units spent by the global secondary index.
    pub fn index_units(&self) -> u64 {
        self.0.index.load(Ordering::Relaxed)
    }

    /// Everything: the table's items and the index.
    pub fn total_units(&self) -> u64 {
        self.table_units() + self.index_units()
    }

    /// A single-item write of an item of `units` kilobytes.
    pub(crate) fn single_write(&self, units: u64) {
        self.0.table.fetch_add(units, Ordering::Relaxed);
    }

    /// A transaction whose items add up to `units` kilobyte-units.
    pub(crate) fn transaction(&self, units: u64) {
        self.0.table.fetch_add(2 * units, Ordering::Relaxed);
    }

    /// Index writes of a write that took effect.
    pub(crate) fn index_write(&self, units: u64) {
        self.0.index.fetch_add(units, Ordering::Relaxed);
    }
}

/// The write units of an item: one per started kilobyte of its size, which is the length
/// of its attribute names plus the size of their values, by DynamoDB's sizing rules.
pub fn item_units(item: &HashMap<String, AttributeValue>) -> u64 {
    let bytes: usize = item
        .iter()
        .map(|(name, value)| name.len() + value_size(value))
        .sum();
    bytes.div_ceil(1024).max(1) as u64
}

fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        // About one byte per two significant digits, plus one.
        AttributeValue::N(n) => n.trim_start_matches(['-', '0']).len().div_ceil(2) + 1,
        AttributeValue::B(b) => b.as_ref().len(),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => 1,
        AttributeValue::L(values) => 3 + values.iter().map(|v| 1 + value_size(v)).sum::<usize>(),
        AttributeValue::M(members) => {
            3 + members
                .iter()
                .map(|(k, v)| 1 + k.len() + value_size(v))
                .sum::<usize>()
        }
        AttributeValue::Ss(values) => values.iter().map(String::len).sum(),
        AttributeValue::Ns(values) => values.iter().map(|n| n.len().div_ceil(2) + 1).sum(),
        AttributeValue::Bs(values) => values.iter().map(|b| b.as_ref().len()).sum(),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(pairs: &[(&str, u64)]) -> RequestCounts {
        RequestCounts(pairs.iter().map(|&(o, n)| (o.to_owned(), n)).collect())
    }

    #[test]
    fn counts_since_an_earlier_snapshot_list_the_busiest_operation_first() {
        let before = counts(&[("GetItem", 2), ("UpdateItem", 1)]);
        let now = counts(&[("GetItem", 3), ("TransactWriteItems", 5), ("UpdateItem", 1)]);
        let since = now.since(&before);
        assert_eq!(since, counts(&[("GetItem", 1), ("TransactWriteItems", 5)]));
        assert_eq!(since.total(), 6);
        assert_eq!(since.of("UpdateItem"), 0);
        assert_eq!(since.to_string(), "TransactWriteItems 5, GetItem 1");
    }

    #[test]
    fn an_item_costs_one_unit_per_started_kilobyte() {
        let item = |text: String| HashMap::from([("pk".to_owned(), AttributeValue::S(text))]);
        assert_eq!(item_units(&item("x".into())), 1);
        assert_eq!(item_units(&item("x".repeat(1022))), 1);
        assert_eq!(item_units(&item("x".repeat(1023))), 2);
        assert_eq!(item_units(&item("x".repeat(16 * 1024))), 17);
    }

    #[test]
    fn index_writes_are_counted_apart_from_the_table() {
        let meter = WriteMeter::default();
        meter.transaction(3);
        meter.single_write(1);
        meter.index_write(2);
        assert_eq!(
            (
                meter.table_units(),
                meter.index_units(),
                meter.total_units()
            ),
            (7, 2, 9)
        );
    }
}
