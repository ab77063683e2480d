//! Order imports from an SQS queue: each message body is the JSON of `POST /orders` or
//! `POST /orders/batch`.
//!
//! Orders are idempotent by (source, external reference), so a redelivered message never
//! gets a second number. Only messages that failed for a reason that may pass are reported
//! back (throttling, contention, an unknown series that may yet be defined, a storage
//! error, an order whose invoice has not landed yet or whose series has no room left until
//! an operator gives it some, a message the invocation had no time left for): SQS delivers
//! them again and, after `maxReceiveCount` receipts, moves them to the dead-letter queue.
//! A malformed or invalid message, or order, can never succeed: it is logged with its
//! message id, reference and reason as rejected, counted (`ImportRejected`) and deleted,
//! so the dead-letter queue only ever holds messages that need an operator.

use std::time::Duration;

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use futures::StreamExt;
use tokio::time::Instant;
use tracing::{error, info, warn};

use crate::api::problem::Problem;
use crate::orders::requests::OrderRequest;
use crate::orders::{ItemOutcome, OrderError, OrderService};
use crate::telemetry::metrics;
use tally_domain::access::SourceAccess;

/// Messages of one delivery processed at once.
const CONCURRENT_MESSAGES: usize = 4;
/// The end of an invocation kept for the answer (at most half the time left): a message
/// not finished by then is reported to be delivered again, rather than lost with the
/// whole answer when Lambda stops the function (SQS would then deliver every message of
/// the delivery again).
const ANSWER_MARGIN: Duration = Duration::from_secs(5);

/// Why a message was not fully processed.
#[derive(Debug)]
enum MessageError {
    /// It can never succeed: logged and dropped.
    Invalid(String),
    /// It may succeed later: reported for redelivery.
    Retryable(String),
}

/// Processes one delivery before `deadline` (the invocation's, when it has one); returns
/// the ids of the messages SQS should deliver again.
pub async fn handle_delivery(
    orders: &OrderService,
    event: SqsEvent,
    deadline: Option<Instant>,
) -> SqsBatchResponse {
    let cutoff = deadline.map(|deadline| {
        let margin = ANSWER_MARGIN.min(deadline.saturating_duration_since(Instant::now()) / 2);
        deadline.checked_sub(margin).unwrap_or(deadline)
    });
    let results: Vec<(Option<String>, Result<(), MessageError>)> =
        futures::stream::iter(event.records)
            .map(|message| async move {
                let id = message.message_id.as_deref().unwrap_or("<none>");
                let work = handle_message(orders, id, message.body.as_deref());
                let outcome = match cutoff {
                    None => work.await,
                    Some(cutoff) if Instant::now() >= cutoff => {
                        Err(MessageError::Retryable("no time left to start it".into()))
                    }
                    // Dropped at the cutoff, a message is like one whose answers were lost:
                    // its orders are idempotent, and its redelivery finishes them.
                    Some(cutoff) => tokio::time::timeout_at(cutoff, work)
                        .await
                        .unwrap_or_else(|_| Err(MessageError::Retryable("out of time".into()))),
                };
                (message.message_id.clone(), outcome)
            })
            .buffer_unordered(CONCURRENT_MESSAGES)
            .collect()
            .await;
    let mut response = SqsBatchResponse::default();
    for (message_id, outcome) in results {
        let id = message_id.as_deref().unwrap_or("<none>");
        match outcome {
            Ok(()) => {}
            Err(MessageError::Invalid(reason)) => {
                warn!(message_id = id, %reason, "message rejected; it will not be retried");
                metrics::IMPORT_REJECTED.add("message", 1);
            }
            Err(MessageError::Retryable(reason)) => match message_id {
                Some(message_id) => {
                    warn!(message_id = %message_id, %reason, "message failed; SQS will retry it");
                    response.add_failure(message_id);
                }
                // SQS gives every message an id; one without cannot be reported, and
                // Lambda deletes it with the delivery.
                None => error!(%reason, "message without id failed; it is lost"),
            },
        }
    }
    response
}

async fn handle_message(
    orders: &OrderService,
    message_id: &str,
    body: Option<&str>,
) -> Result<(), MessageError> {
    let body = body.ok_or_else(|| MessageError::Invalid("empty message body".into()))?;
    let request =
        OrderRequest::from_json(body).map_err(|e| MessageError::Invalid(e.to_string()))?;
    let refs: Vec<Option<String>> = request
        .inputs
        .iter()
        .map(|input| input.external_ref.clone())
        .collect();
    let outcomes = orders
        .create_orders(
            &request.series,
            &request.source,
            request.inputs,
            &SourceAccess::All,
        )
        .await
        .map_err(|e| match e {
            // Counted as the same error answered over HTTP would be: the 503 and 500
            // alarms see imports held back by throttling, an unavailable store or a bug.
            OrderError::Store(err) => {
                let reason = err.to_string();
                Problem::from(err).count_if_server_error();
                MessageError::Retryable(reason)
            }
            other => MessageError::Retryable(other.to_string()),
        })?;
    let mut created = 0;
    let mut existing = 0;
    let mut retryable = 0;
    for (outcome, external_ref) in outcomes.iter().zip(&refs) {
        let external_ref = external_ref.as_deref().unwrap_or("<none>");
        match outcome {
            ItemOutcome::Created(_) => created += 1,
            ItemOutcome::Existing(_) => existing += 1,
            ItemOutcome::Rejected(r) if r.code.may_pass_later() => {
                retryable += 1;
                if !r.code.is_retryable() {
                    warn!(message_id, series = %request.series, source = %request.source, external_ref, code = r.code.as_str(), detail = %r.detail, "order refused for now; the message will be delivered again");
                }
            }
            ItemOutcome::Rejected(r) => {
                warn!(message_id, series = %request.series, source = %request.source, external_ref, code = r.code.as_str(), detail = %r.detail, "order rejected; it will not be retried");
                metrics::IMPORT_REJECTED.add("order", 1);
            }
        }
    }
    info!(series = %request.series, source = %request.source, created, existing, "orders imported");
    if retryable > 0 {
        // The numbered orders stay; on redelivery they come back as existing.
        return Err(MessageError::Retryable(format!(
            "{retryable} orders may pass when posted again"
        )));
    }
    Ok(())
}
