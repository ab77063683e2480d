//! One isolated world per test: its own table in DynamoDB Local, its own services.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Once};
use std::time::Duration;

use aws_sdk_dynamodb::types::AttributeValue;
use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tally::api::{self, AppState};
use tally::domain::ids::{DrawId, ExternalRef};
use tally::domain::order::{NewOrder, OrderData};
use tally::orders::{OrderInput, OrderService};
use tally::store::{AwsEnvironment, RequestCounter, Store, StoreConfig, Timeouts};
use tally::telemetry::{self, LogFormat};
use tower::ServiceExt;
use tracing_subscriber::fmt::TestWriter;

/// The table item as a map of attribute values.
pub type Item = HashMap<String, AttributeValue>;

pub struct TestApp {
    pub store: Store,
    pub router: Router,
    /// Deletes the table when the app drops.
    _table: TestTable,
}

/// A response: status, headers and the body as JSON (`Null` when empty).
pub struct Reply {
    pub status: StatusCode,
    pub content_type: String,
    pub headers: axum::http::HeaderMap,
    pub body: Value,
    /// The body as sent, for what JSON values would round.
    pub raw: String,
    /// The request's method and path (without its query).
    pub method: Method,
    pub path: String,
}

impl Reply {
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }
}

/// The URL of DynamoDB Local.
pub fn endpoint() -> String {
    std::env::var("DYNAMODB_ENDPOINT")
        .expect("DYNAMODB_ENDPOINT is not set: run the tests with `make test`")
}

/// Timeouts for tests that prove correctness, not speed: on a busy two-core machine
/// DynamoDB Local sometimes takes seconds for one transaction. The fault tests set their
/// own, tight ones.
pub const PATIENT: Timeouts = Timeouts {
    connect: Duration::from_secs(5),
    attempt: Duration::from_secs(30),
    operation: Duration::from_secs(60),
    max_attempts: 3,
};

/// A configuration for `table` on the test's DynamoDB Local. Every test with a table
/// comes here first, so this is where the logs are turned on when asked.
pub fn config(table: &str) -> StoreConfig {
    show_logs_when_asked();
    StoreConfig::new(table, Some(endpoint()), PATIENT, AwsEnvironment::default())
        .expect("a valid table name")
}

/// With `TALLY_TEST_LOGS=1`, Tally's log lines (at `RUST_LOG`, else `info`) go to the test
/// harness's captured output, which it shows for a failing test only.
fn show_logs_when_asked() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var("TALLY_TEST_LOGS").is_ok_and(|v| v == "1") {
            let directives = std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_owned());
            let subscriber =
                telemetry::subscriber(&directives, LogFormat::Text, TestWriter::default);
            // Another test binary's own subscriber may be there first: it wins.
            let _ = tracing::subscriber::set_global_default(subscriber);
        }
    });
}

/// The whole API on `store`, like one Lambda instance, with a request timeout that fits
/// the patient store.
pub fn router(store: Store) -> Router {
    instance(store).0
}

/// One Lambda instance: the API on `store`, as [`router`] builds it, and its order
/// service, whose spare numbers a test reads.
pub fn instance(store: Store) -> (Router, Arc<OrderService>) {
    let state = AppState {
        request_timeout: Duration::from_secs(120),
        drawing_timeout: Duration::from_secs(120),
        ..AppState::new(store)
    };
    let orders = state.orders.clone();
    (api::router(state), orders)
}

/// A table of one test's own: the guard holds its name and deletes the table when it
/// drops, at the end of the test whether it passed or failed, so that DynamoDB Local does
/// not carry every earlier test's items through the run. Every helper that makes a table
/// makes it under one of these.
pub struct TestTable {
    name: String,
}

impl TestTable {
    /// A name no other test uses; whoever first needs the table creates it.
    pub fn reserve() -> Self {
        Self {
            name: format!("tally-test-{}", DrawId::generate()),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestTable {
    /// Deletes the table on a runtime of its own: a drop cannot await, and the test's
    /// runtime may be a single thread that this blocks. A table never created is no error.
    fn drop(&mut self) {
        let config = config(&self.name);
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                let _ = Store::connect(&config, None).await.delete_table().await;
            });
        })
        .join();
    }
}

/// A store on a fresh table of its own, without a stream (see
/// [`Store::ensure_table_without_stream`]); the table lives as long as its guard.
pub async fn fresh_store(counter: Option<RequestCounter>) -> (Store, TestTable) {
    let table = TestTable::reserve();
    let store = store_on(table.name(), counter).await;
    store
        .ensure_table_without_stream()
        .await
        .expect("create the test table");
    (store, table)
}

