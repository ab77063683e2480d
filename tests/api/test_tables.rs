//! The tests' own tables: every helper that makes one deletes it when its guard drops.

use crate::helpers::{TestTable, fresh_store, spawn_app, spawn_app_with_stream, store_on};

/// Whether DynamoDB Local has a table called `name`.
async fn exists(name: &str) -> bool {
    let store = store_on(name, None).await;
    match store
        .client()
        .describe_table()
        .table_name(name)
        .send()
        .await
    {
        Ok(_) => true,
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()) =>
        {
            false
        }
        Err(error) => panic!("describe {name}: {error:?}"),
    }
}

/// Checks that `guard` holds a table called `name` until it drops, and not after.
async fn gone_with<T>(name: String, guard: T) {
    assert!(exists(&name).await, "{name} was not created");
    drop(guard);
    assert!(!exists(&name).await, "{name} outlived its guard");
}

#[tokio::test]
async fn every_helpers_table_is_deleted_when_its_guard_drops() {
    let app = spawn_app().await;
    gone_with(app.store.table().to_owned(), app).await;

    let app = spawn_app_with_stream().await;
    gone_with(app.store.table().to_owned(), app).await;

    let (store, table) = fresh_store(None).await;
    gone_with(store.table().to_owned(), table).await;

    // A table a test makes itself, under a reserved name.
    let table = TestTable::reserve();
    let store = store_on(table.name(), None).await;
    store.ensure_table_without_stream().await.unwrap();
    gone_with(table.name().to_owned(), table).await;
}
