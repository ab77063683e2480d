//! One isolated world per test: its own table in DynamoDB Local, its own services. What
//! does not need the service (tables, requests, answers) comes from `tally_testkit`.

use std::sync::{Arc, Once};
use std::time::Duration;

use axum::Router;
use tally::api::{self, AppState};
use tally::orders::{OrderInput, OrderService};
use tally::store::{AwsEnvironment, RequestCounter, Store, StoreConfig, Timeouts};
use tally::telemetry::{self, LogFormat};
use tally_domain::ids::ExternalRef;
use tally_domain::order::{NewOrder, OrderData};
use tracing_subscriber::fmt::TestWriter;

pub use tally_testkit::dynamodb::{
    Item, TestTable, attr_n, attr_numbers, attr_s, endpoint, of_kind,
};
pub use tally_testkit::http::{
    Reply, assert_problem, get, patch, post_json, post_raw, put_json, send, send_raw, settle,
    settle_request,
};

/// The API of a test on a table of its own, with the store it runs on.
pub type TestApp = tally_testkit::app::TestApp<Store>;

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

/// `router` on `store`, whose table `table` guards.
pub fn test_app(router: Router, store: Store, table: TestTable) -> TestApp {
    let client = store.client().clone();
    TestApp::new(router, store, client, table)
}

pub async fn spawn_app() -> TestApp {
    let (store, table) = fresh_store(None).await;
    test_app(router(store.clone()), store, table)
}

/// As [`spawn_app`], on a table with the stream of `template.yaml`.
pub async fn spawn_app_with_stream() -> TestApp {
    let table = TestTable::reserve();
    let store = store_on(table.name(), None).await;
    store.ensure_table().await.expect("create the test table");
    test_app(router(store.clone()), store, table)
}

/// Every item of the store's table, read back with strongly consistent scans.
pub async fn scan(store: &Store) -> Vec<Item> {
    tally_testkit::dynamodb::scan(store.client(), store.table()).await
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
