//! Sending a batch of lines: to a running Tally API or straight to the table, again while
//! the service is unavailable or some orders may still pass, and split in halves when the
//! batch as a whole is refused for what its body holds, so that a bad line fails alone.

use std::time::Duration;

use axum::body::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Deserialize;
use serde_json::Value;

use tally::api::Code;
use tally::orders::requests::{OrderBatch, RequestError};
use tally::orders::{ItemOutcome, OrderError, OrderService, RejectionCode};
use tally::store::retry::RetryPolicy;
use tally_domain::access::SourceAccess;

/// Attempts per batch when the service is unavailable or contended. Waits between them
/// grow from 200 ms (doubled per attempt, drawn with full jitter so that the concurrent
/// batches that failed together do not come back together) up to 5 s, so that a service
/// that is down for a while has time to come back.
pub const BATCH_RETRIES: RetryPolicy =
    RetryPolicy::attempts(6).waiting(Duration::from_millis(200), Duration::from_secs(5));

/// How long one request to `--api` waits for its whole answer by default: API Gateway's
/// 30 s, within which every Tally request answers (its request timeout is shorter), and
/// 5 s for the way there and back. Past it the batch counts as unavailable: sent again.
pub const DEFAULT_ANSWER_TIMEOUT: Duration = Duration::from_secs(35);

/// The largest answer read from `--api`: more than the batch route ever answers (behind
/// Lambda an answer is at most 6 MB); a longer one counts as unavailable, unread.
const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// The codes with which the batch route refuses a whole body for what it holds: one of its
/// items may be at fault (too deep for the parser once inside the batch, say).
const BODY_CODES: [Code; 3] = [Code::MalformedJson, Code::InvalidBody, Code::BodyTooLarge];

/// Where the orders go.
pub enum Target {
    /// Straight to the table, with this process's own service.
    Table(OrderService),
    /// A running Tally API (plain HTTP, such as `make run`), and how long it may take to
    /// answer one request.
    Api {
        client: Client<HttpConnector, Full<Bytes>>,
        base: String,
        answer_timeout: Duration,
    },
}

/// Why a batch got no answer per order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchFailure {
    /// Refused for what its body holds: split, a line at fault fails alone with `code`.
    Body { code: String, detail: String },
    /// Refused for what all its lines share (the series, the source, the caller): none can
    /// pass.
    Request(String),
    /// No answer, or one that says to try again: sent again.
    Unavailable(String),
}

impl Target {
    pub fn api(base: &str, answer_timeout: Duration) -> Self {
        Self::Api {
            client: Client::builder(TokioExecutor::new()).build_http(),
            base: base.trim_end_matches('/').to_owned(),
            answer_timeout,
        }
    }

    /// Numbers one batch (the JSON text of `POST /orders/batch`).
    pub async fn send(&self, batch: &str) -> Result<Vec<ItemResult>, BatchFailure> {
        match self {
            Self::Table(service) => send_to_table(service, batch).await,
            Self::Api {
                client,
                base,
                answer_timeout,
            } => {
                let url = format!("{base}/orders/batch");
                tokio::time::timeout(*answer_timeout, send_to_api(client, &url, batch))
                    .await
                    .unwrap_or_else(|_| {
                        Err(BatchFailure::Unavailable(format!(
                            "{url}: no answer within {} ms",
                            answer_timeout.as_millis()
                        )))
                    })
            }
        }
    }
}

async fn send_to_table(
    service: &OrderService,
    batch: &str,
) -> Result<Vec<ItemResult>, BatchFailure> {
    let body = |code: &str, detail: String| BatchFailure::Body {
        code: code.to_owned(),
        detail,
    };
    let batch: OrderBatch =
        serde_json::from_str(batch).map_err(|e| body("malformed_json", e.to_string()))?;
    let request = batch.into_request().map_err(|e| match e {
        RequestError::Id(_) => BatchFailure::Request(e.to_string()),
        RequestError::BatchSize | RequestError::Order(_) | RequestError::Shape(_) => {
            body("invalid_body", e.to_string())
        }
    })?;
    let outcomes = service
        .create_request(request, &SourceAccess::All)
        .await
        .map_err(|e| match e {
            OrderError::Store(_) => BatchFailure::Unavailable(e.to_string()),
            other => BatchFailure::Request(other.to_string()),
        })?;
    Ok(outcomes.into_iter().map(ItemResult::from).collect())
}

