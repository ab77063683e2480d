//! The bench and the table commands: an unknown outcome repeated, and a finding told
//! from a failure to run.

use super::*;

/// The bench's buyers repeat a 503 as clients do: a purchase whose transaction DynamoDB
/// failed on every SDK attempt (the outcome unknown) is sent again with its payment id,
/// and the sell-out completes instead of stopping at the first such answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bench_repeats_an_unknown_outcome_instead_of_aborting() {
    let proxy = FaultProxy::start(&endpoint()).await;
    // Each attempt commits and then fails half the time: one purchase in eight exhausts
    // the SDK's three attempts.
    proxy.set(Faults {
        error_after: 0.5,
        operations: Some(vec!["TransactWriteItems".into()]),
        ..Faults::default()
    });
    let endpoint = proxy.endpoint();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_tally"))
            .args(["bench", "--tickets", "200", "--buyers", "8"])
            .args([
                "--max-quantity",
                "5",
                "--warmup-tickets",
                "0",
                "--skip-naive",
            ])
            .args(["--skip-write-rate", "--skip-orders", "--skip-import-parse"])
            .args(["--skip-cold-start", "--skip-audit", "--skip-winners"])
            .args(["--skip-bundles", "--skip-mixed-sale", "--skip-single"])
            .args(["--skip-refunds"])
            .env("DYNAMODB_ENDPOINT", endpoint)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("buyers repeated"), "{said}");
    assert!(proxy.counts().errors_after > 0);
}

/// Runs `tally ARGS` as a newcomer would after `make run`: no `DYNAMODB_ENDPOINT`, no
/// AWS environment; `DYNAMODB_PORT` stands for the port `make run` was given.
fn run_local(port: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(args)
        .env_remove("DYNAMODB_ENDPOINT")
        .env_remove("AWS_REGION")
        .env_remove("AWS_DEFAULT_REGION")
        .env_remove("AWS_PROFILE")
        .env("DYNAMODB_PORT", port)
        .output()
        .unwrap()
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_commands_read_make_runs_dynamodb_local_and_tell_a_finding_from_a_failure_to_run() {
    let app = spawn_app().await;
    let reply = app
        .put(
            "/series/OPS",
            &json!({"format": "OPS{seq:4}", "reset": "never", "gapless": true}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let order = json!({"series": "OPS", "source": "shop", "external_ref": "r1"});
    assert_eq!(
        app.post("/orders", &order).await.status,
        StatusCode::CREATED
    );
    let table = app.store.table().to_owned();
    let port = endpoint()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port().to_string()
    };
    let file = std::env::temp_dir().join(format!("tally-ops-{}.jsonl", std::process::id()));
    std::fs::write(&file, "{\"external_ref\": \"r2\"}\n").unwrap();
    let file = file.to_str().unwrap().to_owned();
    let closed = closed_port.clone();
    let outputs = tokio::task::spawn_blocking(move || {
        let audit = [
            "audit", "--series", "OPS", "--period", "all", "--table", &table,
        ];
        let missing = [
            "audit", "--series", "NONE", "--period", "all", "--table", &table,
        ];
        let draw = [
            "export-draw",
            "none",
            "--output",
            "/dev/null",
            "--table",
            &table,
        ];
        let import = [
            "import", &file, "--series", "NONE", "--source", "s", "--table", &table,
        ];
        [
            run_local(&port, &audit),
            run_local(&port, &missing),
            run_local(&closed, &audit),
            run_local(&port, &draw),
            run_local(&port, &import),
        ]
    })
    .await
    .unwrap();
    let [found, missing, unreachable, no_draw, no_series] = outputs;
    assert_eq!(found.status.code(), Some(0), "{}", stderr_of(&found));
    assert!(String::from_utf8_lossy(&found.stdout).contains("chain intact: 1 links"));
    for (output, says) in [
        (&missing, "NONE"),
        (&unreachable, "DYNAMODB_ENDPOINT"),
        (&no_draw, "none"),
        (&no_series, "NONE"),
    ] {
        let stderr = stderr_of(output);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.starts_with("tally: could not run: "), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    }
    assert!(stderr_of(&unreachable).contains(&format!("127.0.0.1:{closed_port}")));
}
