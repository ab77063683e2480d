//! W1-W4: the seed is committed before any sale and revealed with the winners; winners are
//! distinct eligible tickets drawn once; anyone recomputes them (the Rust and the Python
//! verifier, which reject a tampered seed, list or winner); a redraw keeps its history.
//! Draws without a beacon here; tests/api/beacon/ has the drand draws.

use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::helpers::{Reply, TestApp, spawn_app, tickets_of};
use tally_testkit::verifiers::{Verdicts, verifiers_accept};

/// A draw of 200 tickets, 8 payments of 5 from 4 payers, the fourth payment voided,
/// closed with 3 prizes.
async fn closed_draw(app: &TestApp, id: &str) -> (Value, Vec<u64>) {
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": id, "total_tickets": 200, "max_per_purchase": 10}),
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
        .post(&format!("/draws/{id}/winners"), &json!({"prizes": 3}))
        .await;
    assert_eq!(early.code(), "draw_open", "{}", early.body);
    let closed = app
        .post(&format!("/draws/{id}/close"), &json!({"prizes": 3}))
        .await;
    assert_eq!(closed.status, StatusCode::OK);
    (created.body, voided)
}

pub fn winning_tickets(reply: &Reply) -> Vec<u64> {
    reply.body["prizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["ticket"].as_u64().unwrap())
        .collect()
}

/// The picked tickets (winners, redrawn or replaced) of a winners answer among `tickets`,
/// in ascending order.
pub fn picked_among(winners: &Value, tickets: &[u64]) -> Vec<u64> {
    let mut picked: Vec<u64> = winners["proof"]["picks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["ticket"].as_u64().unwrap())
        .filter(|t| tickets.contains(t))
        .collect();
    picked.sort();
    picked
}

/// The tickets a winners answer lists as voided after the freeze.
pub fn late_void_tickets(winners: &Value) -> Vec<u64> {
    winners["proof"]["late_voids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["ticket"].as_u64().unwrap())
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

#[tokio::test]
async fn winners_are_distinct_eligible_drawn_once_and_verified_by_rust_and_python() {
    let app = spawn_app().await;
    let (created, voided) = closed_draw(&app, "fair").await;
    let commitment = created["seed_commitment"].as_str().unwrap().to_owned();
    assert_eq!(commitment.len(), 64);

    let signed = app
        .post(
            "/draws/fair/winners",
            &json!({"prizes": 3, "beacon_signature": "ab"}),
        )
        .await;
    assert_eq!(signed.code(), "beacon_not_declared", "{}", signed.body);
    let too_many = app
        .post("/draws/fair/winners", &json!({"prizes": 100}))
        .await;
    assert_eq!(too_many.code(), "invalid_prizes");
    let body = json!({"prizes": 3});
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
        assert_eq!(prize["voided"], false);
    }
    // The public answer names purchases, never payers.
    assert!(!drawn.raw.contains("payer"), "{}", drawn.raw);
    // W1: the revealed seed hashes to the commitment published at creation.
    let proof = &drawn.body["proof"];
    let seed = proof["seed"].as_str().unwrap();
    let seed_bytes: Vec<u8> = (0..64)
        .step_by(2)
        .map(|i| u8::from_str_radix(&seed[i..i + 2], 16).unwrap())
        .collect();
    assert_eq!(hex(&Sha256::digest(&seed_bytes)), commitment);
    assert_eq!(proof["seed_commitment"], commitment.as_str());
    assert_eq!(proof["algorithm"], "tally-draw-v2");
    assert!(proof["beacon"].is_null());
    assert_eq!(proof["eligible_count"], 35);

    // W4: the same body again gets the same winners; another body is refused.
    let again = app.post("/draws/fair/winners", &body).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body, drawn.body);
    let other = app.post("/draws/fair/winners", &json!({"prizes": 2})).await;
    assert_eq!(other.code(), "winners_drawn");
    // W5: a void after the freeze is recorded, and changes neither list nor winners.
    let loser = (0..8)
        .map(|i| format!("p{i}"))
        .find(|p| {
            p != "p3"
                && drawn.body["prizes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|w| w["payment_id"] != p.as_str())
        })
        .unwrap();
    let late_void = app
        .post(
            &format!("/draws/fair/purchases/{loser}/void"),
            &json!({"reason": "refund"}),
        )
        .await;
    assert_eq!(late_void.status, StatusCode::OK, "{}", late_void.body);
    let draw = app.get("/draws/fair").await.body;
    assert!(draw["drawn_at"].is_string());
    assert_eq!(
        (draw["voided"].as_u64(), draw["late_voided"].as_u64()),
        (Some(5), Some(5))
    );
    assert_eq!(draw["eligible_digest"], proof["eligible_digest"]);

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
    // The 5 late voids are counted; only a picked one among them is listed.
    let late = tickets_of(&late_void);
    assert_eq!(read.body["proof"]["late_voided"], 5);
    assert_eq!(
        late_void_tickets(&read.body),
        picked_among(&read.body, &late)
    );
    assert_eq!(read.body["proof"]["picks"][3]["reason"], reason["reason"]);

    // W3: both verifiers recompute the draw, redraw included, and reject tampering.
    let (winners, list) = (read.body.clone(), eligible.body.clone());
    assert_eq!(
        verifiers_accept("true", &winners, &list, Some(&draw), None),
        Verdicts::BOTH_PASS
    );
    // A proof kept from before the drawing time was recorded: without a beacon, nothing
    // needs it.
    let mut undated = winners.clone();
    undated["proof"].as_object_mut().unwrap().remove("drawn_at");
    assert_eq!(
        verifiers_accept("undated", &undated, &list, Some(&draw), None),
        Verdicts::BOTH_PASS
    );
    let mut seed_tampered = winners.clone();
    seed_tampered["proof"]["seed"] = json!(hex(&Sha256::digest(b"another seed")));
    assert_eq!(
        verifiers_accept("seed", &seed_tampered, &list, None, None),
        Verdicts::fail("commitment")
    );
    let mut list_tampered = list.clone();
    let mut bytes = bitmap.clone();
    let spare = (1..=200u64).find(|t| !listed.contains(t)).unwrap() - 1;
    bytes[(spare / 8) as usize] |= 1 << (spare % 8);
    list_tampered["bitmap"] = json!(STANDARD.encode(&bytes));
    assert_eq!(
        verifiers_accept("list", &winners, &list_tampered, None, None),
        Verdicts::fail("eligible")
    );
    // The list's own count and digest count too.
    let mut count_tampered = list.clone();
    count_tampered["eligible_count"] = json!(34);
    assert_eq!(
        verifiers_accept("count", &winners, &count_tampered, None, None),
        Verdicts::fail("eligible")
    );
    let mut winner_tampered = winners.clone();
    let other_ticket = listed.iter().find(|t| !after.contains(t)).unwrap();
    winner_tampered["proof"]["picks"][0]["ticket"] = json!(other_ticket);
    winner_tampered["prizes"][0]["ticket"] = json!(other_ticket);
    assert_eq!(
        verifiers_accept("winner", &winner_tampered, &list, None, None),
        Verdicts::fail("pick")
    );
}

#[tokio::test]
async fn a_beacon_names_a_known_network_until_the_close() {
    let app = spawn_app().await;
    let created = app
        .post("/draws", &json!({"draw_id": "b", "total_tickets": 10}))
        .await;
    assert!(created.body["beacon"].is_null());
    let set = app
        .patch("/draws/b", &json!({"beacon": {"network": "quicknet"}}))
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    let beacon = &set.body["beacon"];
    assert_eq!(beacon["network"], "quicknet");
    assert_eq!(beacon["scheme"], "bls-unchained-g1-rfc9380");
    assert_eq!(beacon["genesis_time"], 1_692_803_367);
    assert_eq!(beacon["period"], 3);
    // The round is fixed at the close, not before.
    assert!(beacon["round"].is_null());
    // The commitment never changes.
    assert_eq!(set.body["seed_commitment"], created.body["seed_commitment"]);
    let unknown = app
        .patch("/draws/b", &json!({"beacon": {"network": "elsewhere"}}))
        .await;
    assert_eq!(unknown.code(), "unknown_beacon_network", "{}", unknown.body);
    assert_eq!(unknown.body["known"], json!(["quicknet"]));
    // A free-text beacon is no beacon.
    for text in [
        json!("drand quicknet round 1"),
        json!({"network": "a b"}),
        json!(5),
    ] {
        let refused = app.patch("/draws/b", &json!({"beacon": text})).await;
        assert_eq!(refused.code(), "invalid_beacon", "{}", refused.body);
    }
    // Declared while the draw may sell, the beacon is fixed at once.
    let withdrawn = app.patch("/draws/b", &json!({"beacon": null})).await;
    assert_eq!(withdrawn.code(), "beacon_fixed", "{}", withdrawn.body);
    assert_eq!(
        app.patch("/draws/b", &json!({})).await.code(),
        "invalid_body"
    );
    // A draw without a beacon sells, closes and draws without one.
    app.create_draw(&json!({"draw_id": "nb", "total_tickets": 10}))
        .await;
    let bought = json!({"payment_id": "p", "quantity": 2});
    assert!(
        app.post("/draws/nb/purchases", &bought)
            .await
            .status
            .is_success()
    );
    let closed = app.post("/draws/nb/close", &json!({"prizes": 1})).await;
    assert_eq!(closed.status, StatusCode::OK);
    assert_eq!(closed.body["eligible_count"], 2);
    let late = app
        .patch("/draws/nb", &json!({"beacon": {"network": "quicknet"}}))
        .await;
    assert_eq!(late.code(), "draw_closed", "{}", late.body);
    let drawn = app.post("/draws/nb/winners", &json!({"prizes": 1})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    assert!(drawn.body["proof"]["beacon"].is_null());
    let eligible = app.get("/draws/nb/eligible").await;
    assert_eq!(
        verifiers_accept(
            "nobeacon",
            &drawn.body,
            &eligible.body,
            Some(&closed.body),
            None
        ),
        Verdicts::BOTH_PASS
    );
    let more = app.post("/draws/nb/winners", &json!({"prizes": 3})).await;
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
    // A draw that still sells is refused for that first, with or without a number.
    for body in [json!({}), json!({"prizes": 1})] {
        let open = app.post("/draws/few/winners", &body).await;
        assert_eq!(open.code(), "draw_open", "{}", open.body);
    }
    app.post(
        "/draws/few/purchases",
        &json!({"payment_id": "a", "quantity": 2}),
    )
    .await;
    // A close cannot fix more prizes than tickets are eligible; one without a number
    // leaves the winners to name it.
    let closing = app.post("/draws/few/close", &json!({"prizes": 3})).await;
    assert_eq!(closing.code(), "not_enough_eligible", "{}", closing.body);
    let closed = app.post("/draws/few/close", &json!({})).await;
    assert!(closed.body["prizes"].is_null(), "{}", closed.body);
    let refused = app.post("/draws/few/winners", &json!({})).await;
    assert_eq!(refused.code(), "invalid_prizes", "{}", refused.body);
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

#[tokio::test]
async fn a_draw_counting_fewer_voids_than_its_index_lists_answers_an_error_at_once() {
    let app = spawn_app().await;
    closed_draw(&app, "odds").await;
    // The index lists the 5 tickets voided; the draw is made to count 2.
    app.store
        .client()
        .update_item()
        .table_name(app.store.table())
        .key("pk", AttributeValue::S("DRAW#odds".into()))
        .update_expression("SET voided = :two")
        .expression_attribute_values(":two", AttributeValue::N("2".into()))
        .send()
        .await
        .unwrap();
    let started = Instant::now();
    let read = tokio::time::timeout(Duration::from_secs(20), app.get("/draws/odds/eligible"))
        .await
        .expect("the eligible list answers, not spins");
    assert_eq!(
        read.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        read.body
    );
    assert_eq!(read.code(), "internal_error");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
