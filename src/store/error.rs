//! What can go wrong between Tally and DynamoDB, sorted by what the caller should do.

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;

use super::codec::Item;
use crate::aws::display_chain;

/// A DynamoDB failure that is not a business outcome.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// DynamoDB kept throttling after the SDK's retries.
    #[error("DynamoDB is throttling requests")]
    Throttled,
    /// DynamoDB failed (5xx), did not answer in time, could not be reached, or answered
    /// success in a body that could not be read, after the SDK's retries. A write may or
    /// may not have taken effect.
    #[error("DynamoDB {operation} did not complete: {reason}")]
    Unavailable {
        operation: &'static str,
        reason: String,
    },
    #[error("gave up after {attempts} attempts lost to concurrent writers")]
    Contention { attempts: u32 },
    /// DynamoDB refused a request that Tally should never send: a bug.
    #[error("DynamoDB {operation} failed: {message}")]
    Service {
        operation: &'static str,
        message: String,
    },
    #[error("item {key} is malformed: {reason}")]
    Corrupt { key: String, reason: String },
    #[error("invariant broken: {0}")]
    Invariant(String),
    /// The table is not laid out as this version needs (an index is missing): an
    /// operator's problem, not a bug.
    #[error("{0}")]
    TableLayout(String),
}

impl StoreError {
    /// Whether the client may simply try again later (maps to 503). Every Tally write is
    /// idempotent, so trying again is safe even when the first try took effect.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Throttled | Self::Unavailable { .. } | Self::Contention { .. } => true,
            Self::Service { .. }
            | Self::Corrupt { .. }
            | Self::Invariant(_)
            | Self::TableLayout(_) => false,
        }
    }
}

/// Error codes DynamoDB uses for throttling, in responses and in cancellation reasons
/// (where the throughput code has no `Exception`).
const THROTTLING_CODES: [&str; 5] = [
    "ProvisionedThroughputExceededException",
    "ProvisionedThroughputExceeded",
    "ThrottlingException",
    "RequestLimitExceeded",
    "ThrottlingError",
];

/// Error codes of failures that DynamoDB documents as transient: try again.
const TRANSIENT_CODES: [&str; 4] = [
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionInProgressException",
    "InternalFailure",
];

pub(crate) fn is_throttling_code(code: &str) -> bool {
    THROTTLING_CODES.contains(&code)
}

/// A single-item write whose error tells a failed condition apart.
pub(crate) trait ConditionalWrite:
    ProvideErrorMetadata + std::error::Error + 'static
{
    const OPERATION: &'static str;

    /// `Some` when the condition failed, with the item as it was when the write asked for
    /// it.
    fn condition_failed(&self) -> Option<Option<&Item>>;
}

macro_rules! conditional_write {
    ($($error:ty => $operation:literal),*) => {$(
        impl ConditionalWrite for $error {
            const OPERATION: &'static str = $operation;

            fn condition_failed(&self) -> Option<Option<&Item>> {
                match self {
                    Self::ConditionalCheckFailedException(failed) => Some(failed.item()),
                    _ => None,
                }
            }
        }
    )*};
}

conditional_write!(UpdateItemError => "UpdateItem", PutItemError => "PutItem");

/// The answer of a conditional single-item write: `Err` when its condition failed, with
/// the item as it was when the write asked for it; any other error is mapped.
pub(crate) fn conditional<T, E: ConditionalWrite>(
    result: Result<T, SdkError<E, HttpResponse>>,
) -> Result<Result<T, Option<Item>>, StoreError> {
    match result {
        Ok(output) => Ok(Ok(output)),
        Err(err) => match err.as_service_error().and_then(E::condition_failed) {
            Some(old) => Ok(Err(old.cloned())),
            None => Err(sdk_error(E::OPERATION, err)),
        },
    }
}

/// The result of an `UpdateItem` whose failed condition means that there is nothing left
/// to do: the change is made already (an earlier try whose answer was lost, or another
/// writer), or its item is gone.
pub(crate) fn done_unless_failed<T>(
    result: Result<T, SdkError<UpdateItemError, HttpResponse>>,
) -> Result<(), StoreError> {
    conditional(result).map(|_| ())
}

