//! One isolated world per test: a router on a table of the test's own, with the store the
//! test built it on (the service's, which this crate does not know), and the requests a
//! test sends it.

use aws_sdk_dynamodb::Client;
use axum::Router;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::dynamodb::{Item, TestTable, scan};
use crate::http::{Reply, get, patch, post_json, put_json};

/// The API of a test on its own table; the table is deleted when the app drops.
#[derive(Debug)]
pub struct TestApp<S> {
    pub store: S,
    pub router: Router,
    /// A client of the table, to read it back.
    client: Client,
    table: TestTable,
}

impl<S> TestApp<S> {
    /// `router` on `store`, on the table `table` guards, read back through `client`.
    pub fn new(router: Router, store: S, client: Client, table: TestTable) -> Self {
        Self {
            store,
            router,
            client,
            table,
        }
    }

    /// The table's name.
    pub fn table(&self) -> &str {
        self.table.name()
    }

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

    /// Posts orders `from..to` of source `src-<series>` into `series` in one batch, each
    /// with its index as data; returns their numbers.
    pub async fn post_range(&self, series: &str, from: usize, to: usize) -> Vec<String> {
        let orders: Vec<Value> = (from..to)
            .map(|i| json!({"external_ref": format!("r{i}"), "data": {"i": i}}))
            .collect();
        let reply = self
            .post(
                "/orders/batch",
                &json!({"series": series, "source": format!("src-{series}"), "orders": orders}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        reply.body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["order_number"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Every item of the table, read back with strongly consistent scans.
    pub async fn scan(&self) -> Vec<Item> {
        scan(&self.client, self.table.name()).await
    }
}
