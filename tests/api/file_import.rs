//! `tally import`: files of orders through the table and through a running API, run twice.

use std::path::PathBuf;

use axum::http::StatusCode;
use serde_json::json;
use tally::file_import::{Progress, Target, import, read_lines};
use tally::orders::OrderService;

use crate::helpers::{attr_s, of_kind, scan, spawn_app};

fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tally-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn a_json_lines_file_imports_once_and_reports_its_bad_lines() {
    let app = spawn_app().await;
    let request = axum::http::Request::put("/series/IMP")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            r#"{"format": "IMP-{seq:5}", "reset": "never"}"#,
        ))
        .unwrap();
    assert_eq!(
        crate::helpers::send(&app.router, request).await.status,
        StatusCode::CREATED
    );

    let mut text = String::new();
    for i in 0..250 {
        text.push_str(&format!(
            "{{\"external_ref\": \"line-{i}\", \"data\": {{\"n\": {i}}}}}\n"
        ));
    }
    text.push_str("{not json\n\n{\"external_ref\": \"bad ref\"}\n{\"external_ref\": \"line-7\", \"data\": {\"n\": 7}}\n");
    let path = write("orders.jsonl", &text);
    let lines = read_lines(&path).unwrap();
    assert_eq!(lines.len(), 253);

    let target = Target::Table(OrderService::new(app.store.clone()));
    let progress = Progress::default();
    let first = import(&target, "IMP", "erp-1", lines.clone(), 100, 3, &progress).await;
    assert_eq!(progress.done(), 253);
    assert_eq!((first.created, first.existing), (250, 1));
    let codes: Vec<(usize, &str)> = first
        .rejected
        .iter()
        .map(|r| (r.line, r.code.as_str()))
        .collect();
    assert_eq!(
        codes,
        [(251, "malformed_line"), (253, "invalid_external_ref")]
    );
    assert_eq!(first.rejected[1].input, "{\"external_ref\": \"bad ref\"}");

    // Running the same file again numbers nothing new.
    let again = import(&target, "IMP", "erp-1", lines, 100, 3, &Progress::default()).await;
    assert_eq!(
        (again.created, again.existing, again.rejected.len()),
        (0, 251, 2)
    );
    let items = scan(&app.store).await;
    let mut numbers: Vec<&str> = of_kind(&items, "order")
        .iter()
        .map(|o| attr_s(o, "order_number"))
        .collect();
    numbers.sort();
    numbers.dedup();
    assert_eq!(numbers.len(), 250);
}

#[tokio::test]
async fn a_csv_file_imports_through_a_running_api() {
    let app = spawn_app().await;
    let request = axum::http::Request::put("/series/CSV")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            r#"{"format": "C{yy}{seq:4}", "gapless": true}"#,
        ))
        .unwrap();
    assert_eq!(
        crate::helpers::send(&app.router, request).await.status,
        StatusCode::CREATED
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = crate::helpers::router(app.store.clone());
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let path = write(
        "orders.csv",
        "external_ref,customer,total\nPO-1,ACME,10.00\n\"PO-2\",\"Smith, J\",5\nPO-3,short\n",
    );
    let lines = read_lines(&path).unwrap();
    let summary = import(
        &Target::api(&base),
        "CSV",
        "shop",
        lines,
        2,
        1,
        &Progress::default(),
    )
    .await;
    server.abort();
    assert_eq!((summary.created, summary.existing), (2, 0));
    assert_eq!(summary.rejected.len(), 1);
    assert_eq!(summary.rejected[0].line, 4);
    let order = app.get("/sources/shop/orders/PO-2").await;
    assert_eq!(order.status, StatusCode::OK);
    assert_eq!(
        order.body["data"],
        json!({"customer": "Smith, J", "total": "5"})
    );
}
