//! `tally verify-draw` on a draw's answers saved to files or read from the API: it prints
//! each step, exits 0 when the draw holds, and exits 1 naming the first failed step, the
//! same one that Tally's own check (the browser page's and the service tests') finds. The
//! draw as the API reads it now is never taken for the answer kept from the close.

use std::future::IntoFuture;
use std::path::Path;
use std::process::{Command, Output};

use axum::http::StatusCode;
use serde_json::{Value, json};
use tally_testkit::verifiers::{DrawFiles, printed_verdict, tally_verdict};

use crate::helpers::{router, spawn_app};

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
    let closed = app.post("/draws/files/close", &json!({"prizes": 2})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let drawn = app.post("/draws/files/winners", &json!({})).await;
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

/// `tally verify-draw DRAW_ID --api URL` against the API served on a free loopback port.
fn verify_from_api(api: &str, draw_id: &str, kept: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tally"));
    command.args(["verify-draw", draw_id, "--api", api]);
    if let Some(kept) = kept {
        command.arg("--draw").arg(kept);
    }
    command
        .env_remove("TALLY_BEACON_NETWORKS")
        .output()
        .unwrap()
}

/// The outcome the command printed for step `id`.
fn printed_step<'a>(printed: &'a str, id: &str) -> Option<&'a str> {
    printed.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let outcome = words.next()?;
        (words.next()? == id).then_some(outcome)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_draw_from_the_api_skips_the_close_unless_given_the_kept_answer() {
    let app = spawn_app().await;
    app.create_draw(&json!({"draw_id": "live", "total_tickets": 30}))
        .await;
    let bought = app
        .post(
            "/draws/live/purchases",
            &json!({"payment_id": "p1", "quantity": 6}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let closed = app.post("/draws/live/close", &json!({"prizes": 2})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let drawn = app.post("/draws/live/winners", &json!({})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let eligible = app.get("/draws/live/eligible").await.body;
    let kept = DrawFiles::write("cli-api", &drawn.body, &eligible, Some(&closed.body), None);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(axum::serve(listener, router(app.store.clone())).into_future());
    let (unkept, checked) = {
        let (api, kept) = (api.clone(), kept.draw.clone());
        tokio::task::spawn_blocking(move || {
            (
                verify_from_api(&api, "live", None),
                verify_from_api(&api, "live", kept.as_deref()),
            )
        })
        .await
        .unwrap()
    };
    server.abort();

    // Today's draw answer would agree with itself: the step is skipped, and said so.
    let printed = String::from_utf8_lossy(&unkept.stdout);
    assert_eq!(printed_verdict(&unkept, "tally verify-draw"), Ok(()));
    assert_eq!(printed_step(&printed, "frozen"), Some("skip"), "{printed}");
    assert!(
        printed.contains("but not against the draw's answer kept from the close"),
        "{printed}"
    );
    let printed = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(printed_verdict(&checked, "tally verify-draw"), Ok(()));
    assert_eq!(printed_step(&printed, "frozen"), Some("pass"), "{printed}");
    assert!(!printed.contains("but not against"), "{printed}");
}
