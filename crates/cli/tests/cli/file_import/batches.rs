//! Batches the API refuses or does not answer, and lines that fail alone.

use super::*;

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

#[tokio::test]
async fn an_api_that_never_answers_or_answers_without_end_fails_within_the_retry_budget() {
    // Accepts each connection and keeps it, silent.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((connection, _)) = listener.accept().await {
            held.push(connection);
        }
    });
    // Answers 9 MB of JSON that is never whole: more than any batch answer.
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    let endless = axum::routing::post(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async { format!("[{}", "1,".repeat(4_500_000)) }
    });
    let router = axum::Router::new().route("/orders/batch", endless);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let long = format!("http://{}", listener.local_addr().unwrap());
    let long_server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let path = write("silent.jsonl", "{\"external_ref\": \"a\"}\n");
    // The answer too long has all the time it needs: it is cut by its size.
    for (base, timeout, said) in [
        (&silent, "300", "no answer within 300 ms"),
        (&long, "20000", "an answer longer than 8388608 bytes"),
    ] {
        let started = std::time::Instant::now();
        let args = ["--api", base, "--answer-timeout-ms", timeout];
        let run = tally_import(&path, "S", "erp", &args);
        // Without a timeout the import would wait for ever: the test gives up first.
        let output = tokio::time::timeout(std::time::Duration::from_secs(60), run)
            .await
            .expect("the import ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
        // Six attempts, and waits between them of at most 6.2 s.
        assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    }
    server.abort();
    long_server.abort();
    // The answer too long was sent again, as an unavailable service is.
    assert_eq!(requests.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn a_batch_past_what_the_batch_route_takes_is_refused_before_any_line_is_read() {
    let missing = std::env::temp_dir().join("tally-import-no-such-file.jsonl");
    for size in ["0", "1001"] {
        let output = tally_import(&missing, "S", "erp", &["--batch", size]).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("a batch holds 1 to 1000 orders"),
            "{stderr}"
        );
    }
}

#[tokio::test]
async fn an_answer_timeout_without_an_api_is_refused_before_any_line_is_read() {
    let missing = std::env::temp_dir().join("tally-import-no-such-file.jsonl");
    let output = tally_import(&missing, "S", "erp", &["--answer-timeout-ms", "5000"]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--answer-timeout-ms") && stderr.contains("--api"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("no-such-file"),
        "the file was read: {stderr}"
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
