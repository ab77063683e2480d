//! The DynamoDB table: configuration, keys, item codecs and the conditional writes that
//! keep numbers unique.

pub mod allowances;
mod bundles;
mod codec;
pub mod draws;
mod error;
#[cfg(test)]
mod golden;
pub mod holds;
pub mod instant;
pub mod issuers;
pub mod journal;
mod keys;
pub mod kind;
pub mod limits;
pub mod lists;
mod metrics;
pub mod orders;
pub mod payers;
pub mod purchases;
pub mod retry;
pub mod stream;
pub mod stripes;
mod table;
mod transaction;
pub mod voids;
pub mod winners;

use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::client::Waiters;
use aws_sdk_dynamodb::config::retry::RetryPartition;
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, CreateGlobalSecondaryIndexAction, GlobalSecondaryIndex,
    GlobalSecondaryIndexUpdate, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType, StreamSpecification, StreamViewType,
};

pub use crate::aws::{AwsEnvironment, Timeouts};
pub use error::StoreError;
/// The period index's key attributes, for tools that write items of the same shape.
pub use keys::{COUNTER, PERIOD_KEY};
pub use metrics::{CallTimes, RequestCounter, RequestCounts, WriteMeter, item_units};
pub use table::Inserted;
pub(crate) use table::random_token;

use crate::aws;
use error::sdk_error;

/// The table's only key attribute.
pub(crate) const PARTITION_KEY: &str = "pk";

/// The table and the client that reaches it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    client: Client,
    table: String,
    meter: WriteMeter,
    /// The journal's head as this process saw it last.
    journal: journal::KnownHead,
    /// How long one DynamoDB call may take, the SDK's retries included.
    operation_timeout: Duration,
}

/// Where the table is and how long to wait for it.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    pub table_name: String,
    /// Set for DynamoDB Local; unset on AWS.
    pub endpoint: Option<String>,
    pub timeouts: Timeouts,
    /// What the environment gives the SDK, for a local endpoint's defaults.
    pub environment: AwsEnvironment,
}

impl StoreConfig {
    /// A table name is 3 to 255 characters (DynamoDB's rule).
    pub fn new(
        table_name: impl Into<String>,
        endpoint: Option<String>,
        timeouts: Timeouts,
        environment: AwsEnvironment,
    ) -> Result<Self, String> {
        let table_name = table_name.into();
        if !(3..=255).contains(&table_name.len()) {
            return Err(format!(
                "the table name must be 3 to 255 characters, got {table_name:?}"
            ));
        }
        Ok(Self {
            table_name,
            endpoint: endpoint.filter(|e| !e.is_empty()),
            timeouts,
            environment,
        })
    }

    /// Another table, reached as this one is.
    pub fn on_table(&self, table_name: impl Into<String>) -> Result<Self, String> {
        Self::new(
            table_name,
            self.endpoint.clone(),
            self.timeouts,
            self.environment,
        )
    }
}

