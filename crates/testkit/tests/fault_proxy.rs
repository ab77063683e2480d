//! The fault proxy itself, against DynamoDB Local: each fault does what the tests that
//! inject it rely on.

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

fn status<E>(err: &SdkError<E, HttpResponse>) -> u16 {
    err.raw_response()
        .expect("an answer came back")
        .status()
        .as_u16()
}

async fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn error_answers_are_shaped_like_dynamodb_ones() {
    let proxy = FaultProxy::start(&endpoint()).await;
    let raw = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let ask = || {
        let request = Request::post(proxy.endpoint())
            .header("x-amz-target", "DynamoDB_20120810.GetItem")
            .header(header::CONTENT_TYPE, "application/x-amz-json-1.0")
            .body(Full::new(Bytes::from_static(b"{}")))
            .unwrap();
        raw.request(request)
    };
    for (faults, status, error, message) in [
        (
            Faults {
                throttle: 1.0,
                ..Faults::default()
            },
            400,
            "ThrottlingException",
            "Rate of requests exceeds the allowed throughput.",
        ),
        (
            Faults {
                error_before: 1.0,
                ..Faults::default()
            },
            500,
            "InternalServerError",
            "Internal server error",
        ),
    ] {
        proxy.set(faults);
        let response = ask().await.expect("an answer");
        assert_eq!(response.status().as_u16(), status);
        let headers = response.headers();
        assert_eq!(
            headers[header::CONTENT_TYPE],
            "application/x-amz-json-1.0",
            "{error}"
        );
        let id = headers["x-amzn-requestid"].to_str().unwrap();
        assert_eq!(id.len(), 52, "{id}");
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        );
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "__type": format!("com.amazonaws.dynamodb.v20120810#{error}"),
                "message": message,
            })
        );
    }
    assert_eq!(
        proxy.counts(),
        Counts {
            throttled: 1,
            errors_before: 1,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn throttling_is_answered_without_forwarding_and_retried_by_the_sdk() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        throttle: 1.0,
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 3, PATIENT);

    let err = get(&client, direct.table(), "a").await.unwrap_err();
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), Some("ThrottlingException"));
    assert_eq!(status(&err), 400);
    assert_eq!(
        proxy.counts(),
        Counts {
            throttled: 3,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn an_error_before_forwarding_writes_nothing_and_spares_other_operations() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        error_before: 1.0,
        operations: Some(vec!["PutItem".into()]),
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 3, PATIENT);

    let err = put(&client, direct.table(), "a").await.unwrap_err();
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), Some("InternalServerError"));
    assert_eq!(status(&err), 500);
    assert!(!exists(&direct, "a").await);
    get(&client, direct.table(), "a")
        .await
        .expect("reads are not faulted");
    assert_eq!(
        proxy.counts(),
        Counts {
            errors_before: 3,
            forwarded: 1,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn an_error_after_forwarding_hides_a_committed_write() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        error_after: 1.0,
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 1, PATIENT);

    let err = put(&client, direct.table(), "a").await.unwrap_err();
    assert!(matches!(err, SdkError::ServiceError(_)), "{err:?}");
    assert_eq!(err.code(), Some("InternalServerError"));
    assert_eq!(status(&err), 500);
    assert!(exists(&direct, "a").await, "the write committed");
    assert_eq!(
        proxy.counts(),
        Counts {
            errors_after: 1,
            forwarded: 1,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn a_lost_answer_times_out_after_the_write_committed() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        lost_after: 1.0,
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 1, IMPATIENT);

    let started = Instant::now();
    let err = put(&client, direct.table(), "a").await.unwrap_err();
    assert!(matches!(err, SdkError::TimeoutError(_)), "{err:?}");
    assert!(started.elapsed() >= IMPATIENT);
    wait_until("the write is forwarded", || proxy.counts().forwarded == 1).await;
    assert!(exists(&direct, "a").await, "the write committed");
    assert_eq!(
        proxy.counts(),
        Counts {
            lost_after: 1,
            forwarded: 1,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn latency_delays_only_the_chosen_operations() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let delay = Duration::from_millis(250);
    proxy.set(Faults {
        latency: Some(delay..=delay),
        operations: Some(vec!["GetItem".into()]),
        ..Faults::default()
    });
    let client = client_via(&direct, &proxy, 1, PATIENT);

    put(&client, direct.table(), "a")
        .await
        .expect("a clean write");
    let started = Instant::now();
    let read = get(&client, direct.table(), "a")
        .await
        .expect("a slow read");
    assert!(started.elapsed() >= delay);
    assert!(read.item().is_some());
    assert_eq!(
        proxy.counts(),
        Counts {
            delayed: 1,
            forwarded: 2,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn a_frozen_proxy_holds_requests_until_thawed() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let impatient = client_via(&direct, &proxy, 1, IMPATIENT);
    let patient = client_via(&direct, &proxy, 1, PATIENT);

    proxy.freeze();
    let err = put(&impatient, direct.table(), "given-up")
        .await
        .unwrap_err();
    assert!(matches!(err, SdkError::TimeoutError(_)), "{err:?}");
    let table = direct.table().to_owned();
    let waiting = tokio::spawn(async move { put(&patient, &table, "waiting").await });
    wait_until("both requests are held", || proxy.counts().held == 2).await;
    assert!(!exists(&direct, "given-up").await, "held, not forwarded");

    proxy.thaw().await;
    assert!(exists(&direct, "given-up").await, "forwarded late");
    assert!(exists(&direct, "waiting").await);
    waiting
        .await
        .unwrap()
        .expect("the waiting client gets its answer");
    put(&impatient, direct.table(), "after")
        .await
        .expect("calls pass again");
    assert_eq!(
        proxy.counts(),
        Counts {
            held: 2,
            forwarded: 3,
            ..Counts::default()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_faults_concurrent_calls_all_pass() {
    const CALLS: u64 = 40;
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let client = client_via(&direct, &proxy, 1, PATIENT);

    let keys: Vec<String> = (0..CALLS).map(|i| format!("item-{i}")).collect();
    let writes = keys.iter().map(|key| put(&client, direct.table(), key));
    for result in futures::future::join_all(writes).await {
        result.expect("a clean write");
    }
    let reads = keys.iter().map(|key| get(&client, direct.table(), key));
    for result in futures::future::join_all(reads).await {
        assert!(result.expect("a clean read").item().is_some());
    }
    assert_eq!(
        proxy.counts(),
        Counts {
            forwarded: 2 * CALLS,
            ..Counts::default()
        }
    );
}

#[tokio::test]
async fn a_seed_replays_the_same_faults() {
    let direct = Direct::new().await;
    let mut runs = Vec::new();
    for _ in 0..2 {
        let proxy = FaultProxy::start_seeded(&endpoint(), 7).await;
        proxy.set(Faults {
            throttle: 0.5,
            ..Faults::default()
        });
        let client = client_via(&direct, &proxy, 1, PATIENT);
        let mut throttled = Vec::new();
        for _ in 0..16 {
            throttled.push(get(&client, direct.table(), "a").await.is_err());
        }
        runs.push(throttled);
    }
    assert_eq!(runs[0], runs[1]);
    assert!(runs[0].contains(&true) && runs[0].contains(&false));
}

#[tokio::test]
async fn a_dropped_proxy_closes_its_port_and_connections() {
    let direct = Direct::new().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let address = proxy.address();
    let client = client_via(&direct, &proxy, 1, PATIENT);

    proxy.freeze();
    let table = direct.table().to_owned();
    let waiting = tokio::spawn(async move { put(&client, &table, "a").await });
    wait_until("the request is held", || proxy.counts().held == 1).await;
    let started = Instant::now();
    drop(proxy);
    let err = waiting.await.unwrap().unwrap_err();
    assert!(started.elapsed() < PATIENT / 2, "{err:?}");
    assert!(matches!(err, SdkError::DispatchFailure(_)), "{err:?}");
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
    assert!(
        !exists(&direct, "a").await,
        "held requests die with the proxy"
    );
}
