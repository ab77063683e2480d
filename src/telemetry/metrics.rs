//! Business metrics in CloudWatch's Embedded Metric Format: each request (or queue
//! delivery) adds to its own counts as it goes, and when it ends they are written as JSON
//! log lines that CloudWatch Logs turns into metrics. No API call, no extra permission:
//! the functions already write their logs.
//!
//! A metric is declared once, in the list below (one line), and counted where it happens:
//!
//! ```ignore
//! metrics::TICKETS_SOLD.add(3);
//! metrics::ORDERS_NUMBERED.add("gapless", 1);
//! ```
//!
//! Outside [`scope`] (the command line, the benchmark, most tests) counting does nothing.
//! Only names, units, counts and the values of the declared dimensions are written:
//! nothing that a request carried, so no id, payer or secret can reach a metric.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};

/// The target of the events that carry a metrics document; [`super::subscriber`] writes
/// them as they are, one JSON object per line, as CloudWatch reads them.
pub const TARGET: &str = "tally::metrics";

/// The CloudWatch namespace when `TALLY_METRICS_NAMESPACE` does not name one.
pub const DEFAULT_NAMESPACE: &str = "Tally";

static NAMESPACE: OnceLock<String> = OnceLock::new();

/// Whether [`scope`] counts and writes at all: on Lambda always, on the local server only
/// when asked (a line per request buries its log).
static WRITTEN: AtomicBool = AtomicBool::new(true);

/// Turns the documents of every later [`scope`] on or off.
pub fn set_written(on: bool) {
    WRITTEN.store(on, Ordering::Relaxed);
}

/// Sets the namespace of every document this process writes (once; later calls are
/// ignored).
pub fn set_namespace(namespace: String) {
    let _ = NAMESPACE.set(namespace);
}

fn namespace() -> &'static str {
    NAMESPACE.get().map_or(DEFAULT_NAMESPACE, String::as_str)
}

/// A CloudWatch unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    Count,
    Milliseconds,
}

impl Unit {
    fn as_str(self) -> &'static str {
        match self {
            Self::Count => "Count",
            Self::Milliseconds => "Milliseconds",
        }
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

    /// Adds `value` to this request's count.
    pub fn add(&self, value: u64) {
        record(None, *self, value);
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
    /// Adds `value` to this request's count for one value of the dimension.
    pub fn add(&self, dimension_value: &str, value: u64) {
        record(
            Some((self.dimension, dimension_value.to_owned())),
            self.metric,
            value,
        );
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
    /// Time a request spent waiting for another writer's lease on a gapless counter, or
    /// for its process's turn.
    GAPLESS_LEASE_WAIT: Metric = Metric::milliseconds("GaplessLeaseWait");
    /// Requests sent to DynamoDB, each retry of the SDK included.
    DYNAMODB_ATTEMPTS: Metric = Metric::count("DynamoDbAttempts");
}

/// The sums of one request, by dimension and metric.
type Sums = BTreeMap<Option<(&'static str, String)>, BTreeMap<&'static str, (Unit, u64)>>;

tokio::task_local! {
    static RECORDED: RefCell<Sums>;
}

fn record(dimension: Option<(&'static str, String)>, metric: Metric, value: u64) {
    // Outside a scope there is nothing to add to.
    let _ = RECORDED.try_with(|sums| {
        let mut sums = sums.borrow_mut();
        let entry = sums
            .entry(dimension)
            .or_default()
            .entry(metric.name)
            .or_insert((metric.unit, 0));
        entry.1 = entry.1.saturating_add(value);
    });
}

/// Runs `work` as one unit of metrics (a request, a queue delivery): what it counts is
/// written when it ends, one document per dimension value.
pub async fn scope<F: Future>(work: F) -> F::Output {
    if !WRITTEN.load(Ordering::Relaxed) {
        return work.await;
    }
    let (output, sums) = RECORDED
        .scope(RefCell::new(Sums::new()), async {
            let output = work.await;
            (output, RECORDED.with(|sums| sums.take()))
        })
        .await;
    for document in documents(namespace(), now_millis(), sums) {
        tracing::info!(target: TARGET, emf = document.as_str());
    }
    output
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One Embedded Metric Format document per dimension value (a document holds one value
/// of each dimension).
fn documents(namespace: &str, timestamp: u64, sums: Sums) -> Vec<String> {
    sums.into_iter()
        .map(|(dimension, metrics)| {
            let mut root = Map::new();
            let keys: Vec<&str> = match &dimension {
                Some((key, value)) => {
                    root.insert((*key).to_owned(), Value::from(value.as_str()));
                    vec![key]
                }
                None => Vec::new(),
            };
            let definitions: Vec<Value> = metrics
                .iter()
                .map(|(name, (unit, _))| json!({"Name": name, "Unit": unit.as_str()}))
                .collect();
            for (name, (_, value)) in &metrics {
                root.insert((*name).to_owned(), Value::from(*value));
            }
            root.insert(
                "_aws".to_owned(),
                json!({
                    "Timestamp": timestamp,
                    "CloudWatchMetrics": [{
                        "Namespace": namespace,
                        "Dimensions": [keys],
                        "Metrics": definitions,
                    }],
                }),
            );
            Value::Object(root).to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    async fn a_scope_sums_its_own_counts_and_nothing_is_kept_outside_one() {
        TICKETS_SOLD.add(100);
        let sums = RECORDED
            .scope(RefCell::new(Sums::new()), async {
                TICKETS_SOLD.add(2);
                TICKETS_SOLD.add(3);
                ORDERS_NUMBERED.add("fast", 4);
                ORDERS_NUMBERED.add("gapless", 1);
                RECORDED.with(|sums| sums.take())
            })
            .await;
        let documents = documents("Tally/test", 1_700_000_000_000, sums);
        let parsed: Vec<Value> = documents
            .iter()
            .map(|d| serde_json::from_str(d).unwrap())
            .collect();
        assert_eq!(parsed.len(), 3, "{documents:?}");
        let plain = &parsed[0];
        assert_eq!(plain["TicketsSold"], 5);
        let directive = &plain["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "Tally/test");
        assert_eq!(directive["Dimensions"], json!([[]]));
        assert_eq!(
            directive["Metrics"],
            json!([{"Name": "TicketsSold", "Unit": "Count"}])
        );
        assert_eq!(plain["_aws"]["Timestamp"], 1_700_000_000_000u64);
        assert_eq!(
            (&parsed[1]["Mode"], &parsed[1]["OrdersNumbered"]),
            (&json!("fast"), &json!(4))
        );
        assert_eq!(
            parsed[1]["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json!([["Mode"]])
        );
        assert_eq!(
            (&parsed[2]["Mode"], &parsed[2]["OrdersNumbered"]),
            (&json!("gapless"), &json!(1))
        );
    }
}
