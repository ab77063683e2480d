//! `tally journal verify` on a journal edited behind Tally's back (J1): the command names
//! the first entry that no longer checks out.

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::json;

use crate::helpers::{TestApp, spawn_app};

/// `tally journal verify` on the app's table: its exit status, stdout and stderr.
fn verify(app: &TestApp) -> (Option<i32>, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["journal", "verify", "--table", app.store.table()])
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_hand_edited_journal_entry_is_named_by_journal_verify() {
    let app = spawn_app().await;
    app.create_draw(&json!({"draw_id": "jv", "total_tickets": 100}))
        .await;
    for i in 0..4 {
        let path = "/draws/jv/purchases";
        let bought = app
            .post(path, &json!({"payment_id": format!("p{i}"), "quantity": 1}))
            .await;
        assert_eq!(bought.status, 201, "{}", bought.body);
        let voided = app
            .post(
                &format!("/draws/jv/purchases/p{i}/void"),
                &json!({"reason": "refund"}),
            )
            .await;
        assert_eq!(voided.status, 200, "{}", voided.body);
    }
    let (status, stdout, stderr) = verify(&app);
    assert_eq!(status, Some(0), "{stderr}");
    // The draw's creation and its four voids.
    assert!(stdout.contains("5 entries"), "{stdout}");

    // Entry 3 (the second void)'s reason is changed, as someone with table access could.
    app.store
        .client()
        .update_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S("JOURNAL#3".to_owned()))
        .update_expression("SET #c = :v")
        .expression_attribute_names("#c", "change")
        .expression_attribute_values(
            ":v",
            AttributeValue::S(
                r#"{"late":false,"reason":"goodwill","status":"void","tickets":1}"#.to_owned(),
            ),
        )
        .send()
        .await
        .unwrap();
    let (status, _, stderr) = verify(&app);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("entry 3"), "{stderr}");

    // Without entry 3, the next one found is 4.
    app.store
        .client()
        .delete_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S("JOURNAL#3".to_owned()))
        .send()
        .await
        .unwrap();
    let (status, _, stderr) = verify(&app);
    assert_eq!(status, Some(1), "{stderr}");
    assert!(stderr.contains("entry 3 is missing"), "{stderr}");
}
