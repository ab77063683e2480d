//! `tally import`: orders from a file (JSON lines or CSV with a header), numbered in
//! batches through a running Tally API or straight against the table. Safe to run again
//! after an interruption: orders are idempotent by (source, external reference).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::orders::requests::OrderBatch;
use crate::orders::{ItemOutcome, OrderService};

/// Attempts per batch when the service is unavailable or contended.
const BATCH_ATTEMPTS: u32 = 6;

/// One input line: the order item it holds, or why it holds none.
#[derive(Debug, Clone)]
pub struct ImportLine {
    pub line: usize,
    pub raw: String,
    pub item: Result<Value, String>,
}

/// Reads JSON lines (`{"external_ref": "...", "data": {...}}` per line) or, for a `.csv`
/// file, CSV whose header names `external_ref`; every other column goes into `data`.
pub fn read_lines(path: &Path) -> Result<Vec<ImportLine>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv {
        read_csv(&text)
    } else {
        Ok(text
            .lines()
            .enumerate()
            .filter(|(_, raw)| !raw.trim().is_empty())
            .map(|(i, raw)| ImportLine {
                line: i + 1,
                raw: raw.to_owned(),
                item: serde_json::from_str::<Value>(raw).map_err(|e| format!("not JSON: {e}")),
            })
            .collect())
    }
}

fn read_csv(text: &str) -> Result<Vec<ImportLine>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(|e| e.to_string())?.clone();
    let ref_column = header
        .iter()
        .position(|h| h == "external_ref")
        .ok_or("the CSV header has no external_ref column")?;
    let mut lines = Vec::new();
    for record in reader.records() {
        let (line, item) = match record {
            Ok(record) => {
                let line = record.position().map_or(0, |p| p.line() as usize);
                let mut data = Map::new();
                for (i, (name, value)) in header.iter().zip(record.iter()).enumerate() {
                    if i != ref_column {
                        data.insert(name.to_owned(), Value::String(value.to_owned()));
                    }
                }
                let item = match record.get(ref_column) {
                    Some(r) if record.len() == header.len() => {
                        Ok(json!({"external_ref": r, "data": data}))
                    }
                    _ => Err(format!(
                        "expected {} fields, found {}",
                        header.len(),
                        record.len()
                    )),
                };
                (line, item)
            }
            Err(e) => (
                e.position().map_or(0, |p| p.line() as usize),
                Err(e.to_string()),
            ),
        };
        let raw = text
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or("")
            .to_owned();
        lines.push(ImportLine { line, raw, item });
    }
    Ok(lines)
}

/// Where the orders go.
pub enum Target {
    /// Straight to the table, with this process's own service.
    Table(OrderService),
    /// A running Tally API (plain HTTP, such as `make run`).
    Api {
        client: Client<HttpConnector, Full<Bytes>>,
        base: String,
    },
}

impl Target {
    pub fn api(base: &str) -> Self {
        Self::Api {
            client: Client::builder(TokioExecutor::new()).build_http(),
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    /// Numbers one batch; an `Err` is worth trying again.
    async fn send(&self, batch: Value) -> Result<Vec<ItemResult>, String> {
        match self {
            Self::Table(service) => {
                let batch: OrderBatch = serde_json::from_value(batch).map_err(|e| e.to_string())?;
                let request = batch.into_request().map_err(|e| e.to_string())?;
                let outcomes = service
                    .create_orders(&request.series, &request.source, request.inputs)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(outcomes.into_iter().map(ItemResult::from).collect())
            }
            Self::Api { client, base } => {
                let request = axum::http::Request::post(format!("{base}/orders/batch"))
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(batch.to_string())))
                    .map_err(|e| e.to_string())?;
                let response = client.request(request).await.map_err(|e| e.to_string())?;
                let status = response.status();
                let body = response
                    .into_body()
                    .collect()
                    .await
                    .map_err(|e| e.to_string())?
                    .to_bytes();
                let body: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
                if !status.is_success() {
                    return Err(format!("{status}: {}", body["detail"]));
                }
                serde_json::from_value(body["results"].clone()).map_err(|e| e.to_string())
            }
        }
    }
}

/// One order's answer, as the batch route gives it.
#[derive(Debug, Clone, serde::Deserialize)]
struct ItemResult {
    status: String,
    code: Option<String>,
    detail: Option<String>,
}

