//! `tally verify-draw` on a draw's answers saved to files or read from the API: it prints
//! each step, exits 0 when the draw holds, and exits 1 naming the first failed step, the
//! same one that Tally's own check (the browser page's and the service tests') finds. The
//! draw as the API reads it now is never taken for the answer kept from the close. The
//! tampered answers of `tampered.json` fail the same step in all three verifiers.

use std::future::IntoFuture;
use std::path::Path;
use std::process::{Command, Output};

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use tally_domain::hex;
use tally_domain::winners::{BeaconNetworks, DrawInputs, EligibleSet, Picks};
use tally_testkit::beacon::{fixture, network_json, signature};
use tally_testkit::verifiers::{
    DrawFiles, printed_verdict, run_python_verifier, run_verifiers, tally_verdict,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{TestApp, router, spawn_app};

fn verify_command(files: &DrawFiles) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tally"));
    command
        .args(["verify-draw", "--winners"])
        .arg(&files.winners)
        .arg("--eligible")
        .arg(&files.eligible)
        .args(files.options())
        .env_remove("TALLY_BEACON_NETWORKS");
    command
}

fn verify_draw(files: &DrawFiles) -> Output {
    verify_command(files).output().unwrap()
}

#[tokio::test]
async fn verify_draw_passes_a_true_draw_and_names_the_step_a_tampered_one_fails() {
    let app = spawn_app().await;
    let (drawn, eligible) = drawn_without_beacon(&app, "files").await;
    let kept = app.get("/draws/files").await.body;

    let true_draw = DrawFiles::write("cli-true", &drawn, &eligible, Some(&kept), None);
    let output = verify_draw(&true_draw);
    let printed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(printed_verdict(&output, "tally verify-draw"), Ok(()));
    assert!(printed.contains("ok: the draw holds"), "{printed}");
    assert_eq!(tally_verdict(&true_draw), Ok(()));

    // With its output closed it cannot say the draw holds: exit 1, saying why, no panic.
    let mut unread = verify_command(&true_draw)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(unread.stdout.take());
    let output = unread.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("standard output"), "{stderr}");

    let mut seed: Value = drawn.clone();
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

