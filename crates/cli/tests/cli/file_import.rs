//! `tally import`: files of orders through the table and through a running API, run twice.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::helpers::{attr_s, of_kind, scan, spawn_app};

/// Runs `tally import FILE --series SERIES --source SOURCE` with `more` arguments, off the
/// test's runtime (a server it spawned keeps answering); its status, stdout and stderr.
pub async fn tally_import(file: &Path, series: &str, source: &str, more: &[&str]) -> Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tally"));
    command
        .arg("import")
        .arg(file)
        .args(["--series", series, "--source", source])
        .args(more);
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

/// The lines `tally import` wrote next to `file`, as JSON.
fn rejected_lines(file: &Path) -> Vec<Value> {
    let mut name = file.as_os_str().to_owned();
    name.push(".rejected.jsonl");
    std::fs::read_to_string(name)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

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
    let table = [
        "--table",
        app.store.table(),
        "--batch",
        "100",
        "--concurrency",
        "3",
    ];

    let first = tally_import(&path, "IMP", "erp-1", &table).await;
    assert_eq!(
        first.status.code(),
        Some(1),
        "two lines rejected: a finding"
    );
    assert!(
        stdout(&first).starts_with("created 250, existing 1, rejected 2 in "),
        "{}",
        stdout(&first)
    );
    let rejected = rejected_lines(&path);
    let codes: Vec<(&Value, &Value)> = rejected.iter().map(|r| (&r["line"], &r["code"])).collect();
    assert_eq!(
        codes,
        [
            (&json!(251), &json!("malformed_line")),
            (&json!(253), &json!("invalid_external_ref"))
        ]
    );
    assert_eq!(rejected[1]["input"], "{\"external_ref\": \"bad ref\"}");

    // Running the same file again numbers nothing new.
    let again = tally_import(&path, "IMP", "erp-1", &table).await;
    assert!(
        stdout(&again).starts_with("created 0, existing 251, rejected 2 in "),
        "{}",
        stdout(&again)
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
    let (base, server) = serve_api(&app).await;

    let path = write(
        "orders.csv",
        "external_ref,customer,total\nPO-1,ACME,10.00\n\"PO-2\",\"Smith, J\",5\nPO-3,short\n",
    );
    let summary = tally_import(
        &path,
        "CSV",
        "shop",
        &["--api", &base, "--batch", "2", "--concurrency", "1"],
    )
    .await;
    server.abort();
    assert!(
        stdout(&summary).starts_with("created 2, existing 0, rejected 1 in "),
        "{}",
        stdout(&summary)
    );
    assert_eq!(rejected_lines(&path)[0]["line"], 4);
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
    let summary = tally_import(
        &path,
        "S",
        "src",
        &["--api", &base, "--batch", "3", "--concurrency", "1"],
    )
    .await;
    server.abort();

    // Contention is retried; a code from a newer server is not, and keeps its text. The
    // order created by the first attempt stays created when the second finds it existing.
    assert_eq!(requests.load(Ordering::SeqCst), 2);
    assert!(
        stdout(&summary).starts_with("created 2, existing 0, rejected 1 in "),
        "{}",
        stdout(&summary)
    );
    assert_eq!(
        rejected_lines(&path),
        [json!({
            "line": 3,
            "code": "quota_exceeded",
            "detail": "quota_exceeded!",
            "input": "{\"external_ref\": \"c\"}"
        })]
    );
    let stderr = String::from_utf8_lossy(&summary.stderr);
    assert!(stderr.contains("3/3 orders  100%  "), "{stderr}");
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
    let output = tally_import(&path, "CLI", "cli", &["--table", app.store.table()]).await;
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
    let rejected = &rejected_lines(&path)[0];
    assert_eq!(rejected["line"], 4);
    assert_eq!(rejected["code"], "invalid_external_ref");
    assert_eq!(rejected["input"], "bad ref,3");
    let fields: Vec<&String> = rejected.as_object().unwrap().keys().collect();
    assert_eq!(fields, ["code", "detail", "input", "line"]);
}

/// A router over the app's table served on a free loopback port; its base URL.
async fn serve_api(app: &crate::helpers::TestApp) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = crate::helpers::router(app.store.clone());
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (base, server)
}