async fn send_to_api(
    client: &Client<HttpConnector, Full<Bytes>>,
    url: &str,
    batch: &str,
) -> Result<Vec<ItemResult>, BatchFailure> {
    let unavailable = |why: String| BatchFailure::Unavailable(format!("{url}: {why}"));
    let request = axum::http::Request::post(url)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(batch.to_owned())))
        .map_err(|e| BatchFailure::Request(format!("{url}: {e}")))?;
    let response = client
        .request(request)
        .await
        .map_err(|e| unavailable(with_causes(&e)))?;
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
        .collect()
        .await
        .map_err(|e| match e.downcast::<LengthLimitError>() {
            Ok(_) => unavailable(format!(
                "{status}, and an answer longer than {MAX_ANSWER_BYTES} bytes"
            )),
            Err(e) => unavailable(with_causes(e.as_ref())),
        })?
        .to_bytes();
    let body: Value = serde_json::from_slice(&body)
        .map_err(|_| unavailable(format!("{status}, and an answer that is not JSON")))?;
    if status.is_success() {
        return serde_json::from_value(body["results"].clone())
            .map_err(|e| unavailable(format!("an answer without results: {e}")));
    }
    let code = body["code"].as_str().unwrap_or_default().to_owned();
    let detail = format!(
        "{url}: {status} {code}: {}",
        body["detail"].as_str().unwrap_or_default()
    );
    if status.is_server_error() || status.as_u16() == 408 || status.as_u16() == 429 {
        Err(BatchFailure::Unavailable(detail))
    } else if BODY_CODES.iter().any(|body| body.as_str() == code.as_str()) {
        Err(BatchFailure::Body { code, detail })
    } else {
        Err(BatchFailure::Request(detail))
    }
}

/// An error with its causes, which is where a client error says what went wrong
/// (`client error (Connect): tcp connect error: Connection refused`).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    text
}

/// One order's answer, from the service or from the batch route's JSON (`status` says which
/// variant; the route's other fields are not needed here).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ItemResult {
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
    pub fn is_retryable(&self) -> bool {
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
pub enum AnswerCode {
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

/// Sends `body` (a batch of `orders` items), again while the service is unavailable or
/// some orders may still pass (contention). An order created by an earlier attempt stays
/// "created". A refusal of the whole batch for what it holds, or for what its lines
/// share, is not sent again.
pub async fn send_with_retries(
    target: &Target,
    body: &str,
    orders: usize,
) -> Result<Vec<ItemResult>, BatchFailure> {
    let mut best: Vec<Option<ItemResult>> = vec![None; orders];
    let mut failure = BatchFailure::Unavailable("not sent".into());
    for attempt in BATCH_RETRIES.each() {
        if attempt > 1 {
            BATCH_RETRIES.pause(attempt - 1).await;
        }
        match target.send(body).await {
            Ok(results) if results.len() == orders => {
                keep_newest_unless_created(&mut best, results);
                if !best.iter().flatten().any(ItemResult::is_retryable) {
                    break;
                }
            }
            Ok(results) => {
                failure = BatchFailure::Unavailable(format!(
                    "{} answers for {orders} orders",
                    results.len()
                ));
            }
            Err(unavailable @ BatchFailure::Unavailable(_)) => failure = unavailable,
            Err(refused) => return Err(refused),
        }
    }
    best.into_iter().collect::<Option<Vec<_>>>().ok_or(failure)
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
    use serde_json::json;

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
}
