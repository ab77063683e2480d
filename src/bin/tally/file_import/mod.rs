//! `tally import`: orders from a file (JSON lines or CSV with a header), numbered in
//! batches through a running Tally API or straight against the table. Safe to run again
//! after an interruption: orders are idempotent by (source, external reference).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use csv::{Position, StringRecord};
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use tally::domain::access::SourceAccess;
use tally::orders::requests::OrderBatch;
use tally::orders::{ItemOutcome, OrderService, RejectionCode};
use tally::store::jittered_wait;

/// Attempts per batch when the service is unavailable or contended.
const BATCH_ATTEMPTS: u32 = 6;
/// Waits between attempts grow from this (doubled per attempt, drawn with full jitter so
/// that the concurrent batches that failed together do not come back together)...
const RETRY_BASE: Duration = Duration::from_millis(200);
/// ...up to this, so that a service that is down for a while has time to come back.
const RETRY_CAP: Duration = Duration::from_secs(5);

/// The code of a line whose batch never got an answer, after every attempt.
pub const NOT_SENT: &str = "not_sent";

/// One input line: the order item it holds, or why it holds none.
#[derive(Debug, Clone)]
pub struct ImportLine {
    pub line: usize,
    pub raw: String,
    /// The item's JSON text, kept as written so that numbers in `data` are never rounded.
    pub item: Result<String, String>,
}

/// Reads JSON lines (`{"external_ref": "...", "data": {...}}` per line) or, for a `.csv`
/// file, CSV whose header names `external_ref`; every other column goes into `data`.
pub fn read_lines(path: &Path) -> Result<Vec<ImportLine>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_lines(&text, Format::of(path))
}

/// How a file holds its orders, told by its extension.
#[derive(Debug, Clone, Copy)]
enum Format {
    JsonLines,
    Csv,
}

impl Format {
    fn of(path: &Path) -> Self {
        let is_csv = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
        if is_csv { Self::Csv } else { Self::JsonLines }
    }
}

fn parse_lines(text: &str, format: Format) -> Result<Vec<ImportLine>, String> {
    // Spreadsheets and Windows editors start UTF-8 files with a byte-order mark.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match format {
        Format::JsonLines => Ok(read_json_lines(text)),
        Format::Csv => read_csv(text),
    }
}

fn read_json_lines(text: &str) -> Vec<ImportLine> {
    text.lines()
        .enumerate()
        .filter(|(_, raw)| !raw.trim().is_empty())
        .map(|(i, raw)| ImportLine {
            line: i + 1,
            raw: raw.to_owned(),
            item: serde_json::from_str::<&RawValue>(raw)
                .map(|item| item.get().to_owned())
                .map_err(|e| format!("not JSON: {e}")),
        })
        .collect()
}

/// Each record keeps the text it was read from, sliced at the byte positions the reader
/// reports: one pass over the file, and a quoted field over several lines stays whole.
fn read_csv(text: &str) -> Result<Vec<ImportLine>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(|e| e.to_string())?.clone();
    let ref_column = external_ref_column(&header)?;
    let mut lines = Vec::new();
    let mut record = StringRecord::new();
    // Valid UTF-8 read flexibly can only fail on I/O, which a string does not do.
    while reader.read_record(&mut record).map_err(|e| e.to_string())? {
        let start = record.position().expect("a read record has a position");
        let (line, raw) = record_line_and_text(text, start, reader.position().byte());
        lines.push(ImportLine {
            line,
            raw: raw.to_owned(),
            item: csv_item(&header, ref_column, &record),
        });
    }
    Ok(lines)
}

/// The index of the `external_ref` column, once no column name is repeated: a repeated
/// name would silently overwrite the other's value in `data`.
fn external_ref_column(header: &StringRecord) -> Result<usize, String> {
    let mut seen = HashMap::new();
    for (index, name) in header.iter().enumerate() {
        if let Some(first) = seen.insert(name, index) {
            return Err(format!(
                "the CSV header names column {name:?} twice: columns {} and {}",
                first + 1,
                index + 1
            ));
        }
    }
    seen.get("external_ref")
        .copied()
        .ok_or_else(|| "the CSV header has no external_ref column".to_owned())
}

