//! What the tests that read log lines share beyond `tally_testkit`: a store on a table of
//! their own, with its stream, in the DynamoDB Local of `make test`. (Logging is state of
//! the whole process, so each such test runs in a process of its own.)

use tally::store::{AwsEnvironment, RequestCounter, Store, StoreConfig, Timeouts};
use tally_testkit::dynamodb::{TestTable, endpoint};

/// A store on a new table, with its stream; the table lives as long as its guard.
pub async fn fresh_store(counter: Option<RequestCounter>) -> (Store, TestTable) {
    let table = TestTable::reserve();
    let config = StoreConfig::new(
        table.name(),
        Some(endpoint()),
        Timeouts::default(),
        AwsEnvironment::default(),
    )
    .unwrap();
    let store = Store::connect(&config, counter).await;
    store.ensure_table().await.unwrap();
    (store, table)
}