/// A draw of 50 tickets, 12 sold, drawn with 2 prizes and no beacon: its winners answer
/// and eligible list.
async fn drawn_without_beacon(app: &TestApp, draw_id: &str) -> (Value, Value) {
    app.create_draw(&json!({"draw_id": draw_id, "total_tickets": 50}))
        .await;
    for payment in ["p1", "p2", "p3"] {
        let bought = app
            .post(
                &format!("/draws/{draw_id}/purchases"),
                &json!({"payment_id": payment, "quantity": 4}),
            )
            .await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    let closed = app
        .post(&format!("/draws/{draw_id}/close"), &json!({"prizes": 2}))
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let drawn = app
        .post(&format!("/draws/{draw_id}/winners"), &json!({}))
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let eligible = app.get(&format!("/draws/{draw_id}/eligible")).await.body;
    (drawn.body, eligible)
}

/// The winners answer with a case of `tampered.json` applied: `copy` gives pointers the
/// value other pointers had in the true answer, `set` gives them values, and `prepend`
/// puts a field before the answer's first, so that the field is given twice.
fn tampered(true_answer: &Value, case: &Value) -> String {
    let mut answer = true_answer.clone();
    for (to, from) in case["copy"].as_object().into_iter().flatten() {
        let value = true_answer.pointer(from.as_str().unwrap()).unwrap();
        put(&mut answer, to, value.clone());
    }
    for (to, value) in case["set"].as_object().into_iter().flatten() {
        put(&mut answer, to, value.clone());
    }
    let text = answer.to_string();
    match case["prepend"].as_str() {
        Some(field) => format!("{{{field},{}", &text[1..]),
        None => text,
    }
}

/// Sets the value at a JSON pointer: a field of an object, or an item of an array (one
/// past its end appends).
fn put(answer: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match answer.pointer_mut(parent) {
        Some(Value::Object(fields)) => {
            fields.insert(key.to_owned(), value);
        }
        Some(Value::Array(items)) => match key.parse::<usize>().unwrap() {
            at if at == items.len() => items.push(value),
            at => items[at] = value,
        },
        _ => panic!("{pointer} names nothing in the answer"),
    }
}

#[tokio::test]
async fn every_verifier_fails_each_tampered_answer_at_the_same_step() {
    let app = spawn_app().await;
    let (winners, eligible) = drawn_without_beacon(&app, "shared").await;
    let cases: Vec<Value> = serde_json::from_str(include_str!("tampered.json")).unwrap();
    let mut disagreements = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let files = DrawFiles::write(&format!("shared-{n}"), &json!({}), &eligible, None, None);
        std::fs::write(&files.winners, tampered(&winners, case)).unwrap();
        let expected = match case["step"].as_str() {
            Some(step) => Err(step.to_owned()),
            None => Ok(()),
        };
        // The browser page runs the domain's check on the texts, as `tally_verdict` does.
        let page_and_python = run_verifiers(&files);
        let verdicts = [
            (
                "tally verify-draw",
                printed_verdict(&verify_draw(&files), "tally verify-draw"),
            ),
            ("the page's check", page_and_python.rust),
            ("verify-draw.py", page_and_python.python),
        ];
        for (verifier, verdict) in verdicts {
            if verdict != expected {
                disagreements.push(format!(
                    "{}: {verifier} says {verdict:?}, not {expected:?}",
                    case["name"]
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

/// The answers of `plain` drawn instead with the test network's round, the first
/// published more than the margin after the freeze, and the networks file that trusts it.
fn drawn_with_beacon(plain: &Value, eligible: &Value) -> (Value, String) {
    let proof = &plain["proof"];
    let frozen_at: jiff::Timestamp = proof["frozen_at"].as_str().unwrap().parse().unwrap();
    let frozen_at_ms = frozen_at.as_millisecond();
    let networks = network_json(frozen_at_ms / 1_000 - 100, 10);
    let trusted = BeaconNetworks::with_json(Some(&networks)).unwrap();
    let network = trusted.get("test").unwrap();
    let round = network.round_after(frozen_at_ms);
    let signed = signature(round);
    let total = proof["total_tickets"].as_u64().unwrap();
    let bitmap = STANDARD
        .decode(eligible["bitmap"].as_str().unwrap())
        .unwrap();
    let set = EligibleSet::from_bitmap(total, &bitmap).unwrap();
    let inputs = DrawInputs {
        seed: hex::decode32(proof["seed"].as_str().unwrap()).unwrap(),
        digest: set.digest(),
    };
    let randomness = network.randomness(round, &signed).unwrap();
    let mut answer = plain.clone();
    let prizes = proof["prizes"].as_u64().unwrap() as usize;
    for (at, (_, ticket)) in Picks::new(&set, inputs)
        .take(prizes, &randomness)
        .into_iter()
        .enumerate()
    {
        answer["proof"]["picks"][at]["ticket"] = json!(ticket);
        answer["prizes"][at]["ticket"] = json!(ticket);
    }
    let drawn_at = jiff::Timestamp::from_millisecond(network.published_at_ms(round)).unwrap();
    answer["proof"]["drawn_at"] = json!(drawn_at.to_string());
    answer["proof"]["beacon"] = json!({
        "network": "test", "scheme": "pedersen-bls-unchained",
        "public_key": fixture()["public_key"], "genesis_time": frozen_at_ms / 1_000 - 100,
        "period": 10, "round": round, "signature": signed,
    });
    (answer, networks)
}

#[tokio::test]
async fn the_python_verifier_without_py_ecc_says_the_draw_is_not_verified() {
    let app = spawn_app().await;
    let (plain, eligible) = drawn_without_beacon(&app, "unsigned").await;
    let (winners, networks) = drawn_with_beacon(&plain, &eligible);
    let files = DrawFiles::write("no-py-ecc", &winners, &eligible, None, Some(&networks));
    // With py_ecc the draw holds, in both verifiers.
    assert_eq!(
        printed_verdict(&verify_draw(&files), "tally verify-draw"),
        Ok(())
    );
    let both = run_verifiers(&files);
    assert_eq!((both.rust, both.python), (Ok(()), Ok(())));
    // `-S`: no site packages, so no py_ecc; the picks still check, the verdict is no ok.
    let output = run_python_verifier(&files, &["-S"]);
    let printed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{printed}");
    assert!(!printed.contains("ok: the draw holds"), "{printed}");
    assert!(
        printed.contains("NOT VERIFIED") && printed.contains("py_ecc"),
        "{printed}"
    );
    assert_eq!(printed_step(&printed, "pick"), Some("pass"), "{printed}");
}

/// An API that answers `/draws/large/...` with more than any draw's answer and never
/// answers `/draws/silent/...`.
async fn misbehaving_api(listener: tokio::net::TcpListener) {
    loop {
        let (mut stream, _) = listener.accept().await.unwrap();
        tokio::spawn(async move {
            let mut request = vec![0; 4096];
            let read = stream.read(&mut request).await.unwrap_or(0);
            if String::from_utf8_lossy(&request[..read]).contains("/draws/large/") {
                let size = 7 << 20;
                let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {size}\r\n\r\n");
                stream.write_all(head.as_bytes()).await.ok();
                stream.write_all(&vec![b' '; size]).await.ok();
            } else {
                tokio::time::sleep(std::time::Duration::from_secs(120)).await;
            }
        });
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_draw_from_the_api_gives_up_on_a_slow_or_oversized_answer() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(misbehaving_api(listener));
    let (large, silent) = {
        let (api, again) = (api.clone(), api.clone());
        let large = tokio::task::spawn_blocking(move || verify_from_api(&api, "large", None));
        let silent = tokio::task::spawn_blocking(move || verify_from_api(&again, "silent", None));
        (large.await.unwrap(), silent.await.unwrap())
    };
    server.abort();
    for (output, said) in [
        (large, "larger than 6 MiB"),
        (silent, "no whole answer within 30 s"),
    ] {
        let error = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{error}");
        assert!(error.contains(said), "{error}");
    }
}
