//! `tally import`: files of orders through the table and through a running API, run twice.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::http::StatusCode;
use serde_json::{Value, json};
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

/// A stand-in for the batch route: answers with `answers` in turn (the last one again once
/// they run out) and counts the requests. Returns its base URL.
async fn scripted_api(
    answers: Vec<Value>,
) -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    let route = axum::routing::post(move || {
        let n = counted.fetch_add(1, Ordering::SeqCst);
        let answer = answers[n.min(answers.len() - 1)].clone();
        async move { Json(answer) }
    });
    let router = axum::Router::new().route("/orders/batch", route);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (base, requests, server)
}

#[tokio::test]
async fn a_batch_is_sent_again_only_while_one_of_its_orders_may_still_pass() {
    let rejected =
        |code: &str| json!({"status": "rejected", "code": code, "detail": format!("{code}!")});
    let (base, requests, server) = scripted_api(vec![
        json!({"results": [rejected("contention"), {"status": "created"}, rejected("quota_exceeded")]}),
        json!({"results": [{"status": "created"}, {"status": "existing"}, rejected("quota_exceeded")]}),
    ])
    .await;
    let path = write(
        "scripted.jsonl",
        "{\"external_ref\": \"a\"}\n{\"external_ref\": \"b\"}\n{\"external_ref\": \"c\"}\n",
    );
    let lines = read_lines(&path).unwrap();
    let progress = Progress::default();
    let summary = import(&Target::api(&base), "S", "src", lines, 3, 1, &progress).await;
    server.abort();

    // Contention is retried; a code from a newer server is not, and keeps its text. The
    // order created by the first attempt stays created when the second finds it existing.
    assert_eq!(requests.load(Ordering::SeqCst), 2);
    assert_eq!((summary.created, summary.existing), (2, 0));
    let rejected: Vec<(usize, &str, &str, &str)> = summary
        .rejected
        .iter()
        .map(|r| (r.line, r.code.as_str(), r.detail.as_str(), r.input.as_str()))
        .collect();
    assert_eq!(
        rejected,
        [(
            3,
            "quota_exceeded",
            "quota_exceeded!",
            "{\"external_ref\": \"c\"}"
        )]
    );
    assert_eq!(progress.done(), 3);
}

#[tokio::test]
async fn the_import_command_logs_plain_progress_when_stderr_is_not_a_terminal() {
    let app = spawn_app().await;
    let request = axum::http::Request::put("/series/CLI")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            r#"{"format": "CLI-{seq:4}", "reset": "never"}"#,
        ))
        .unwrap();
    assert_eq!(
        crate::helpers::send(&app.router, request).await.status,
        StatusCode::CREATED
    );
    let path = write(
        "command.csv",
        "external_ref,total\nPO-1,1\nPO-2,2\nbad ref,3\nPO-3,4\n",
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("import")
        .arg(&path)
        .args(["--series", "CLI", "--source", "cli", "--table"])
        .arg(app.store.table())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );

    assert_eq!(
        output.status.code(),
        Some(1),
        "a line was rejected: a finding"
    );
    assert!(
        stdout.contains("created 3, existing 0, rejected 1 in "),
        "{stdout}"
    );
    assert!(stderr.contains("4/4 orders  100%  "), "{stderr}");
    assert!(
        !stderr.contains(['\r', '\u{1b}']),
        "no terminal drawing in a log: {stderr:?}"
    );
    let rejected = std::fs::read_to_string(path.with_extension("csv.rejected.jsonl")).unwrap();
    let rejected: Value = serde_json::from_str(rejected.trim_end()).unwrap();
    assert_eq!(rejected["line"], 4);
    assert_eq!(rejected["code"], "invalid_external_ref");
    assert_eq!(rejected["input"], "bad ref,3");
    let fields: Vec<&String> = rejected.as_object().unwrap().keys().collect();
    assert_eq!(fields, ["code", "detail", "input", "line"]);
}
