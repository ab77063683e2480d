//! Business metrics in CloudWatch's Embedded Metric Format, counted through the `metrics`
//! facade and written by its EMF recorder (`metrics_cloudwatch_embedded`) as JSON log
//! lines that CloudWatch Logs turns into metrics. No API call, no extra permission: the
//! functions already write their logs.
//!
//! A metric is declared once, in the list below (one line), and counted where it happens:
//!
//! ```
//! # use tally::telemetry::metrics;
//! metrics::TICKETS_SOLD.add(3);
//! metrics::ORDERS_NUMBERED.add("gapless", 1);
//! ```
//!
//! The recorder is the process's: [`install`] it (on Lambda, or `tally serve --metrics`)
//! and every count adds up until the end of the next [`written_after`], which writes what
//! was counted since the previous one, one document per dimension value. Lambda hands a
//! process one event at a time, so there a document holds what one request (or queue
//! delivery) counted. The local server runs requests side by side: a document holds what
//! was counted since the last one was written, by its request and any that overlapped it;
//! each count is written once, so the sums over time are exact. Without the recorder (the
//! command line, the benchmark, most tests) counting does nothing.
//!
//! Only names, units, counts and the values of the declared dimensions are written (the
//! recorder's properties are never set): nothing that a request carried, so no id, payer
//! or secret can reach a metric.

use std::borrow::Cow;
use std::future::Future;
use std::sync::OnceLock;

use metrics::Unit;
use metrics_cloudwatch_embedded::{Builder, Collector};

/// The target of the events that carry a metrics document; [`super::subscriber`] writes
/// them as they are, one JSON object per line, as CloudWatch reads them.
pub const TARGET: &str = "tally::metrics";

/// The CloudWatch namespace when `TALLY_METRICS_NAMESPACE` does not name one.
pub const DEFAULT_NAMESPACE: &str = "Tally";

static RECORDER: OnceLock<&'static Collector> = OnceLock::new();

/// Makes this process count and write its metrics, in `namespace`. A second call, or
/// another `metrics` recorder installed before, leaves the first in place.
pub fn install(namespace: &str) {
    if RECORDER.get().is_some() {
        return;
    }
    match Builder::new()
        .cloudwatch_namespace(namespace.to_owned())
        .init()
    {
        Ok(collector) => {
            for declared in ALL {
                metrics::describe_counter!(declared.name, declared.unit, "");
            }
            let _ = RECORDER.set(collector);
        }
        Err(error) => tracing::warn!(%error, "metrics are not written"),
    }
}

/// A metric without dimensions.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    pub name: &'static str,
    pub unit: Unit,
}

/// A metric split by one dimension (`Mode`: `fast` or `gapless`).
#[derive(Clone, Copy, Debug)]
pub struct Split {
    pub metric: Metric,
    pub dimension: &'static str,
}

impl Metric {
    pub const fn count(name: &'static str) -> Self {
        Self {
            name,
            unit: Unit::Count,
        }
    }

    pub const fn milliseconds(name: &'static str) -> Self {
        Self {
            name,
            unit: Unit::Milliseconds,
        }
    }

    pub const fn by(self, dimension: &'static str) -> Split {
        Split {
            metric: self,
            dimension,
        }
    }

    /// Adds `value` to this metric's count.
    pub fn add(&self, value: u64) {
        metrics::counter!(self.name).increment(value);
    }

    const fn declared(&self) -> Declared {
        Declared {
            name: self.name,
            unit: self.unit,
            dimension: None,
        }
    }
}

impl Split {
    /// Adds `value` to this metric's count for one value of the dimension.
    pub fn add(&self, dimension_value: impl Into<Cow<'static, str>>, value: u64) {
        let dimension_value: Cow<'static, str> = dimension_value.into();
        metrics::counter!(self.metric.name, self.dimension => dimension_value).increment(value);
    }

    const fn declared(&self) -> Declared {
        Declared {
            name: self.metric.name,
            unit: self.metric.unit,
            dimension: Some(self.dimension),
        }
    }
}

