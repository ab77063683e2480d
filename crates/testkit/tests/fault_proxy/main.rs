//! The fault proxy itself, against DynamoDB Local: each fault does what the tests that
//! inject it rely on.

mod answers;
mod control;

use std::time::Instant;

use aws_sdk_dynamodb::Client as Dynamo;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::config::retry::{RetryConfig, RetryPartition, TokenBucket};
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::get_item::{GetItemError, GetItemOutput};
use aws_sdk_dynamodb::operation::put_item::{PutItemError, PutItemOutput};
use aws_sdk_dynamodb::types::AttributeValue;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Bytes;
use hyper::header;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;
use tally_testkit::dynamodb::{TestTable, endpoint};
use tally_testkit::fault_proxy::{Counts, FaultProxy, Faults};

/// A table of the test's own, keyed by `pk`, and a client of it that goes around the proxy.
struct Direct {
    client: Dynamo,
    table: TestTable,
}

impl Direct {
    async fn new() -> Self {
        let (client, table) = TestTable::keyed_by_pk().await;
        Self { client, table }
    }

    fn table(&self) -> &str {
        self.table.name()
    }
}

const PATIENT: Duration = Duration::from_secs(30);
const IMPATIENT: Duration = Duration::from_millis(300);

/// A client of the test's table through the proxy, making up to `attempts` attempts of
/// at most `attempt_timeout` each. It has a retry quota of its own: the SDK shares one
/// per process otherwise, which the failures injected here would drain for other tests.
fn client_via(
    direct: &Direct,
    proxy: &FaultProxy,
    attempts: u32,
    attempt_timeout: Duration,
) -> Dynamo {
    let config = direct
        .client
        .config()
        .to_builder()
        .endpoint_url(proxy.endpoint())
        .retry_config(
            RetryConfig::standard()
                .with_max_attempts(attempts)
                .with_initial_backoff(Duration::from_millis(5)),
        )
        .retry_partition(
            RetryPartition::custom("fault-proxy")
                .token_bucket(TokenBucket::unlimited())
                .build(),
        )
        .timeout_config(
            TimeoutConfig::builder()
                .operation_attempt_timeout(attempt_timeout)
                .build(),
        )
        .build();
    Dynamo::from_conf(config)
}

async fn put(
    client: &Dynamo,
    table: &str,
    key: &str,
) -> Result<PutItemOutput, SdkError<PutItemError, HttpResponse>> {
    client
        .put_item()
        .table_name(table)
        .item("pk", AttributeValue::S(key.to_owned()))
        .send()
        .await
}

async fn get(
    client: &Dynamo,
    table: &str,
    key: &str,
) -> Result<GetItemOutput, SdkError<GetItemError, HttpResponse>> {
    client
        .get_item()
        .table_name(table)
        .key("pk", AttributeValue::S(key.to_owned()))
        .consistent_read(true)
        .send()
        .await
}

/// Whether the item is in the table, read around the proxy.
async fn exists(direct: &Direct, key: &str) -> bool {
    get(&direct.client, direct.table(), key)
        .await
        .expect("a clean read")
        .item()
        .is_some()
}

async fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
