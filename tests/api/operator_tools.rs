//! The operator's command line: `tally export-draw` writes every purchase of a draw as CSV,
//! `tally verify-draw --api` checks a drawn draw through a running API.

use std::process::Command;

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::{endpoint, router, spawn_app};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_every_purchase_and_verify_checks_a_draw_through_the_api() {
    let app = spawn_app().await;
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "out", "total_tickets": 500, "stripes": 20}),
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
    let table = app.store.table().to_owned();
    let output = {
        let file = file.clone();
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_tally"))
                .args(["export-draw", "out", "--output"])
                .arg(&file)
                .env("TABLE_NAME", table)
                .env("DYNAMODB_ENDPOINT", endpoint())
                .output()
                .unwrap()
        })
        .await
        .unwrap()
    };
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
    let tickets: usize = rows.iter().map(|r| r[3].split(' ').count()).sum();
    assert_eq!(tickets, sold);

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
        said.starts_with(&format!("ok: 2 picks of {} eligible", sold - 1)),
        "{said}"
    );
}
