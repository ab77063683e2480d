//! The DynamoDB table: configuration, keys, item codecs and the conditional writes that
//! keep numbers unique.

mod codec;
pub mod draws;
mod keys;
mod metrics;
pub mod orders;
pub mod purchases;

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, CancellationReason, KeySchemaElement,
    KeyType, ScalarAttributeType, TransactWriteItem,
};
use rand::RngExt;

pub use metrics::{RequestCounter, RequestCounts, WriteMeter};

/// The table's only key attribute.
pub(crate) const PARTITION_KEY: &str = "pk";

/// A DynamoDB failure that is not a business outcome.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("DynamoDB is throttling requests")]
    Throttled,
    #[error("DynamoDB could not be reached: {0}")]
    Unavailable(String),
    #[error("gave up after {attempts} attempts lost to concurrent writers")]
    Contention { attempts: u32 },
    #[error("DynamoDB {operation} failed: {message}")]
    Service {
        operation: &'static str,
        message: String,
    },
    #[error("item {key} is malformed: {reason}")]
    Corrupt { key: String, reason: String },
    #[error("invariant broken: {0}")]
    Invariant(String),
}

impl StoreError {
    /// Whether the client may simply try again later (maps to 503).
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Throttled | Self::Unavailable(_) | Self::Contention { .. }
        )
    }
}

const THROTTLING_CODES: [&str; 4] = [
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "ThrottlingError",
];

pub(crate) fn is_throttling_code(code: &str) -> bool {
    THROTTLING_CODES.contains(&code)
}

/// Maps an SDK error that the operation does not handle itself.
pub(crate) fn sdk_error<E, R>(operation: &'static str, err: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    if err.code().is_some_and(is_throttling_code) {
        return StoreError::Throttled;
    }
    match err {
        SdkError::DispatchFailure(_) | SdkError::TimeoutError(_) => {
            StoreError::Unavailable(DisplayErrorContext(&err).to_string())
        }
        other => StoreError::Service {
            operation,
            message: DisplayErrorContext(&other).to_string(),
        },
    }
}

pub(crate) fn build_error(err: impl std::fmt::Display) -> StoreError {
    StoreError::Invariant(format!("request could not be built: {err}"))
}

/// Waits before DynamoDB is tried again after a lost race or throttling.
pub(crate) async fn backoff(attempt: u32) {
    const BASE: Duration = Duration::from_millis(8);
    const CAP: Duration = Duration::from_millis(400);
    tokio::time::sleep(jittered_wait(attempt, BASE, CAP)).await;
}

/// Capped exponential backoff with full jitter: a random wait in
/// `0..=min(cap, base * 2^attempt)`, so that clients that failed together spread out.
pub(crate) fn jittered_wait(attempt: u32, base: Duration, cap: Duration) -> Duration {
    let ceiling = base.saturating_mul(1 << attempt.min(16)).min(cap);
    let millis = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(rand::rng().random_range(0..=millis))
}

/// How a transaction ended.
pub(crate) enum Transaction {
    Committed,
    Busy,
    Cancelled(Vec<CancellationReason>),
}

/// The table and the client that reaches it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    client: Client,
    table: String,
    meter: WriteMeter,
}

/// Where the table is, read from the environment.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub table_name: String,
    /// Set for DynamoDB Local; unset on AWS.
    pub endpoint: Option<String>,
}

impl StoreConfig {
    pub fn from_env() -> Result<Self, String> {
        let table_name = std::env::var("TABLE_NAME")
            .map_err(|_| "TABLE_NAME is not set: name the DynamoDB table".to_owned())?;
        if !(3..=255).contains(&table_name.len()) {
            return Err(format!(
                "TABLE_NAME must be 3 to 255 characters, got {table_name:?}"
            ));
        }
        let endpoint = std::env::var("DYNAMODB_ENDPOINT")
            .ok()
            .filter(|e| !e.is_empty());
        Ok(Self {
            table_name,
            endpoint,
        })
    }
}

