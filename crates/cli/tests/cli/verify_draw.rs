//! `tally verify-draw` on a draw's answers saved to files: it prints each step, exits 0
//! when the draw holds, and exits 1 naming the first failed step, the same one that
//! Tally's own check (the browser page's and the service tests') finds.

use std::process::{Command, Output};

use axum::http::StatusCode;
use serde_json::{Value, json};
use tally_testkit::verifiers::{DrawFiles, printed_verdict, tally_verdict};

use crate::helpers::spawn_app;

fn verify_draw(files: &DrawFiles) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["verify-draw", "--winners"])
        .arg(&files.winners)
        .arg("--eligible")
        .arg(&files.eligible)
        .args(files.options())
        .env_remove("TALLY_BEACON_NETWORKS")
        .output()
        .unwrap()
}

#[tokio::test]
async fn verify_draw_passes_a_true_draw_and_names_the_step_a_tampered_one_fails() {
    let app = spawn_app().await;
    app.create_draw(&json!({"draw_id": "files", "total_tickets": 50}))
        .await;
    for payment in ["p1", "p2", "p3"] {
        let bought = app
            .post(
                "/draws/files/purchases",
                &json!({"payment_id": payment, "quantity": 4}),
            )
            .await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    let closed = app.post("/draws/files/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let drawn = app
        .post("/draws/files/winners", &json!({"prizes": 2}))
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let eligible = app.get("/draws/files/eligible").await.body;
    let kept = app.get("/draws/files").await.body;

    let true_draw = DrawFiles::write("cli-true", &drawn.body, &eligible, Some(&kept), None);
    let output = verify_draw(&true_draw);
    let printed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(printed_verdict(&output, "tally verify-draw"), Ok(()));
    assert!(printed.contains("ok: the draw holds"), "{printed}");
    assert_eq!(tally_verdict(&true_draw), Ok(()));

    let mut seed: Value = drawn.body.clone();
    seed["proof"]["seed"] = json!("00".repeat(32));
    let tampered = DrawFiles::write("cli-seed", &seed, &eligible, None, None);
    let output = verify_draw(&tampered);
    assert_eq!(
        printed_verdict(&output, "tally verify-draw"),
        Err("commitment".to_owned())
    );
    assert_eq!(tally_verdict(&tampered), Err("commitment".to_owned()));
}
