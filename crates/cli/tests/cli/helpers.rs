//! The service a test of the command line talks to: a router on a table of the test's
//! own. What does not need the service comes from `tally_testkit`.

use std::time::Duration;

use axum::Router;
use tally::api::{self, AppState};
use tally::store::{AwsEnvironment, Store, StoreConfig, Timeouts};

pub use tally_testkit::dynamodb::{TestTable, attr_s, endpoint, of_kind};
pub use tally_testkit::http::send;

/// The API of a test on a table of its own, with the store it runs on.
pub type TestApp = tally_testkit::app::TestApp<Store>;

/// The whole API on `store`, as one Lambda instance serves it, with a request timeout
/// that fits a busy machine: these tests prove what the command does, not how fast.
pub fn router(store: Store) -> Router {
    api::router(AppState {
        request_timeout: Duration::from_secs(120),
        drawing_timeout: Duration::from_secs(120),
        ..AppState::new(store)
    })
}

pub async fn spawn_app() -> TestApp {
    let table = TestTable::reserve();
    // Patient: on a busy two-core machine DynamoDB Local sometimes takes seconds.
    let config = StoreConfig::new(
        table.name(),
        Some(endpoint()),
        Timeouts {
            attempt: Duration::from_secs(30),
            operation: Duration::from_secs(60),
            ..Timeouts::default()
        },
        AwsEnvironment::default(),
    )
    .expect("a valid table name");
    let store = Store::connect(&config, None).await;
    store
        .ensure_table_without_stream()
        .await
        .expect("create the test table");
    let client = store.client().clone();
    TestApp::new(router(store.clone()), store, client, table)
}

/// Every item of the store's table, read back with strongly consistent scans.
pub async fn scan(store: &Store) -> Vec<tally_testkit::dynamodb::Item> {
    tally_testkit::dynamodb::scan(store.client(), store.table()).await
}
