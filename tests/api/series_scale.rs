//! Many series in one table: with no registry of every series to fill, more series than
//! the old 400 KB registry held (1,037 with 64-character formats) are defined, changed and
//! found; a format changed again for a period that has not started replaces the pending
//! one. Each issuer's item holds its own series only (S2): eight issuers, one a writer.

use axum::http::{Method, StatusCode};
use serde_json::json;
use tally_testkit::http::settle_request;

use crate::helpers::{spawn_app, store_on};

const SERIES: usize = 1_100;

/// A 64-character format of series `k`.
fn long_format(k: usize) -> String {
    let format = format!("S{k:04}-{}-{{yy}}{{seq:6}}", "X".repeat(46));
    assert_eq!(format.len(), 64);
    format
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn more_series_than_a_registry_item_held_are_defined_changed_and_found() {
    let app = spawn_app().await;
    let mut tasks = Vec::new();
    for worker in 0..8 {
        let router = crate::helpers::router(store_on(app.store.table(), None).await);
        tasks.push(tokio::spawn(async move {
            for k in (worker..SERIES).step_by(8) {
                let body = json!({"format": long_format(k), "reset": "yearly", "issuer": format!("company-{worker}")});
                // Every definition moves the journal's one head: a 503 of eight writers
                // racing for it is repeated, as clients do.
                let path = format!("/series/S{k}");
                let reply = settle_request(&router, Method::PUT, &path, &body.to_string()).await;
                assert_eq!(reply.status, StatusCode::CREATED, "S{k}: {}", reply.body);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let last = format!("S{}", SERIES - 1);
    let last_issuer = format!("company-{}", (SERIES - 1) % 8);
    // Twelve changes of next year's format leave one pending version, not twelve.
    let order = json!({"series": last, "source": "erp", "external_ref": "a"});
    let numbered = app.post("/orders", &order).await;
    assert_eq!(numbered.status, StatusCode::CREATED, "{}", numbered.body);
    for month in 1..=12 {
        let format = format!("N{month:02}-{{yy}}{{seq:6}}");
        let changed = app
            .patch(&format!("/series/{last}"), &json!({"format": format}))
            .await;
        assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    }
    let series = app.get(&format!("/series/{last}")).await.body;
    let formats = series["formats"].as_array().unwrap();
    assert_eq!(formats.len(), 2, "{series}");
    assert_eq!(formats[1]["format"], "N12-{yy}{seq:6}");
    // A number of the last series is found by its text alone.
    let text = numbered.body["order_number"].as_str().unwrap();
    let found = app.get(&format!("/orders/{text}")).await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    assert_eq!(found.body["series"], last.as_str());
    // One more series still fits, for an issuer that has 138 already.
    let one_more = app
        .put(
            "/series/ONE-MORE",
            &json!({"format": long_format(9_999), "reset": "yearly", "issuer": last_issuer}),
        )
        .await;
    assert_eq!(one_more.status, StatusCode::CREATED, "{}", one_more.body);
}
