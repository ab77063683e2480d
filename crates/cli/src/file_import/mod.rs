//! `tally import`: orders from a file (JSON lines or CSV with a header), numbered in
//! batches through a running Tally API or straight against the table. Safe to run again
//! after an interruption: orders are idempotent by (source, external reference).
//!
//! `read` reads the file a bounded record at a time; `send` sends a batch and splits it
//! when it is refused as a whole; here the lines become batches and the answers a summary.

mod read;
mod send;

use std::sync::atomic::{AtomicU64, Ordering};

use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;

use tally::api::MAX_ORDER_BODY_BYTES;

use read::kept_of_rejected;
pub use read::{ImportLine, read_lines};
use send::{BatchFailure, ItemResult, send_with_retries};
pub use send::{DEFAULT_ANSWER_TIMEOUT, Target};

/// The code of a line whose batch never got an answer, after every attempt.
pub const NOT_SENT: &str = "not_sent";

/// An input line with its answer, or why it got none.
type LineResult = (usize, String, Result<ItemResult, String>);

/// A line to send: its number, its text and its order item.
type Line = (usize, String, String);

/// A line that was not numbered, for the rejected-lines file.
#[derive(Debug, Clone, Serialize)]
pub struct RejectedLine {
    pub line: usize,
    pub code: String,
    pub detail: String,
    /// At most [`read::KEPT_OF_REJECTED_LINE`] bytes of the line's text.
    pub input: String,
}

impl RejectedLine {
    fn new(line: usize, code: String, detail: String, raw: &str) -> Self {
        Self {
            line,
            code,
            detail,
            input: kept_of_rejected(raw),
        }
    }
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

/// Imports `lines` in batches of `batch_size` (fewer when their body would pass the order
/// routes' limit), `concurrency` batches at a time.
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
            Err(unreadable) => {
                progress.0.fetch_add(1, Ordering::Relaxed);
                summary.rejected.push(RejectedLine::new(
                    line.line,
                    unreadable.code().into(),
                    unreadable.detail(),
                    &line.raw,
                ));
            }
        }
    }
    let envelope = Envelope::new(series, source);
    let batches = envelope.batches(valid, batch_size.max(1));
    let results: Vec<Vec<LineResult>> = futures::stream::iter(batches)
        .map(|batch| send_batch(target, &envelope, batch, progress))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    for (line, raw, result) in results.into_iter().flatten() {
        match result {
            Ok(ItemResult::Created) => summary.created += 1,
            Ok(ItemResult::Existing) => summary.existing += 1,
            Ok(ItemResult::Rejected { code, detail }) => {
                summary
                    .rejected
                    .push(RejectedLine::new(line, code.to_string(), detail, &raw))
            }
            Err(detail) => {
                summary
                    .rejected
                    .push(RejectedLine::new(line, NOT_SENT.into(), detail, &raw))
            }
        }
    }
    summary.rejected.sort_by_key(|r| r.line);
    summary
}

/// What every batch body of an import holds around its items.
struct Envelope {
    head: String,
}

impl Envelope {
    fn new(series: &str, source: &str) -> Self {
        Self {
            head: format!(
                r#"{{"series":{},"source":{},"orders":["#,
                Value::from(series),
                Value::from(source)
            ),
        }
    }

    /// The body of the batch of `lines`, built as text: each item goes out exactly as it
    /// was read.
    fn body(&self, lines: &[Line]) -> String {
        let items: Vec<&str> = lines.iter().map(|(_, _, item)| item.as_str()).collect();
        format!("{}{}]}}", self.head, items.join(","))
    }

    /// `lines` in batches of at most `size` lines whose bodies stay within the order
    /// routes' body limit, in file order.
    fn batches(&self, lines: Vec<Line>, size: usize) -> Vec<Vec<Line>> {
        let mut batches = Vec::new();
        let mut batch: Vec<Line> = Vec::new();
        let mut bytes = self.head.len() + 2;
        for line in lines {
            let more = line.2.len() + 1;
            if !batch.is_empty() && (batch.len() == size || bytes + more > MAX_ORDER_BODY_BYTES) {
                batches.push(std::mem::take(&mut batch));
                bytes = self.head.len() + 2;
            }
            bytes += more;
            batch.push(line);
        }
        if !batch.is_empty() {
            batches.push(batch);
        }
        batches
    }
}

/// Sends one batch; a batch refused as a whole for what its body holds is split in halves
/// until the line at fault is alone, and fails alone.
async fn send_batch(
    target: &Target,
    envelope: &Envelope,
    batch: Vec<Line>,
    progress: &Progress,
) -> Vec<LineResult> {
    let mut results = Vec::with_capacity(batch.len());
    // Parts still to send, the next one last: the file's order is kept.
    let mut parts = vec![batch];
    while let Some(part) = parts.pop() {
        let answer = send_with_retries(target, &envelope.body(&part), part.len()).await;
        let done = part.len() as u64;
        match answer {
            Ok(answers) => results.extend(
                part.into_iter()
                    .zip(answers)
                    .map(|((line, raw, _), answer)| (line, raw, Ok(answer))),
            ),
            Err(BatchFailure::Body { .. }) if part.len() > 1 => {
                let mut first = part;
                let second = first.split_off(first.len() / 2);
                parts.extend([second, first]);
                continue;
            }
            Err(BatchFailure::Body { code, detail }) => {
                let (line, raw, _) = part.into_iter().next().expect("a part of one line");
                let rejected = ItemResult::Rejected {
                    code: code.into(),
                    detail,
                };
                results.push((line, raw, Ok(rejected)));
            }
            Err(BatchFailure::Request(detail) | BatchFailure::Unavailable(detail)) => results
                .extend(
                    part.into_iter()
                        .map(|(line, raw, _)| (line, raw, Err(detail.clone()))),
                ),
        }
        progress.0.fetch_add(done, Ordering::Relaxed);
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(count: usize, item_bytes: usize) -> Vec<Line> {
        (1..=count)
            .map(|n| (n, String::new(), "x".repeat(item_bytes)))
            .collect()
    }

    #[test]
    fn a_batch_holds_its_size_in_lines_or_what_fits_the_body_limit() {
        let envelope = Envelope::new("S", "erp");
        let small: Vec<usize> = envelope
            .batches(lines(250, 100), 100)
            .iter()
            .map(Vec::len)
            .collect();
        assert_eq!(small, [100, 100, 50]);
        let large = envelope.batches(lines(250, read::MAX_LINE_BYTES), 100);
        assert!(large[0].len() < 100, "{}", large[0].len());
        for batch in &large {
            assert!(envelope.body(batch).len() <= MAX_ORDER_BODY_BYTES);
        }
        let in_order: Vec<usize> = large.iter().flatten().map(|(n, _, _)| *n).collect();
        assert_eq!(in_order, (1..=250).collect::<Vec<_>>());
    }
}