/// Another client (another "Lambda instance") on the same table, with its own caches.
pub async fn store_on(table: &str, counter: Option<RequestCounter>) -> Store {
    Store::connect(&config(table), counter).await
}

impl TestApp {
    /// `router` on `store`, whose table `table` guards.
    pub fn new(router: Router, store: Store, table: TestTable) -> Self {
        Self {
            store,
            router,
            _table: table,
        }
    }
}

pub async fn spawn_app() -> TestApp {
    let (store, table) = fresh_store(None).await;
    TestApp::new(router(store.clone()), store, table)
}

/// As [`spawn_app`], on a table with the stream of `template.yaml`.
pub async fn spawn_app_with_stream() -> TestApp {
    let table = TestTable::reserve();
    let store = store_on(table.name(), None).await;
    store.ensure_table().await.expect("create the test table");
    TestApp::new(router(store.clone()), store, table)
}

pub async fn send(router: &Router, request: Request<Body>) -> Reply {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("the router never fails");
    let status = response.status();
    let headers = response.headers().clone();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| panic!("body is not JSON: {}", String::from_utf8_lossy(&bytes)))
    };
    Reply {
        status,
        content_type,
        headers,
        body,
        raw: String::from_utf8_lossy(&bytes).into_owned(),
        method,
        path,
    }
}

/// The reply is a problem document of `status` and `code`, and openapi.json lists `code`
/// among the answers of that status of the route it was sent to (a code a route answers
/// but does not declare fails here).
pub fn assert_problem(reply: &Reply, status: StatusCode, code: &str) {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_eq!(reply.code(), code, "{}", reply.body);
    assert_eq!(reply.content_type, "application/problem+json");
    assert_eq!(reply.body["status"], status.as_u16());
    assert!(reply.body["title"].is_string() && reply.body["detail"].is_string());
    static DOCUMENT: LazyLock<Value> =
        LazyLock::new(|| serde_json::from_str(include_str!("../../openapi.json")).unwrap());
    let segments: Vec<_> = reply.path.split('/').collect();
    let Some((route, item)) = DOCUMENT["paths"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(route, _)| {
            let parts: Vec<_> = route.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(part, segment)| part.starts_with('{') || part == segment)
        })
    else {
        // No such route, or (below) no such method: the router's own fallback answers.
        return;
    };
    let method = reply.method.as_str().to_ascii_lowercase();
    let Some(operation) = item.get(&method) else {
        return;
    };
    let mut response = &operation["responses"][status.as_str()];
    if let Some(shared) = response["$ref"].as_str() {
        let name = shared.rsplit('/').next().unwrap();
        response = &DOCUMENT["components"]["responses"][name];
    }
    let listed = &response["content"]["application/problem+json"]["schema"]["allOf"][1]["properties"]
        ["code"]["enum"];
    let documented = match listed.as_array() {
        Some(codes) => codes.iter().any(|c| c == code),
        None => response["description"]
            .as_str()
            .is_some_and(|d| d.contains(&format!("`{code}`"))),
    };
    assert!(
        documented,
        "{method} {route} answers {status} `{code}`, which openapi.json does not list"
    );
}

/// Posts until the answer is not a 503, as a well-behaved client (a payment webhook, an
/// ERP) does: a 503 means the outcome is unknown and the request safe to repeat. Every 503
/// must carry `Retry-After` and say why; no answer may be a 500.
pub async fn settle(router: &Router, path: &str, body: &str) -> Reply {
    settle_request(router, Method::POST, path, body).await
}

/// As [`settle`], for any method.
pub async fn settle_request(router: &Router, method: Method, path: &str, body: &str) -> Reply {
    for attempt in 0..200u64 {
        let request = Request::builder()
            .method(method.clone())
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap();
        let reply = send(router, request).await;
        assert!(
            reply.status != StatusCode::INTERNAL_SERVER_ERROR,
            "{path}: 500 {}",
            reply.body
        );
        if reply.status != StatusCode::SERVICE_UNAVAILABLE {
            return reply;
        }
        assert!(
            reply.headers.contains_key("retry-after"),
            "503 without Retry-After: {}",
            reply.body
        );
        assert!(
            ["outcome_unknown", "throttled", "contention"].contains(&reply.code()),
            "{}",
            reply.body
        );
        // Backing off as a client does: longer as the same request keeps failing.
        tokio::time::sleep(Duration::from_millis((20 + 5 * attempt).min(500))).await;
    }
    panic!("{path}: still 503 after 200 attempts");
}