/// Maps an SDK error that the operation does not handle itself.
pub(crate) fn sdk_error<E>(operation: &'static str, err: SdkError<E, HttpResponse>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
{
    if err.code().is_some_and(is_throttling_code) {
        return StoreError::Throttled;
    }
    // A single-item write met a transaction holding its item: nothing was written.
    if err.code() == Some("TransactionConflictException") {
        return StoreError::Contention { attempts: 1 };
    }
    let transient = match &err {
        SdkError::DispatchFailure(_) | SdkError::TimeoutError(_) | SdkError::ResponseError(_) => {
            true
        }
        // A 2xx answer whose body could not be read is an error only to the client: the
        // request took effect, or may have.
        SdkError::ServiceError(service) => {
            let status = service.raw().status();
            err.code().is_some_and(|c| TRANSIENT_CODES.contains(&c))
                || status.is_server_error()
                || status.is_success()
        }
        _ => false,
    };
    // Display alone: the error's Debug holds the raw response, items and seeds included.
    let message = display_chain(&err);
    if transient {
        StoreError::Unavailable {
            operation,
            reason: message,
        }
    } else {
        StoreError::Service { operation, message }
    }
}

pub(crate) fn build_error(err: impl std::fmt::Display) -> StoreError {
    StoreError::Invariant(format!("request could not be built: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::error::ErrorMetadata;
    use aws_sdk_dynamodb::types::error::ResourceNotFoundException;
    use aws_smithy_types::body::SdkBody;

    /// An answer whose body holds a draw item's secrets.
    fn answer(status: u16) -> HttpResponse {
        let body =
            r#"{"Attributes": {"seed": {"S": "SEEDSEEDSEED"}, "perm_key": {"B": "PERMPERM"}"#;
        HttpResponse::new(status.try_into().unwrap(), SdkBody::from(body))
    }

    fn message(err: PutItemError, status: u16) -> String {
        sdk_error("PutItem", SdkError::service_error(err, answer(status))).to_string()
    }

    /// DynamoDB answers 2xx once a request took effect: such an answer whose body cannot
    /// be read leaves the outcome unknown (a 503 to repeat), never an internal error.
    #[test]
    fn an_unreadable_success_answer_leaves_the_outcome_unknown() {
        let read = |status| {
            let unparsed = PutItemError::unhandled("Error at offset 2: unexpected end of stream");
            sdk_error("PutItem", SdkError::service_error(unparsed, answer(status)))
        };
        assert!(matches!(read(200), StoreError::Unavailable { .. }));
        assert!(read(200).is_transient());
        // The same unreadable body with a 4xx status is a request refused.
        assert!(matches!(read(400), StoreError::Service { .. }));
    }

    #[test]
    fn a_message_names_the_error_and_never_holds_the_answer() {
        let unparsed = PutItemError::unhandled("Error at offset 80: unexpected end of stream");
        let invalid = PutItemError::generic(
            ErrorMetadata::builder()
                .code("ValidationException")
                .message("One or more parameter values were invalid")
                .build(),
        );
        let missing = PutItemError::ResourceNotFoundException(
            ResourceNotFoundException::builder()
                .message("Requested resource not found")
                .build(),
        );
        let lost = SdkError::<PutItemError, _>::response_error("body cut short", answer(200));
        let messages = [
            message(unparsed, 200),
            message(invalid, 400),
            message(missing, 400),
            sdk_error("PutItem", lost).to_string(),
        ];
        for shown in &messages {
            assert!(
                !shown.contains("SEED") && !shown.contains("PERM"),
                "{shown}"
            );
        }
        assert_eq!(
            messages,
            [
                "DynamoDB PutItem did not complete: service error: unhandled error: \
                 Error at offset 80: unexpected end of stream",
                "DynamoDB PutItem failed: service error: unhandled error (ValidationException): \
                 Error { code: \"ValidationException\", \
                 message: \"One or more parameter values were invalid\" }",
                "DynamoDB PutItem failed: service error: \
                 ResourceNotFoundException: Requested resource not found",
                "DynamoDB PutItem did not complete: response error: body cut short",
            ]
        );
    }
}