impl From<ItemOutcome> for ItemResult {
    fn from(outcome: ItemOutcome) -> Self {
        let (status, rejection) = match outcome {
            ItemOutcome::Created(_) => ("created", None),
            ItemOutcome::Existing(_) => ("existing", None),
            ItemOutcome::Rejected(r) => ("rejected", Some(r)),
        };
        Self {
            status: status.to_owned(),
            code: rejection.as_ref().map(|r| r.code.as_str().to_owned()),
            detail: rejection.map(|r| r.detail),
        }
    }
}

/// An input line with its answer, or why it got none.
type LineResult = (usize, String, Result<ItemResult, String>);

/// A line that was not numbered, for the rejected-lines file.
#[derive(Debug, Clone, Serialize)]
pub struct RejectedLine {
    pub line: usize,
    pub code: String,
    pub detail: String,
    pub input: String,
}

#[derive(Debug, Default)]
pub struct Summary {
    pub created: u64,
    pub existing: u64,
    pub rejected: Vec<RejectedLine>,
}

/// Lines done so far, for a progress display.
#[derive(Debug, Default)]
pub struct Progress(AtomicU64);

impl Progress {
    pub fn done(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Imports `lines` in batches of `batch_size`, `concurrency` batches at a time.
pub async fn import(
    target: &Target,
    series: &str,
    source: &str,
    lines: Vec<ImportLine>,
    batch_size: usize,
    concurrency: usize,
    progress: &Progress,
) -> Summary {
    let mut summary = Summary::default();
    let mut valid = Vec::new();
    for line in lines {
        match line.item {
            Ok(item) => valid.push((line.line, line.raw, item)),
            Err(detail) => {
                progress.0.fetch_add(1, Ordering::Relaxed);
                summary.rejected.push(RejectedLine {
                    line: line.line,
                    code: "malformed_line".into(),
                    detail,
                    input: line.raw,
                });
            }
        }
    }
    let batches: Vec<Vec<(usize, String, Value)>> =
        valid.chunks(batch_size.max(1)).map(<[_]>::to_vec).collect();
    let results: Vec<Vec<LineResult>> = futures::stream::iter(batches)
        .map(|batch| send_batch(target, series, source, batch, progress))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    for (line, raw, result) in results.into_iter().flatten() {
        match result {
            Ok(r) if r.status == "created" => summary.created += 1,
            Ok(r) if r.status == "existing" => summary.existing += 1,
            Ok(r) => summary.rejected.push(RejectedLine {
                line,
                code: r.code.unwrap_or_default(),
                detail: r.detail.unwrap_or_default(),
                input: raw,
            }),
            Err(detail) => summary.rejected.push(RejectedLine {
                line,
                code: "not_sent".into(),
                detail,
                input: raw,
            }),
        }
    }
    summary.rejected.sort_by_key(|r| r.line);
    summary
}

/// Sends one batch, again while the service is unavailable or some orders lost to
/// contention. An order created by an earlier attempt stays "created".
async fn send_batch(
    target: &Target,
    series: &str,
    source: &str,
    batch: Vec<(usize, String, Value)>,
    progress: &Progress,
) -> Vec<LineResult> {
    let body = json!({
        "series": series,
        "source": source,
        "orders": batch.iter().map(|(_, _, item)| item.clone()).collect::<Vec<_>>(),
    });
    let mut best: Vec<Option<ItemResult>> = vec![None; batch.len()];
    let mut last_error = String::new();
    for attempt in 0..BATCH_ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
        }
        match target.send(body.clone()).await {
            Ok(results) if results.len() == batch.len() => {
                for (slot, result) in best.iter_mut().zip(results) {
                    if slot.as_ref().is_none_or(|s| s.status != "created") {
                        *slot = Some(result);
                    }
                }
                let contended = best.iter().any(|r| {
                    r.as_ref()
                        .is_some_and(|r| r.code.as_deref() == Some("contention"))
                });
                if !contended {
                    break;
                }
            }
            Ok(results) => {
                last_error = format!("{} answers for {} orders", results.len(), batch.len());
            }
            Err(e) => last_error = e,
        }
    }
    progress.0.fetch_add(batch.len() as u64, Ordering::Relaxed);
    batch
        .into_iter()
        .zip(best)
        .map(|((line, raw, _), result)| (line, raw, result.ok_or_else(|| last_error.clone())))
        .collect()
}
