//! W1-W4: the seed is committed before any sale and revealed with the winners; winners are
//! distinct eligible tickets drawn once; anyone recomputes them (the Rust and the Python
//! verifier, which reject a tampered seed, list or winner); a redraw keeps its history.

use std::path::PathBuf;
use std::process::Command;

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::helpers::{Reply, TestApp, spawn_app, tickets_of};

const BEACON: &str = "drand quicknet round 12345678";
const BEACON_VALUE: &str = "8f2ac6a3b1d0e4f5a6978877665544332211ffeeddccbbaa0099887766554433";

/// A draw of 200 tickets with a declared beacon, 8 payments of 5 from 4 payers, the
/// fourth payment voided, closed.
async fn closed_draw(app: &TestApp, id: &str) -> (Value, Vec<u64>) {
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": id, "total_tickets": 200, "max_per_purchase": 10, "beacon": BEACON}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let mut voided = Vec::new();
    for i in 0..8 {
        let bought = app
            .post(
                &format!("/draws/{id}/purchases"),
                &json!({"payment_id": format!("p{i}"), "quantity": 5, "payer_id": format!("payer-{}", i % 4)}),
            )
            .await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
        if i == 3 {
            voided = tickets_of(&bought);
        }
    }
    let void = app
        .post(
            &format!("/draws/{id}/purchases/p3/void"),
            &json!({"reason": "chargeback"}),
        )
        .await;
    assert_eq!(void.status, StatusCode::OK, "{}", void.body);
    // Winners need a closed draw.
    let early = app
        .post(
            &format!("/draws/{id}/winners"),
            &json!({"prizes": 3, "beacon_value": BEACON_VALUE}),
        )
        .await;
    assert_eq!(early.code(), "draw_open", "{}", early.body);
    let closed = app.post(&format!("/draws/{id}/close"), &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK);
    (created.body, voided)
}