#[tokio::test]
async fn a_line_too_long_fails_alone_and_the_rest_of_its_batch_is_numbered() {
    let app = spawn_app().await;
    app.define_series("BIG", &json!({"format": "B{seq:4}", "reset": "never"}))
        .await;
    let (base, server) = serve_api(&app).await;
    // Line 2 alone is larger than any body the API takes: sent with its batch, it would
    // have the whole batch refused.
    let long = format!(
        r#"{{"external_ref": "long", "data": {{"k": "{}"}}}}"#,
        "x".repeat(7 * 1024 * 1024)
    );
    let text = format!("{{\"external_ref\": \"a\"}}\n{long}\n{{\"external_ref\": \"b\"}}\n");
    let path = write("long.jsonl", &text);
    let output = tally_import(
        &path,
        "BIG",
        "erp",
        &["--api", &base, "--batch", "10", "--concurrency", "1"],
    )
    .await;
    server.abort();
    assert!(
        stdout(&output).starts_with("created 2, existing 0, rejected 1 in "),
        "{}{}",
        stdout(&output),
        String::from_utf8_lossy(&output.stderr)
    );
    let rejected = rejected_lines(&path);
    assert_eq!(
        (&rejected[0]["line"], &rejected[0]["code"]),
        (&json!(2), &json!("line_too_long"))
    );
    let kept = rejected[0]["input"].as_str().unwrap();
    assert!(
        kept.starts_with(r#"{"external_ref": "long""#) && kept.len() < 300,
        "{kept}"
    );
    for reference in ["a", "b"] {
        let found = app.get(&format!("/sources/erp/orders/{reference}")).await;
        assert_eq!(found.status, StatusCode::OK, "{reference}");
    }
}

/// A batch route that refuses a whole body holding the reference `poison`
/// (`400 invalid_body`) or larger than `limit` bytes (`413 body_too_large`), and numbers
/// any other; its base URL, and the sizes of the batches it numbered.
async fn refusing_api(
    limit: usize,
) -> (
    String,
    Arc<std::sync::Mutex<Vec<usize>>>,
    tokio::task::JoinHandle<()>,
) {
    let numbered = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = numbered.clone();
    let route = axum::routing::post(move |body: String| {
        let seen = seen.clone();
        async move {
            let problem = |status: StatusCode, code: &str| {
                (
                    status,
                    Json(json!({"status": status.as_u16(), "code": code, "detail": code})),
                )
            };
            if body.len() > limit {
                return problem(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large");
            }
            let batch: Value = serde_json::from_str(&body).unwrap();
            let orders = batch["orders"].as_array().unwrap();
            if orders.iter().any(|o| o["external_ref"] == "poison") {
                return problem(StatusCode::BAD_REQUEST, "invalid_body");
            }
            seen.lock().unwrap().push(orders.len());
            let results: Vec<Value> = orders
                .iter()
                .map(|_| json!({"status": "created"}))
                .collect();
            (StatusCode::OK, Json(json!({"results": results})))
        }
    });
    let router = axum::Router::new().route("/orders/batch", route);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (base, numbered, server)
}

#[tokio::test]
async fn a_batch_refused_for_its_body_is_split_until_the_bad_line_fails_alone() {
    let mut text = String::new();
    for n in 1..=9 {
        let reference = if n == 6 {
            "poison".to_owned()
        } else {
            format!("r{n}")
        };
        text.push_str(&format!("{{\"external_ref\": \"{reference}\"}}\n"));
    }
    let path = write("poison.jsonl", &text);
    let (base, numbered, server) = refusing_api(usize::MAX).await;
    let output = tally_import(&path, "S", "erp", &["--api", &base, "--batch", "9"]).await;
    server.abort();
    assert!(
        stdout(&output).starts_with("created 8, existing 0, rejected 1 in "),
        "{}",
        stdout(&output)
    );
    let rejected = rejected_lines(&path);
    assert_eq!(
        (&rejected[0]["line"], &rejected[0]["code"]),
        (&json!(6), &json!("invalid_body"))
    );
    assert_eq!(numbered.lock().unwrap().iter().sum::<usize>(), 8);

    // A server that takes smaller bodies than the batch: halves until they fit.
    let path = write("small-bodies.jsonl", &text.replace("poison", "r6"));
    let (base, numbered, server) = refusing_api(150).await;
    let output = tally_import(&path, "S", "erp", &["--api", &base, "--batch", "9"]).await;
    server.abort();
    assert!(
        stdout(&output).starts_with("created 9, existing 0, rejected 0 in "),
        "{}",
        stdout(&output)
    );
    assert!(numbered.lock().unwrap().iter().all(|&size| size < 9));
}

#[tokio::test]
async fn an_import_through_an_api_that_does_not_answer_names_that_api() {
    // A port that was free a moment ago: nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let path = write("unanswered.jsonl", "{\"external_ref\": \"a\"}\n");
    let output = tally_import(&path, "S", "erp", &["--api", &base]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("the Tally API at {base}")),
        "{stderr}"
    );
    assert!(stderr.contains("Connection refused"), "{stderr}");
    assert!(
        !stderr.contains("DynamoDB") && !stderr.contains(":8000"),
        "{stderr}"
    );
}

/// `depth` levels of arrays around `leaf`.
fn arrays(depth: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", "[".repeat(depth), "]".repeat(depth))
}

/// `depth` levels of objects around `leaf`.
fn objects(depth: usize, leaf: &str) -> String {
    format!("{}{leaf}{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

/// Import files with a JSON line nested past any limit, long lines and cells, and stray
/// bytes: each bad line is rejected alone, and the good ones are numbered.
#[tokio::test]
async fn nested_long_and_malformed_import_lines_are_rejected_alone() {
    let app = spawn_app().await;
    app.define_series(
        "FZ",
        &json!({"format": "FZ{seq:4}", "reset": "never", "gapless": false}),
    )
    .await;
    let dir = std::env::temp_dir().join(format!("tally-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json_lines = [
        format!(
            r#"{{"external_ref": "i1", "data": {{"k": {}}}}}"#,
            arrays(5_000, "1")
        ),
        format!(
            r#"{{"external_ref": "i2", "data": {{"k": "{}"}}}}"#,
            "x".repeat(20_000)
        ),
        arrays(30_000, "1"),
        objects(30_000, "1"),
        "{\"external_ref\": \"i3\", \"data\": {\"k\": [1]}}".to_owned(),
    ]
    .join("\n");
    let jsonl = dir.join("deep.jsonl");
    std::fs::write(&jsonl, json_lines).unwrap();
    let csv = dir.join("long.csv");
    std::fs::write(
        &csv,
        format!(
            "external_ref,note\nc1,\"{}\"\nc2,{}\n\"c3,{}\nc4,ok\n",
            "y\"\"".repeat(10_000),
            "[".repeat(10_000),
            "z".repeat(30_000)
        ),
    )
    .unwrap();
    for (path, numbered) in [(&jsonl, vec!["i3"]), (&csv, vec!["c2"])] {
        let table = ["--table", app.store.table(), "--concurrency", "2"];
        let output = tally_import(path, "FZ", "file", &table).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.starts_with("created "), "{stdout}");
        assert!(!stdout.starts_with("created 0,"), "{stdout}");
        for reference in numbered {
            let found = app.get(&format!("/sources/file/orders/{reference}")).await;
            assert_eq!(found.status, StatusCode::OK, "{reference}: {}", found.body);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
