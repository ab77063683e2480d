//! Files imported through a running API: JSON lines, CSV, the progress log.

use super::*;

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

#[tokio::test]
async fn a_rerun_that_numbers_every_line_removes_the_rejected_lines_of_the_run_before() {
    let app = spawn_app().await;
    app.define_series("FIX", &json!({"format": "FIX-{seq:3}", "reset": "never"}))
        .await;
    let note = "n".repeat(300);
    let line = |reference: &str| {
        format!("{{\"external_ref\": \"{reference}\", \"data\": {{\"note\": \"{note}\"}}}}\n")
    };
    let path = write("fixed-later.jsonl", &[line("a"), line("bad ref")].concat());
    let table = ["--table", app.store.table()];

    let first = tally_import(&path, "FIX", "erp-1", &table).await;
    assert_eq!(first.status.code(), Some(1), "{}", stdout(&first));
    let rejected = rejected_lines(&path);
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0]["code"], "invalid_external_ref");
    // Its input is cut, as every rejected line's is.
    let input = rejected[0]["input"].as_str().unwrap();
    assert_eq!(input, format!("{}…", &line("bad ref")[..200]));

    std::fs::write(&path, [line("a"), line("b")].concat()).unwrap();
    let fixed = tally_import(&path, "FIX", "erp-1", &table).await;
    assert_eq!(fixed.status.code(), Some(0), "{}", stdout(&fixed));
    assert!(stdout(&fixed).starts_with("created 1, existing 1, rejected 0 in "));
    let mut stale = path.as_os_str().to_owned();
    stale.push(".rejected.jsonl");
    assert!(
        !Path::new(&stale).exists(),
        "the first run's rejected lines remain"
    );

    // A run whose output is closed still writes its rejected lines before it fails.
    std::fs::write(&path, [line("c"), line("bad ref")].concat()).unwrap();
    let mut unread = std::process::Command::new(env!("CARGO_BIN_EXE_tally"));
    unread
        .arg("import")
        .arg(&path)
        .args(["--series", "FIX", "--source", "erp-1"])
        .args(table)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let closed = tokio::task::spawn_blocking(move || {
        let mut child = unread.spawn().unwrap();
        drop(child.stdout.take());
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&closed.stderr);
    assert_eq!(closed.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("standard output"), "{stderr}");
    let rejected = rejected_lines(&path);
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert_eq!(rejected[0]["code"], "invalid_external_ref");
}
