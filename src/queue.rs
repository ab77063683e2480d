//! Order imports from an SQS queue: each message body is the JSON of `POST /orders` or
//! `POST /orders/batch`.
//!
//! Orders are idempotent by (source, external reference), so a redelivered message never
//! gets a second number. Only messages that failed for a reason that may pass are reported
//! back (throttling, contention, an unknown series that may yet be defined, a storage
//! error): SQS delivers them again and, after `maxReceiveCount` receipts, moves them to the
//! dead-letter queue. A malformed or invalid message can never succeed: it is logged with
//! its id and reason as rejected and deleted, so the dead-letter queue only ever holds
//! messages that need an operator.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use futures::StreamExt;
use tracing::{error, info, warn};

use crate::orders::requests::OrderRequest;
use crate::orders::{ItemOutcome, OrderError, OrderService};
use tally_domain::access::SourceAccess;

/// Messages of one delivery processed at once.
const CONCURRENT_MESSAGES: usize = 4;

/// Why a message was not fully processed.
#[derive(Debug)]
enum MessageError {
    /// It can never succeed: logged and dropped.
    Invalid(String),
    /// It may succeed later: reported for redelivery.
    Retryable(String),
}

/// Processes one delivery; returns the ids of the messages SQS should deliver again.
pub async fn handle_delivery(orders: &OrderService, event: SqsEvent) -> SqsBatchResponse {
    let results: Vec<(Option<String>, Result<(), MessageError>)> =
        futures::stream::iter(event.records)
            .map(|message| async move {
                let outcome = handle_message(orders, message.body.as_deref()).await;
                (message.message_id, outcome)
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
            }
            Err(MessageError::Retryable(reason)) => match message_id {
                Some(message_id) => {
                    warn!(message_id = %message_id, %reason, "message failed; SQS will retry it");
                    response.add_failure(message_id);
                }
                // Without an id it cannot be reported alone; failing the whole delivery
                // would redo every message, so it waits for the visibility timeout.
                None => error!(%reason, "message without id failed"),
            },
        }
    }
    response
}

async fn handle_message(orders: &OrderService, body: Option<&str>) -> Result<(), MessageError> {
    let body = body.ok_or_else(|| MessageError::Invalid("empty message body".into()))?;
    let request =
        OrderRequest::from_json(body).map_err(|e| MessageError::Invalid(e.to_string()))?;
    let outcomes = orders
        .create_orders(
            &request.series,
            &request.source,
            request.inputs,
            &SourceAccess::All,
        )
        .await
        .map_err(|e| match e {
            OrderError::Store(err) => MessageError::Retryable(err.to_string()),
            other => MessageError::Retryable(other.to_string()),
        })?;
    let mut created = 0;
    let mut existing = 0;
    let mut retryable = 0;
    for outcome in &outcomes {
        match outcome {
            ItemOutcome::Created(_) => created += 1,
            ItemOutcome::Existing(_) => existing += 1,
            ItemOutcome::Rejected(r) if r.code.is_retryable() => retryable += 1,
            ItemOutcome::Rejected(r) => {
                warn!(series = %request.series, source = %request.source, code = r.code.as_str(), detail = %r.detail, "order rejected");
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