impl Store {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
            meter: WriteMeter::default(),
            journal: journal::KnownHead::default(),
            operation_timeout: Timeouts::default().operation,
        }
    }

    /// Builds the SDK client once per process, with the configured timeouts and retries.
    pub async fn connect(config: &StoreConfig, counter: Option<RequestCounter>) -> Self {
        let shared = aws::sdk_config(
            config.endpoint.as_deref(),
            config.timeouts,
            config.environment,
        )
        .await;
        // The SDK's retry quota is per partition and process; one per table keeps clients
        // of different tables (the tests' throw-away tables) from draining each other's.
        let mut builder = aws_sdk_dynamodb::config::Builder::from(&shared)
            .retry_partition(RetryPartition::new(format!(
                "dynamodb-{}",
                config.table_name
            )))
            .interceptor(metrics::AttemptMetric);
        if let Some(counter) = counter {
            builder = builder.interceptor(counter);
        }
        Self {
            operation_timeout: config.timeouts.operation,
            ..Self::new(Client::from_conf(builder.build()), &config.table_name)
        }
    }

    /// How long one DynamoDB call may take, the SDK's retries included: after it, a write
    /// this process sent can no longer be waited for.
    pub fn operation_timeout(&self) -> Duration {
        self.operation_timeout
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

    /// Creates the table (on-demand, key `pk`, a stream of new and old images, the global
    /// secondary indexes of `template.yaml`) unless it exists, and waits until it is
    /// active. An existing table gets any other index it lacks, as long as it has the
    /// period index: one without it was made by a layout that is not migrated, and is
    /// refused first with [`StoreError::TableLayout`], which says to delete it. For local use and tests; on
    /// AWS the SAM template owns the table.
    pub async fn ensure_table(&self) -> Result<(), StoreError> {
        self.create_table(Some(StreamViewType::NewAndOldImages))
            .await
    }

    /// As [`Store::ensure_table`], without the stream, for tests and benchmarks that never
    /// read it: DynamoDB Local writes several times slower to a table with a stream (a
    /// 1,000-order batch: 1.5 to 3.2 s without, 7.6 to 8.8 s with), and slower still as
    /// the records pile up. On AWS a stream costs writes no time.
    pub async fn ensure_table_without_stream(&self) -> Result<(), StoreError> {
        self.create_table(None).await
    }

    async fn create_table(&self, stream: Option<StreamViewType>) -> Result<(), StoreError> {
        let mut create = self
            .client
            .create_table()
            .table_name(&self.table)
            .billing_mode(BillingMode::PayPerRequest)
            .set_stream_specification(stream.map(|view| {
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(view)
                    .build()
                    .expect("enabled is set")
            }))
            .key_schema(key_element(PARTITION_KEY, KeyType::Hash));
        for name in [
            PARTITION_KEY,
            keys::PAYER_PK,
            keys::PAYER_SK,
            keys::LIST_PK,
            keys::LIST_SK,
            keys::PERIOD_KEY,
            keys::COUNTER,
        ] {
            create = create.attribute_definitions(key_attribute(name));
        }
        for index in indexes() {
            create = create.global_secondary_indexes(index);
        }
        match create.send().await {
            Ok(_) => {}
            Err(err) if err.code() == Some("ResourceInUseException") => {
                self.wait_until_active().await?;
                self.add_missing_indexes().await?;
            }
            Err(err) => return Err(sdk_error("CreateTable", err)),
        }
        self.wait_until_active().await
    }

    async fn wait_until_active(&self) -> Result<(), StoreError> {
        self.client
            .wait_until_table_exists()
            .table_name(&self.table)
            .wait(Duration::from_secs(60))
            .await
            .map_err(|e| StoreError::Unavailable {
                operation: "DescribeTable",
                reason: format!("table {} did not become active: {e}", self.table),
            })?;
        self.check_period_index().await
    }

    /// A table made before the period index existed has numbers keyed by their text and
    /// cannot list a period: it is refused with a clear message, not used (nothing is
    /// migrated; nothing was deployed with that layout).
    async fn check_period_index(&self) -> Result<(), StoreError> {
        let described = self
            .client
            .describe_table()
            .table_name(&self.table)
            .send()
            .await
            .map_err(|e| sdk_error("DescribeTable", e))?;
        let has_index = described
            .table()
            .map(|t| t.global_secondary_indexes())
            .unwrap_or_default()
            .iter()
            .any(|index| index.index_name() == Some(keys::PERIOD_INDEX));
        if has_index {
            Ok(())
        } else {
            Err(StoreError::TableLayout(format!(
                "table {} has no {} index: it was made by an earlier version of Tally, whose layout is not migrated; delete it (locally: the .dynamodb/ folder) and start again",
                self.table,
                keys::PERIOD_INDEX
            )))
        }
    }

    /// A table made before an index existed gets it (one index per update, as DynamoDB
    /// requires).
    async fn add_missing_indexes(&self) -> Result<(), StoreError> {
        let described = self
            .client
            .describe_table()
            .table_name(&self.table)
            .send()
            .await
            .map_err(|e| sdk_error("DescribeTable", e))?;
        let existing: Vec<String> = described
            .table()
            .map(|t| {
                t.global_secondary_indexes()
                    .iter()
                    .filter_map(|i| i.index_name().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        for index in indexes() {
            if existing.iter().any(|name| name == index.index_name()) {
                continue;
            }
            let (pk, sk) = match index.key_schema() {
                [pk, sk] => (
                    pk.attribute_name().to_owned(),
                    sk.attribute_name().to_owned(),
                ),
                _ => unreachable!("every index has a partition and a sort key"),
            };
            let action = CreateGlobalSecondaryIndexAction::builder()
                .index_name(index.index_name())
                .set_key_schema(Some(index.key_schema().to_vec()))
                .set_projection(index.projection().cloned())
                .build()
                .map_err(error::build_error)?;
            self.client
                .update_table()
                .table_name(&self.table)
                .attribute_definitions(key_attribute(&pk))
                .attribute_definitions(key_attribute(&sk))
                .global_secondary_index_updates(
                    GlobalSecondaryIndexUpdate::builder().create(action).build(),
                )
                .send()
                .await
                .map_err(|e| sdk_error("UpdateTable", e))?;
            self.wait_until_active().await?;
        }
        Ok(())
    }
}

/// A key attribute's definition: the period index sorts by a number, every other key is
/// a string.
fn key_attribute(name: &str) -> AttributeDefinition {
    let kind = if name == keys::COUNTER {
        ScalarAttributeType::N
    } else {
        ScalarAttributeType::S
    };
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(kind)
        .build()
        .expect("name and type are set")
}

fn key_element(name: &str, key_type: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()
        .expect("name and key type are set")
}

/// The global secondary indexes, as in `template.yaml`. The payer and list indexes hold
/// keys only: a Query answers keys, and the items are then read by key, strongly
/// consistent. The period index holds whole number items, so that a listing, an export or
/// an audit reads a period in pages without one read per number.
fn indexes() -> Vec<GlobalSecondaryIndex> {
    [
        (
            keys::PAYER_INDEX,
            keys::PAYER_PK,
            keys::PAYER_SK,
            ProjectionType::KeysOnly,
        ),
        (
            keys::LIST_INDEX,
            keys::LIST_PK,
            keys::LIST_SK,
            ProjectionType::KeysOnly,
        ),
        (
            keys::PERIOD_INDEX,
            keys::PERIOD_KEY,
            keys::COUNTER,
            ProjectionType::All,
        ),
    ]
    .into_iter()
    .map(|(name, pk, sk, projection)| {
        GlobalSecondaryIndex::builder()
            .index_name(name)
            .key_schema(key_element(pk, KeyType::Hash))
            .key_schema(key_element(sk, KeyType::Range))
            .projection(Projection::builder().projection_type(projection).build())
            .build()
            .expect("name, keys and projection are set")
    })
    .collect()
}