impl Store {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
            meter: WriteMeter::default(),
        }
    }

    /// Builds the SDK client once per process. Against a local endpoint, fixed dummy
    /// credentials and a default region are used when the environment has none.
    pub async fn connect(config: &StoreConfig, counter: Option<RequestCounter>) -> Self {
        let mut loader = aws_config::from_env();
        if let Some(endpoint) = &config.endpoint {
            loader = loader.endpoint_url(endpoint);
            if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
                loader = loader.credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
                    "local",
                    "local",
                    None,
                    None,
                    "tally-local",
                ));
            }
            if std::env::var_os("AWS_REGION").is_none()
                && std::env::var_os("AWS_DEFAULT_REGION").is_none()
            {
                loader = loader.region(aws_config::Region::new("us-east-1"));
            }
        }
        let shared = loader.load().await;
        let mut builder = aws_sdk_dynamodb::config::Builder::from(&shared);
        if let Some(counter) = counter {
            builder = builder.interceptor(counter);
        }
        Self::new(Client::from_conf(builder.build()), &config.table_name)
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    /// Write capacity spent through this store and its clones.
    pub fn write_meter(&self) -> &WriteMeter {
        &self.meter
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Writes an item unless its key exists; `false` when it does.
    pub(crate) async fn put_new(
        &self,
        item: HashMap<String, AttributeValue>,
    ) -> Result<bool, StoreError> {
        self.meter.single_write();
        let result = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PARTITION_KEY)
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(err) if err.code() == Some("ConditionalCheckFailedException") => Ok(false),
            Err(err) => Err(sdk_error("PutItem", err)),
        }
    }

    /// Sends one `TransactWriteItems`; a cancellation comes back with its per-item reasons,
    /// in item order. `Busy` means a transaction with the same token is still in flight or
    /// the token was used for other items: nothing was written, try again.
    pub(crate) async fn transact(
        &self,
        items: Vec<TransactWriteItem>,
        token: Option<String>,
    ) -> Result<Transaction, StoreError> {
        self.meter.transaction(items.len());
        let result = self
            .client
            .transact_write_items()
            .set_transact_items(Some(items))
            .set_client_request_token(token)
            .send()
            .await;
        let err = match result {
            Ok(_) => return Ok(Transaction::Committed),
            Err(err) => err,
        };
        match err.as_service_error() {
            Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => Ok(
                Transaction::Cancelled(cancelled.cancellation_reasons().to_vec()),
            ),
            Some(TransactWriteItemsError::TransactionInProgressException(_))
            | Some(TransactWriteItemsError::IdempotentParameterMismatchException(_)) => {
                Ok(Transaction::Busy)
            }
            _ => Err(sdk_error("TransactWriteItems", err)),
        }
    }

    /// Drops the table: for throw-away tables of tests and benchmarks.
    pub async fn delete_table(&self) -> Result<(), StoreError> {
        self.client
            .delete_table()
            .table_name(&self.table)
            .send()
            .await
            .map_err(|e| sdk_error("DeleteTable", e))?;
        Ok(())
    }

    /// Creates the table (on-demand, key `pk`) unless it exists, and waits until it is
    /// active. For local use and tests; on AWS the SAM template owns the table.
    pub async fn ensure_table(&self) -> Result<(), StoreError> {
        let created = self
            .client
            .create_table()
            .table_name(&self.table)
            .billing_mode(BillingMode::PayPerRequest)
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(PARTITION_KEY)
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .expect("name and type are set"),
            )
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name(PARTITION_KEY)
                    .key_type(KeyType::Hash)
                    .build()
                    .expect("name and key type are set"),
            )
            .send()
            .await;
        match created {
            Ok(_) => {}
            Err(err) if err.code() == Some("ResourceInUseException") => {}
            Err(err) => return Err(sdk_error("CreateTable", err)),
        }
        for attempt in 0..60 {
            let described = self
                .client
                .describe_table()
                .table_name(&self.table)
                .send()
                .await
                .map_err(|e| sdk_error("DescribeTable", e))?;
            let active = described
                .table()
                .and_then(|t| t.table_status())
                .is_some_and(|s| s.as_str() == "ACTIVE");
            if active {
                return Ok(());
            }
            backoff(attempt.min(4)).await;
        }
        Err(StoreError::Unavailable(format!(
            "table {} did not become active",
            self.table
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jittered_waits_vary_and_stay_under_their_capped_ceiling() {
        let (base, cap) = (Duration::from_millis(200), Duration::from_secs(5));
        for attempt in 0..20 {
            let ceiling = (base * 2u32.pow(attempt.min(16))).min(cap);
            let waits: Vec<Duration> = (0..200)
                .map(|_| jittered_wait(attempt, base, cap))
                .collect();
            assert!(waits.iter().all(|w| *w <= ceiling), "attempt {attempt}");
            // 200 draws from 0..=ceiling: equal ones all along would mean no jitter.
            assert!(waits.iter().any(|w| *w != waits[0]), "attempt {attempt}");
        }
    }
}