pub async fn post_json(router: &Router, path: &str, body: &Value) -> Reply {
    post_raw(router, path, "application/json", body.to_string()).await
}

pub async fn post_raw(router: &Router, path: &str, content_type: &str, body: String) -> Reply {
    send_raw(router, Method::POST, path, content_type, body).await
}

/// A request whose body is sent as written (JSON that `Value` cannot hold, or no JSON).
pub async fn send_raw(
    router: &Router,
    method: Method,
    path: &str,
    content_type: &str,
    body: String,
) -> Reply {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .unwrap();
    send(router, request).await
}

pub async fn patch(router: &Router, path: &str, body: &Value) -> Reply {
    let request = Request::builder()
        .method(Method::PATCH)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    send(router, request).await
}

pub async fn put_json(router: &Router, path: &str, body: &Value) -> Reply {
    send_raw(
        router,
        Method::PUT,
        path,
        "application/json",
        body.to_string(),
    )
    .await
}

pub async fn get(router: &Router, path: &str) -> Reply {
    let request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .body(Body::empty())
        .unwrap();
    send(router, request).await
}

impl TestApp {
    pub async fn post(&self, path: &str, body: &Value) -> Reply {
        post_json(&self.router, path, body).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        get(&self.router, path).await
    }

    pub async fn put(&self, path: &str, body: &Value) -> Reply {
        put_json(&self.router, path, body).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Reply {
        patch(&self.router, path, body).await
    }

    /// Creates the draw `body` describes, and checks that it was created.
    pub async fn create_draw(&self, body: &Value) -> Reply {
        let created = self.post("/draws", body).await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        created
    }

    /// Defines the series `series_id` as `body` says, and checks that it was created.
    pub async fn define_series(&self, series_id: &str, body: &Value) -> Reply {
        let created = self.put(&format!("/series/{series_id}"), body).await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        created
    }

    /// Every item of the table, read back with strongly consistent scans.
    pub async fn scan(&self) -> Vec<Item> {
        scan(&self.store).await
    }
}

pub async fn scan(store: &Store) -> Vec<Item> {
    let mut items = Vec::new();
    let mut start: Option<Item> = None;
    loop {
        let output = store
            .client()
            .scan()
            .table_name(store.table())
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("scan the table");
        items.extend(output.items().iter().cloned());
        match output.last_evaluated_key() {
            Some(key) if !key.is_empty() => start = Some(key.clone()),
            _ => return items,
        }
    }
}

pub fn attr_s<'a>(item: &'a Item, name: &str) -> &'a str {
    match item.get(name) {
        Some(AttributeValue::S(s)) => s,
        other => panic!("{name} is not a string: {other:?}"),
    }
}

pub fn attr_n(item: &Item, name: &str) -> u64 {
    match item.get(name) {
        Some(AttributeValue::N(n)) => n.parse().unwrap(),
        other => panic!("{name} is not a number: {other:?}"),
    }
}

pub fn attr_numbers(item: &Item, name: &str) -> Vec<u64> {
    match item.get(name) {
        Some(AttributeValue::L(list)) => list
            .iter()
            .map(|v| match v {
                AttributeValue::N(n) => n.parse().unwrap(),
                other => panic!("not a number: {other:?}"),
            })
            .collect(),
        other => panic!("{name} is not a list: {other:?}"),
    }
}

/// Items of one kind (`draw`, `purchase`, `ticket`, ...).
pub fn of_kind<'a>(items: &'a [Item], kind: &str) -> Vec<&'a Item> {
    items
        .iter()
        .filter(|i| matches!(i.get("kind"), Some(AttributeValue::S(k)) if k == kind))
        .collect()
}

pub fn tickets_of(reply: &Reply) -> Vec<u64> {
    reply.body["tickets"]
        .as_array()
        .unwrap_or_else(|| panic!("no tickets in {}", reply.body))
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect()
}

/// An order of `reference` with no data, as a request carries it to the order service.
pub fn order_input(reference: &str) -> OrderInput {
    OrderInput {
        external_ref: Some(reference.to_owned()),
        order: Ok(NewOrder {
            external_ref: ExternalRef::parse(reference).unwrap(),
            data: OrderData::empty(),
            corrects: None,
        }),
    }
}