/// The line a record starts on and its text, from the positions the reader reported for
/// its start and its end. The start may still be on line ends before the record (the `\n`
/// of a `\r\n`, blank lines): the reader skips them only when it reads the record.
fn record_line_and_text<'a>(text: &'a str, start: &Position, end: u64) -> (usize, &'a str) {
    let span = text
        .get(start.byte() as usize..end as usize)
        .unwrap_or_default();
    let record = span.trim_start_matches(['\r', '\n']);
    let skipped_lines = span[..span.len() - record.len()].matches('\n').count();
    (
        start.line() as usize + skipped_lines,
        record.trim_end_matches(['\r', '\n']),
    )
}

fn csv_item(
    header: &StringRecord,
    ref_column: usize,
    record: &StringRecord,
) -> Result<String, String> {
    if record.len() != header.len() {
        return Err(format!(
            "expected {} fields, found {}",
            header.len(),
            record.len()
        ));
    }
    let data: Map<String, Value> = header
        .iter()
        .zip(record.iter())
        .enumerate()
        .filter(|(i, _)| *i != ref_column)
        .map(|(_, (name, value))| (name.to_owned(), Value::String(value.to_owned())))
        .collect();
    Ok(json!({"external_ref": &record[ref_column], "data": data}).to_string())
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

    /// Numbers one batch (the JSON text of `POST /orders/batch`); an `Err` is worth trying
    /// again.
    async fn send(&self, batch: &str) -> Result<Vec<ItemResult>, String> {
        match self {
            Self::Table(service) => {
                let batch: OrderBatch = serde_json::from_str(batch).map_err(|e| e.to_string())?;
                let request = batch.into_request().map_err(|e| e.to_string())?;
                let outcomes = service
                    .create_orders(
                        &request.series,
                        &request.source,
                        request.inputs,
                        &SourceAccess::All,
                    )
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(outcomes.into_iter().map(ItemResult::from).collect())
            }
            Self::Api { client, base } => {
                let request = axum::http::Request::post(format!("{base}/orders/batch"))
                    .header("content-type", "application/json")
                    .body(Full::new(Bytes::from(batch.to_owned())))
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

/// One order's answer, from the service or from the batch route's JSON (`status` says which
/// variant; the route's other fields are not needed here).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
enum ItemResult {
    Created,
    Existing,
    Rejected {
        code: AnswerCode,
        #[serde(default)]
        detail: String,
    },
}

impl ItemResult {
    /// Whether sending the order again may number it.
    fn is_retryable(&self) -> bool {
        matches!(self, Self::Rejected { code, .. } if code.is_retryable())
    }
}

impl From<ItemOutcome> for ItemResult {
    fn from(outcome: ItemOutcome) -> Self {
        match outcome {
            ItemOutcome::Created(_) => Self::Created,
            ItemOutcome::Existing(_) => Self::Existing,
            ItemOutcome::Rejected(r) => Self::Rejected {
                code: AnswerCode::Known(r.code),
                detail: r.detail,
            },
        }
    }
}

/// A rejection code: one this build knows, or one from a newer server, kept as its text.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
enum AnswerCode {
    Known(RejectionCode),
    Unknown(String),
}

impl AnswerCode {
    /// A code this build does not know is taken as final: retrying blindly could loop.
    fn is_retryable(&self) -> bool {
        matches!(self, Self::Known(code) if code.is_retryable())
    }
}

impl From<String> for AnswerCode {
    fn from(code: String) -> Self {
        match RejectionCode::parse(&code) {
            Some(known) => Self::Known(known),
            None => Self::Unknown(code),
        }
    }
}

impl std::fmt::Display for AnswerCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Known(code) => f.write_str(code.as_str()),
            Self::Unknown(code) => f.write_str(code),
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
    let batches: Vec<Vec<(usize, String, String)>> =
        valid.chunks(batch_size.max(1)).map(<[_]>::to_vec).collect();
    let results: Vec<Vec<LineResult>> = futures::stream::iter(batches)
        .map(|batch| send_batch(target, series, source, batch, progress))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    for (line, raw, result) in results.into_iter().flatten() {
        match result {
            Ok(ItemResult::Created) => summary.created += 1,
            Ok(ItemResult::Existing) => summary.existing += 1,
            Ok(ItemResult::Rejected { code, detail }) => summary.rejected.push(RejectedLine {
                line,
                code: code.to_string(),
                detail,
                input: raw,
            }),
            Err(detail) => summary.rejected.push(RejectedLine {
                line,
                code: NOT_SENT.into(),
                detail,
                input: raw,
            }),
        }
    }
    summary.rejected.sort_by_key(|r| r.line);
    summary
}

/// Sends one batch, again while the service is unavailable or some orders may still pass
/// (contention). An order created by an earlier attempt stays "created".
async fn send_batch(
    target: &Target,
    series: &str,
    source: &str,
    batch: Vec<(usize, String, String)>,
    progress: &Progress,
) -> Vec<LineResult> {
    // Built as text: each item goes out exactly as it was read.
    let items: Vec<&str> = batch.iter().map(|(_, _, item)| item.as_str()).collect();
    let body = format!(
        r#"{{"series":{},"source":{},"orders":[{}]}}"#,
        Value::from(series),
        Value::from(source),
        items.join(",")
    );
    let mut best: Vec<Option<ItemResult>> = vec![None; batch.len()];
    let mut last_error = String::new();
    for attempt in 0..BATCH_ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(retry_wait(attempt)).await;
        }
        match target.send(&body).await {
            Ok(results) if results.len() == batch.len() => {
                keep_newest_unless_created(&mut best, results);
                if !best.iter().flatten().any(ItemResult::is_retryable) {
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

/// How long to wait before attempt `attempt` (from 1) of a batch.
fn retry_wait(attempt: u32) -> Duration {
    jittered_wait(attempt, RETRY_BASE, RETRY_CAP)
}

/// A retry finds the orders its earlier attempt created as "existing": they stay "created".
fn keep_newest_unless_created(best: &mut [Option<ItemResult>], results: Vec<ItemResult>) {
    for (slot, result) in best.iter_mut().zip(results) {
        if *slot != Some(ItemResult::Created) {
            *slot = Some(result);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_and_raw(lines: &[ImportLine]) -> Vec<(usize, &str)> {
        lines.iter().map(|l| (l.line, l.raw.as_str())).collect()
    }

    fn item(line: &ImportLine) -> Value {
        serde_json::from_str(line.item.as_ref().expect("a valid item")).unwrap()
    }

    #[test]
    fn a_json_line_keeps_its_numbers_as_written() {
        let lines = parse_lines(
            "{\"external_ref\": \"PO-1\", \"data\": {\"n\": 123456789012345678901234567890}}\n",
            Format::JsonLines,
        )
        .unwrap();
        assert!(
            lines[0]
                .item
                .as_ref()
                .unwrap()
                .contains("123456789012345678901234567890")
        );
    }

    #[test]
    fn csv_records_keep_their_file_line_and_whole_text() {
        let text = "external_ref,customer,note\r\n\
                    PO-1,ACME,plain\r\n\
                    \"PO-2\",\"Smith, J\",\"two\nlines\"\r\n\
                    \r\n\
                    PO-3,short\r\n\
                    PO-4,Last,\"no newline at the end\"";
        let lines = parse_lines(text, Format::Csv).unwrap();
        assert_eq!(
            lines_and_raw(&lines),
            [
                (2, "PO-1,ACME,plain"),
                (3, "\"PO-2\",\"Smith, J\",\"two\nlines\""),
                (6, "PO-3,short"),
                (7, "PO-4,Last,\"no newline at the end\""),
            ]
        );
        assert_eq!(
            item(&lines[1]),
            json!({"external_ref": "PO-2", "data": {"customer": "Smith, J", "note": "two\nlines"}})
        );
        assert_eq!(lines[2].item, Err("expected 3 fields, found 2".to_owned()));
    }

    /// A CSV file of `total` lines where every thousandth order has a note over two lines,
    /// with the line and text each order must come back with.
    fn csv_with_two_line_notes(total: usize) -> (String, Vec<(usize, String)>) {
        let mut text = String::from("external_ref,note\n");
        let mut expected = Vec::new();
        let mut line = 2;
        while line <= total {
            let order = expected.len();
            let two_lines = order % 1000 == 999 && line < total;
            let raw = if two_lines {
                format!("PO-{order},\"first\nsecond\"")
            } else {
                format!("PO-{order},plain")
            };
            text.push_str(&raw);
            text.push('\n');
            expected.push((line, raw));
            line += if two_lines { 2 } else { 1 };
        }
        (text, expected)
    }

    #[test]
    fn a_csv_file_of_200000_lines_keeps_every_line_number_and_text() {
        let (text, expected) = csv_with_two_line_notes(200_000);
        let lines = parse_lines(&text, Format::Csv).unwrap();
        assert_eq!(lines.len(), expected.len());
        let middle = 99_999;
        assert!(
            expected[middle].1.contains('\n'),
            "the middle order spans two lines"
        );
        for index in [0, middle, expected.len() - 1] {
            let (line, raw) = &expected[index];
            assert_eq!(
                (lines[index].line, lines[index].raw.as_str()),
                (*line, raw.as_str())
            );
            assert!(lines[index].item.is_ok());
        }
        assert_eq!(lines.last().unwrap().line, 200_000);
    }

    #[test]
    fn a_repeated_csv_column_is_an_error_naming_it_and_both_positions() {
        let repeated = parse_lines(
            "external_ref,total,customer,total\nPO-1,1,A,2\n",
            Format::Csv,
        );
        assert_eq!(
            repeated.unwrap_err(),
            "the CSV header names column \"total\" twice: columns 2 and 4"
        );
        let two_refs = parse_lines(
            "external_ref,customer,external_ref\nPO-1,A,PO-2\n",
            Format::Csv,
        );
        assert_eq!(
            two_refs.unwrap_err(),
            "the CSV header names column \"external_ref\" twice: columns 1 and 3"
        );
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_line() {
        let json =
            parse_lines("\u{feff}{\"external_ref\": \"PO-1\"}\n", Format::JsonLines).unwrap();
        assert_eq!(item(&json[0]), json!({"external_ref": "PO-1"}));
        assert_eq!(json[0].raw, "{\"external_ref\": \"PO-1\"}");

        let csv = parse_lines("\u{feff}customer,external_ref\nACME,PO-1\n", Format::Csv).unwrap();
        assert_eq!(
            item(&csv[0]),
            json!({"external_ref": "PO-1", "data": {"customer": "ACME"}})
        );
        assert_eq!((csv[0].line, csv[0].raw.as_str()), (2, "ACME,PO-1"));
    }

    #[test]
    fn batch_route_answers_become_typed_results() {
        let answers: Vec<ItemResult> = serde_json::from_value(json!([
            {"index": 0, "external_ref": "a", "order_number": "N-2", "status": "created"},
            {"index": 1, "external_ref": "b", "order_number": "N-1", "status": "existing"},
            {"index": 2, "external_ref": "c", "status": "rejected", "code": "contention", "detail": "busy"},
            {"index": 3, "external_ref": "d", "status": "rejected", "code": "quota_exceeded", "detail": "over"},
        ]))
        .unwrap();
        assert_eq!(
            answers,
            [
                ItemResult::Created,
                ItemResult::Existing,
                ItemResult::Rejected {
                    code: AnswerCode::Known(RejectionCode::Contention),
                    detail: "busy".into()
                },
                ItemResult::Rejected {
                    code: AnswerCode::Unknown("quota_exceeded".into()),
                    detail: "over".into()
                },
            ]
        );
        let retryable: Vec<bool> = answers.iter().map(ItemResult::is_retryable).collect();
        assert_eq!(retryable, [false, false, true, false]);
    }

    #[test]
    fn retry_waits_are_jittered_and_capped() {
        for attempt in 1..BATCH_ATTEMPTS {
            let ceiling = (RETRY_BASE * 2u32.pow(attempt)).min(RETRY_CAP);
            let waits: Vec<Duration> = (0..100).map(|_| retry_wait(attempt)).collect();
            assert!(waits.iter().all(|w| *w <= ceiling), "attempt {attempt}");
            assert!(waits.iter().any(|w| *w != waits[0]), "attempt {attempt}");
        }
    }
}
