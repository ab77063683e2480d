//! Request and capacity counters for benchmarks, tests and logs.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::Metadata;

/// An SDK interceptor that counts requests sent to DynamoDB, per operation. Clones share
/// the counts.
#[derive(Clone, Debug, Default)]
pub struct RequestCounter(Arc<Mutex<BTreeMap<String, u64>>>);

impl RequestCounter {
    /// Requests sent so far, all operations.
    pub fn get(&self) -> u64 {
        self.snapshot().total()
    }

    /// Requests sent so far, per operation.
    pub fn snapshot(&self) -> RequestCounts {
        RequestCounts(self.0.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }
}

impl Intercept for RequestCounter {
    fn name(&self) -> &'static str {
        "RequestCounter"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let operation = cfg.load::<Metadata>().map_or("unknown", Metadata::name);
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *counts.entry(operation.to_owned()).or_default() += 1;
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

/// Write capacity units spent, by DynamoDB's pricing rules for items up to 1 KB: 1 per
/// single-item write (failed conditions included), 2 per item of a transaction (cancelled
/// ones included), 1 per entry a committed write adds to a global secondary index.
/// DynamoDB Local reports its own figure, which undercounts transactions.
#[derive(Clone, Debug, Default)]
pub struct WriteMeter(Arc<AtomicU64>);

impl WriteMeter {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn single_write(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn transaction(&self, items: usize) {
        self.0.fetch_add(2 * items as u64, Ordering::Relaxed);
    }

    /// Entries written to global secondary indexes (keys only, so 1 unit each).
    pub(crate) fn index_entries(&self, entries: usize) {
        self.0.fetch_add(entries as u64, Ordering::Relaxed);
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
}