fn winning_tickets(reply: &Reply) -> Vec<u64> {
    reply.body["prizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["ticket"].as_u64().unwrap())
        .collect()
}

pub fn bitmap_tickets(eligible: &Value) -> Vec<u64> {
    let bytes = STANDARD
        .decode(eligible["bitmap"].as_str().unwrap())
        .unwrap();
    (0..eligible["total_tickets"].as_u64().unwrap())
        .filter(|i| bytes[(i / 8) as usize] >> (i % 8) & 1 == 1)
        .map(|i| i + 1)
        .collect()
}

/// Writes the answers to files and runs both verifiers on them: (Rust passed, Python
/// passed).
pub fn verifiers_accept(name: &str, winners: &Value, eligible: &Value) -> (bool, bool) {
    let dir = std::env::temp_dir().join(format!("tally-verify-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |file: &str, value: &Value| -> PathBuf {
        let path = dir.join(file);
        std::fs::write(&path, value.to_string()).unwrap();
        path
    };
    let (w, e) = (
        write("winners.json", winners),
        write("eligible.json", eligible),
    );
    let rust = Command::new(env!("CARGO_BIN_EXE_tally"))
        .args(["verify-draw", "--winners"])
        .arg(&w)
        .arg("--eligible")
        .arg(&e)
        .output()
        .unwrap();
    let script = format!("{}/scripts/verify-draw.py", env!("CARGO_MANIFEST_DIR"));
    let python = Command::new("python3")
        .arg(script)
        .arg(&w)
        .arg(&e)
        .output()
        .unwrap();
    // The Python check fails with exit 1 and a reason, never with a crash.
    assert!(
        python.status.code() == Some(0) || python.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&python.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
    (rust.status.success(), python.status.success())
}

#[tokio::test]
async fn winners_are_distinct_eligible_drawn_once_and_verified_by_rust_and_python() {
    let app = spawn_app().await;
    let (created, voided) = closed_draw(&app, "fair").await;
    let commitment = created["seed_commitment"].as_str().unwrap().to_owned();
    assert_eq!(commitment.len(), 64);

    let without = app.post("/draws/fair/winners", &json!({"prizes": 3})).await;
    assert_eq!(without.code(), "beacon_value_required", "{}", without.body);
    let too_many = app
        .post("/draws/fair/winners", &json!({"prizes": 100}))
        .await;
    assert_eq!(too_many.code(), "invalid_prizes");
    let body = json!({"prizes": 3, "beacon_value": BEACON_VALUE});
    let drawn = app.post("/draws/fair/winners", &body).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let tickets = winning_tickets(&drawn);
    // W2: distinct, sold, not voided.
    let mut distinct = tickets.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3);
    for ticket in &tickets {
        assert!(!voided.contains(ticket), "voided ticket {ticket} won");
        let held = app.get(&format!("/draws/fair/tickets/{ticket}")).await;
        assert_eq!(held.body["status"], "active", "{}", held.body);
    }
    for prize in drawn.body["prizes"].as_array().unwrap() {
        let payment = prize["payment_id"].as_str().unwrap();
        let bought = app.get(&format!("/draws/fair/purchases/{payment}")).await;
        assert!(tickets_of(&bought).contains(&prize["ticket"].as_u64().unwrap()));
        assert_eq!(prize["payer_id"], bought.body["payer_id"]);
    }
    // W1: the revealed seed hashes to the commitment published at creation.
    let proof = &drawn.body["proof"];
    let seed = proof["seed"].as_str().unwrap();
    let seed_bytes: Vec<u8> = (0..64)
        .step_by(2)
        .map(|i| u8::from_str_radix(&seed[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(hex(&Sha256::digest(&seed_bytes)), commitment);
    assert_eq!(proof["seed_commitment"], commitment.as_str());
    assert_eq!(proof["algorithm"], "tally-draw-v1");
    assert_eq!(proof["beacon"], BEACON);
    assert_eq!(proof["beacon_value"], BEACON_VALUE);
    assert_eq!(proof["eligible_count"], 35);

    // W4: the same body again gets the same winners; another body is refused.
    let again = app.post("/draws/fair/winners", &body).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body, drawn.body);
    let other = app
        .post(
            "/draws/fair/winners",
            &json!({"prizes": 2, "beacon_value": BEACON_VALUE}),
        )
        .await;
    assert_eq!(other.code(), "winners_drawn");
    // W2: no void after the winners.
    let late_void = app
        .post(
            "/draws/fair/purchases/p0/void",
            &json!({"reason": "refund"}),
        )
        .await;
    assert_eq!(late_void.code(), "winners_drawn", "{}", late_void.body);
    assert!(app.get("/draws/fair").await.body["drawn_at"].is_string());

    // The eligible list: exactly the sold tickets less the voided ones, and its digest.
    let eligible = app.get("/draws/fair/eligible").await;
    assert_eq!(eligible.status, StatusCode::OK, "{}", eligible.body);
    let listed = bitmap_tickets(&eligible.body);
    assert_eq!(listed.len(), 35);
    assert!(voided.iter().all(|t| !listed.contains(t)));
    assert!(tickets.iter().all(|t| listed.contains(t)));
    let bitmap = STANDARD
        .decode(eligible.body["bitmap"].as_str().unwrap())
        .unwrap();
    assert_eq!(hex(&Sha256::digest(&bitmap)), proof["eligible_digest"]);

    // A redraw replaces one winner by the next pick and keeps the replaced one.
    let no_reason = app.post("/draws/fair/winners/2/redraw", &json!({})).await;
    assert_eq!(no_reason.code(), "invalid_reason");
    let missing = app
        .post("/draws/fair/winners/4/redraw", &json!({"reason": "x"}))
        .await;
    assert_eq!(missing.code(), "prize_not_found");
    let reason = json!({"reason": "winner did not answer within 14 days"});
    let redrawn = app.post("/draws/fair/winners/2/redraw", &reason).await;
    assert_eq!(redrawn.status, StatusCode::CREATED, "{}", redrawn.body);
    let after = winning_tickets(&redrawn);
    assert_eq!((after[0], after[2]), (tickets[0], tickets[2]));
    assert!(!tickets.contains(&after[1]) && listed.contains(&after[1]));
    let history = &redrawn.body["history"];
    assert_eq!(history.as_array().unwrap().len(), 1);
    assert_eq!(history[0]["ticket"], tickets[1]);
    assert_eq!(history[0]["prize"], 2);
    assert_eq!(history[0]["reason"], reason["reason"]);
    assert_eq!(history[0]["replaced_by_pick"], 4);
    // The same redraw again (a client repeating it) draws nothing new.
    let repeated = app.post("/draws/fair/winners/2/redraw", &reason).await;
    assert_eq!(repeated.status, StatusCode::OK);
    assert_eq!(winning_tickets(&repeated), after);
    let read = app.get("/draws/fair/winners").await;
    assert_eq!(read.body, redrawn.body);

    // W3: both verifiers recompute the draw, redraw included, and reject tampering.
    let (winners, list) = (read.body.clone(), eligible.body.clone());
    assert_eq!(verifiers_accept("true", &winners, &list), (true, true));
    let mut seed_tampered = winners.clone();
    seed_tampered["proof"]["seed"] = json!(hex(&Sha256::digest(b"another seed")));
    assert_eq!(
        verifiers_accept("seed", &seed_tampered, &list),
        (false, false)
    );
    let mut list_tampered = list.clone();
    let mut bytes = bitmap.clone();
    let spare = (1..=200u64).find(|t| !listed.contains(t)).unwrap() - 1;
    bytes[(spare / 8) as usize] |= 1 << (spare % 8);
    list_tampered["bitmap"] = json!(STANDARD.encode(&bytes));
    assert_eq!(
        verifiers_accept("list", &winners, &list_tampered),
        (false, false)
    );
    let mut winner_tampered = winners.clone();
    let other_ticket = listed.iter().find(|t| !after.contains(t)).unwrap();
    winner_tampered["proof"]["picks"][0]["ticket"] = json!(other_ticket);
    winner_tampered["prizes"][0]["ticket"] = json!(other_ticket);
    assert_eq!(
        verifiers_accept("winner", &winner_tampered, &list),
        (false, false)
    );
}

#[tokio::test]
async fn a_beacon_is_set_until_the_close_and_a_value_needs_one_declared() {
    let app = spawn_app().await;
    let created = app
        .post("/draws", &json!({"draw_id": "b", "total_tickets": 10}))
        .await;
    assert!(created.body["beacon"].is_null());
    let set = app.patch("/draws/b", &json!({"beacon": BEACON})).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(set.body["beacon"], BEACON);
    // The commitment never changes.
    assert_eq!(set.body["seed_commitment"], created.body["seed_commitment"]);
    let cleared = app.patch("/draws/b", &json!({"beacon": null})).await;
    assert!(cleared.body["beacon"].is_null());
    assert_eq!(
        app.patch("/draws/b", &json!({})).await.code(),
        "invalid_body"
    );
    assert_eq!(
        app.patch("/draws/b", &json!({"beacon": 5})).await.code(),
        "invalid_beacon"
    );
    let bought = json!({"payment_id": "p", "quantity": 2});
    assert!(
        app.post("/draws/b/purchases", &bought)
            .await
            .status
            .is_success()
    );
    assert_eq!(
        app.post("/draws/b/close", &json!({})).await.status,
        StatusCode::OK
    );
    let late = app.patch("/draws/b", &json!({"beacon": BEACON})).await;
    assert_eq!(late.code(), "draw_closed", "{}", late.body);
    // Without a declared beacon, a value chosen at draw time is refused.
    let chosen = app
        .post(
            "/draws/b/winners",
            &json!({"prizes": 1, "beacon_value": "7"}),
        )
        .await;
    assert_eq!(chosen.code(), "beacon_not_declared");
    let drawn = app.post("/draws/b/winners", &json!({"prizes": 1})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    assert!(drawn.body["proof"]["beacon_value"].is_null());
    let eligible = app.get("/draws/b/eligible").await;
    assert_eq!(
        verifiers_accept("nobeacon", &drawn.body, &eligible.body),
        (true, true)
    );
    let more = app.post("/draws/b/winners", &json!({"prizes": 3})).await;
    assert_eq!(more.code(), "winners_drawn");
    assert_eq!(
        app.get("/draws/none/winners").await.code(),
        "draw_not_found"
    );
}

#[tokio::test]
async fn more_prizes_than_eligible_tickets_and_winners_before_the_draw_are_refused() {
    let app = spawn_app().await;
    app.post("/draws", &json!({"draw_id": "few", "total_tickets": 10}))
        .await;
    assert_eq!(
        app.get("/draws/few/winners").await.code(),
        "winners_not_drawn"
    );
    assert_eq!(app.get("/draws/few/eligible").await.code(), "draw_open");
    app.post(
        "/draws/few/purchases",
        &json!({"payment_id": "a", "quantity": 2}),
    )
    .await;
    app.post("/draws/few/close", &json!({})).await;
    let refused = app.post("/draws/few/winners", &json!({"prizes": 3})).await;
    assert_eq!(refused.code(), "not_enough_eligible", "{}", refused.body);
    assert_eq!(refused.body["eligible"], 2);
    let drawn = app.post("/draws/few/winners", &json!({"prizes": 2})).await;
    assert_eq!(drawn.status, StatusCode::CREATED);
    // Every eligible ticket has won: a redraw has nothing left to pick.
    let redraw = app
        .post(
            "/draws/few/winners/1/redraw",
            &json!({"reason": "ineligible"}),
        )
        .await;
    assert_eq!(redraw.code(), "not_enough_eligible");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
