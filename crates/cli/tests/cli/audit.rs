//! `tally audit` and `tally export` on a period with an order edited behind Tally's back
//! (C1): the command finds what the API's audit finds. An audit whose reader went away
//! ends as a command that could not write.

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::json;

use crate::helpers::{TestApp, spawn_app};

/// Rewrites one attribute of an order's number item, as someone with table access could.
async fn tamper(app: &TestApp, key: &str, attribute: &str, value: &str) {
    app.store
        .client()
        .update_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S(key.to_owned()))
        .update_expression("SET #a = :v")
        .expression_attribute_names("#a", attribute)
        .expression_attribute_values(":v", AttributeValue::S(value.to_owned()))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_order_edited_in_the_table_is_named_by_the_audit_and_the_audit_command() {
    let app = spawn_app().await;
    app.define_series("T", &json!({"format": "T{seq:4}", "reset": "never"}))
        .await;
    app.post_range("T", 0, 30).await;
    app.patch("/series/T", &json!({"next": 40, "reason": "skip"}))
        .await;
    app.post_range("T", 30, 35).await;
    let intact = app.get("/series/T/audit").await;
    assert_eq!(intact.body["chain"]["intact"], true, "{}", intact.body);
    assert_eq!(intact.body["chain"]["links"], 36);
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tally"))
            .args(args)
            .args([
                "--series",
                "T",
                "--period",
                "all",
                "--table",
                app.store.table(),
            ])
            .output()
            .unwrap()
    };
    let clean = run(&["audit"]);
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    assert!(String::from_utf8_lossy(&clean.stdout).contains("chain intact: 36 links"));

    // C1: order 17's data is changed behind Tally's back.
    tamper(&app, "ORDER#T#all#17", "data", r#"{"i": 1700}"#).await;
    let audit = app.get("/series/T/audit").await;
    assert_eq!(audit.body["chain"]["intact"], false);
    assert_eq!(
        audit.body["chain"]["first_break"],
        json!({"at": "entry", "counter": 17, "order_number": "T0017"})
    );
    let found = run(&["audit"]);
    // A finding, not a failure to run.
    assert_eq!(found.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&found.stderr);
    assert!(stderr.contains("counter 17 (T0017)"), "{stderr}");
    // A declared move edited is found too: its reason is part of the chain.
    tamper(&app, "ORDER#T#all#17", "data", r#"{"i": 16}"#).await;
    assert_eq!(
        app.get("/series/T/audit").await.body["chain"]["intact"],
        true
    );
    tamper(&app, "ORDER#T#all#39", "reason", "nothing to see").await;
    assert_eq!(
        app.get("/series/T/audit").await.body["chain"]["first_break"]["counter"],
        31
    );

    // The export lists the period in counter order, the move as a gap row.
    let path = std::env::temp_dir().join(format!("{}.csv", app.store.table()));
    let export = run(&["export", "--out", path.to_str().unwrap()]);
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 1 + 36);
    assert!(rows[0].starts_with("counter,to_counter,order_number,status"));
    assert!(rows[1].starts_with("1,,T0001,active,src-T,r0,"));
    assert!(rows[31].starts_with("31,39,,gap,"), "{}", rows[31]);
    assert!(rows[32].starts_with("40,,T0040,active"));
}

#[tokio::test]
async fn an_audit_whose_output_is_closed_ends_without_a_panic() {
    let app = spawn_app().await;
    app.define_series("P", &json!({"format": "P{seq:4}", "reset": "never"}))
        .await;
    app.post_range("P", 0, 3).await;
    let table = app.store.table().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tally"))
            .args([
                "audit", "--series", "P", "--period", "all", "--table", &table,
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Closed before the audit has read the table: its first line finds no reader.
        drop(child.stdout.take());
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("standard output"), "{stderr}");
}