/// What the list declares of one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declared {
    pub name: &'static str,
    pub unit: Unit,
    pub dimension: Option<&'static str>,
}

/// Declares each metric as a constant, and [`ALL`] from the same lines.
macro_rules! metrics {
    ($($(#[$doc:meta])* $name:ident: $kind:ty = $value:expr;)*) => {
        $($(#[$doc])* pub const $name: $kind = $value;)*
        /// Every metric Tally writes.
        pub const ALL: &[Declared] = &[$($name.declared(),)*];
    };
}

metrics! {
    /// Tickets of the purchases a request committed (a replay commits none).
    TICKETS_SOLD: Metric = Metric::count("TicketsSold");
    /// Purchases a request committed.
    PURCHASES: Metric = Metric::count("Purchases");
    /// Orders given a number, by the series' mode (`fast`, `gapless`).
    ORDERS_NUMBERED: Split = Metric::count("OrdersNumbered").by("Mode");
    /// Answers `503`, by problem code (`contention`, `throttled`, `outcome_unknown`).
    SERVICE_UNAVAILABLE: Split = Metric::count("ServiceUnavailable").by("Code");
    /// Answers `500`, by problem code (`internal_error`): a bug, or a permission the
    /// function lacks.
    INTERNAL_ERRORS: Split = Metric::count("InternalErrors").by("Code");
    /// Import messages and orders dropped for good, by kind (`message`: not an order
    /// request; `order`: an order of a message, refused for a reason that cannot pass).
    IMPORT_REJECTED: Split = Metric::count("ImportRejected").by("Kind");
    /// Time a request spent waiting for another writer's lease on a gapless counter, or
    /// for its process's turn.
    GAPLESS_LEASE_WAIT: Metric = Metric::milliseconds("GaplessLeaseWait");
    /// Requests sent to DynamoDB, each retry of the SDK included.
    DYNAMODB_ATTEMPTS: Metric = Metric::count("DynamoDbAttempts");
}

/// Runs `work` (a request, a queue delivery), then writes what was counted since the last
/// write, if the recorder is installed.
pub async fn written_after<F: Future>(work: F) -> F::Output {
    let output = work.await;
    if let Some(collector) = RECORDER.get() {
        write(collector);
    }
    output
}

/// Each document as an event of [`TARGET`], so that it reaches the process's log writer.
fn write(collector: &Collector) {
    let mut documents = Vec::new();
    if let Err(error) = collector.flush(&mut documents) {
        tracing::warn!(%error, "metrics could not be written");
    }
    for document in String::from_utf8_lossy(&documents).lines() {
        tracing::info!(target: TARGET, emf = document);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_testkit::logs::Captured;

    #[test]
    fn each_metric_is_declared_once_with_a_cloudwatch_name() {
        let mut names: Vec<&str> = ALL.iter().map(|d| d.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for name in names {
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric()) && name.len() <= 255,
                "{name}"
            );
        }
    }

    #[test]
    fn the_operations_page_lists_every_metric_with_its_unit_and_dimension() {
        let page = include_str!("../../docs/operations.md");
        for declared in ALL {
            let row = format!("| `{}` | {:?} | ", declared.name, declared.unit);
            let line = page
                .lines()
                .find(|line| line.starts_with(&row))
                .unwrap_or_else(|| panic!("no row {row}"));
            let dimension = declared.dimension.map(|d| format!("`{d}`"));
            assert_eq!(
                line[row.len()..].starts_with('|'),
                dimension.is_none(),
                "{line}"
            );
            if let Some(dimension) = dimension {
                assert!(line[row.len()..].starts_with(&dimension), "{line}");
            }
        }
    }

    #[tokio::test]
    async fn without_the_recorder_counting_writes_nothing() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber =
            super::super::subscriber("info", super::super::LogFormat::Json, move || {
                writer.clone()
            });
        let _default = tracing::subscriber::set_default(subscriber);
        written_after(async {
            TICKETS_SOLD.add(2);
            ORDERS_NUMBERED.add("fast", 1);
        })
        .await;
        assert_eq!(captured.text(), "");
    }
}
