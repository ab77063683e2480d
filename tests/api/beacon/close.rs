//! The close: it freezes the list and fixes a round published after it, and voids that race
//! it land once, before or after the freeze.

use super::*;
use tally_domain::winners::NetworkError;
use tally_testkit::verifiers::DrawFiles;

#[tokio::test]
async fn the_close_freezes_the_list_and_fixes_a_round_published_after_it() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    let closed = world.closed_draw("frozen", 2).await;
    // Frozen at the clock's GENESIS: round 5 is the first published more than 30 s later.
    assert_eq!(closed["eligible_count"], 36, "{closed}");
    assert_eq!(closed["beacon"]["round"], 5);
    assert_eq!(closed["beacon"]["network"], "test");
    assert_eq!(closed["beacon"]["scheme"], "pedersen-bls-unchained");
    assert_eq!(
        closed["beacon"]["round_published_at"],
        "2023-11-14T22:14:00.000Z"
    );
    let digest = closed["eligible_digest"].clone();
    assert_eq!(digest.as_str().unwrap().len(), 64);
    // Shown from the close on: the draw, the list of draws, the eligible list.
    let read = app.get("/draws/frozen").await.body;
    for field in ["eligible_digest", "eligible_count", "frozen_at", "beacon"] {
        assert_eq!(read[field], closed[field], "{field}");
    }
    let listed_draw = &app.get("/draws").await.body["draws"][0];
    assert_eq!(listed_draw["eligible_digest"], digest);
    let eligible = app.get("/draws/frozen/eligible").await.body;
    assert_eq!(eligible["eligible_digest"], digest);

    // A void after the close is recorded, and the list stays as frozen.
    world.set_clock(GENESIS * 1_000 + 5_000);
    let late = app
        .post(
            "/draws/frozen/purchases/p2/void",
            &json!({"reason": "chargeback"}),
        )
        .await;
    assert_eq!(late.status, StatusCode::OK, "{}", late.body);
    assert_eq!(late.body["status"], "void");
    let after = app.get("/draws/frozen").await.body;
    assert_eq!(
        (after["voided"].as_u64(), after["late_voided"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(after["eligible_digest"], digest);
    assert_eq!(after["beacon"]["round"], 5);
    assert_eq!(app.get("/draws/frozen/eligible").await.body, eligible);
    // Closing again changes nothing, and cannot change the number of prizes.
    let again = app.post("/draws/frozen/close", &json!({})).await.body;
    assert_eq!(
        (
            &again["eligible_digest"],
            &again["frozen_at"],
            &again["prizes"]
        ),
        (&digest, &closed["frozen_at"], &json!(2))
    );
    let more = app.post("/draws/frozen/close", &json!({"prizes": 3})).await;
    assert_eq!(more.code(), "prizes_fixed", "{}", more.body);
    assert_eq!(more.body["prizes"], 2);

    // The round's signature is required, and only once the round is published.
    let winners = |body: Value| async move { app.post("/draws/frozen/winners", &body).await };
    let unsigned = winners(json!({"prizes": 2})).await;
    assert_eq!(unsigned.code(), "beacon_signature_required");
    assert_eq!(unsigned.body["round"], 5);
    let early = winners(json!({"prizes": 2, "beacon_signature": signature(5)})).await;
    assert_eq!(early.code(), "beacon_not_published", "{}", early.body);
    assert_eq!(early.body["publishes_at"], "2023-11-14T22:14:00.000Z");
    world.set_clock(published_ms(5));
    // A round published before the freeze is refused, named or not.
    let before = winners(json!({"prizes": 2, "beacon_signature": signature(1)})).await;
    assert_eq!(before.code(), "invalid_beacon_signature", "{}", before.body);
    let named =
        winners(json!({"prizes": 2, "beacon_signature": signature(1), "beacon_round": 1})).await;
    assert_eq!(named.code(), "wrong_beacon_round", "{}", named.body);
    assert_eq!(named.body["round"], 5);
    // Another network's signature of the right round, and no signature at all.
    let foreign = fixture()["foreign_signatures"]["5"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = winners(json!({"prizes": 2, "beacon_signature": foreign})).await;
    assert_eq!(refused.code(), "invalid_beacon_signature");
    let garbage = winners(json!({"prizes": 2, "beacon_signature": "zz"})).await;
    assert_eq!(garbage.code(), "invalid_beacon_signature");
    let drawn =
        winners(json!({"prizes": 2, "beacon_signature": signature(5), "beacon_round": 5})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    assert!(
        !drawn.raw.contains("example.com"),
        "payer data in {}",
        drawn.raw
    );
    let proof = &drawn.body["proof"];
    assert_eq!(proof["beacon"]["round"], 5);
    assert_eq!(proof["beacon"]["signature"], signature(5).as_str());
    assert_eq!(proof["eligible_digest"], digest);
    // The 4 late voids are counted; a picked one among them is listed.
    let voided_late = crate::helpers::tickets_of(&late);
    assert_eq!(proof["late_voided"], 4);
    assert_eq!(
        crate::winners::late_void_tickets(&drawn.body),
        crate::winners::picked_among(&drawn.body, &voided_late)
    );
    let repeat = winners(json!({"prizes": 2, "beacon_signature": signature(5)})).await;
    assert_eq!((repeat.status, &repeat.body), (StatusCode::OK, &drawn.body));

    // The proof verifies in Rust and Python with the answer kept from the close; each
    // verifier refuses what it does not know or what was changed.
    let networks = networks_json();
    assert_eq!(
        verifiers_accept(
            "beacon",
            &drawn.body,
            &eligible,
            Some(&closed),
            Some(&networks)
        ),
        Verdicts::BOTH_PASS
    );
    assert_eq!(
        verifiers_accept("unknown", &drawn.body, &eligible, None, None),
        Verdicts::fail("network")
    );
    // Networks you add never replace quicknet: both verifiers refuse such a definition.
    let impostor = networks.replace(r#""name":"test""#, r#""name":"quicknet""#);
    assert_eq!(
        BeaconNetworks::with_json(Some(&impostor)),
        Err(NetworkError::Duplicate("quicknet".into()))
    );
    let files = DrawFiles::write("impostor", &drawn.body, &eligible, None, Some(&impostor));
    let python = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/verify-draw.py"
        ))
        .arg(&files.winners)
        .arg(&files.eligible)
        .args(files.options())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&python.stderr);
    assert_eq!(python.status.code(), Some(2), "{said}");
    assert!(said.contains("quicknet is built in"), "{said}");
    let mut moved = closed.clone();
    moved["eligible_digest"] = json!(hex::encode(&[0; 32]));
    assert_eq!(
        verifiers_accept(
            "moved",
            &drawn.body,
            &eligible,
            Some(&moved),
            Some(&networks)
        ),
        Verdicts::fail("frozen")
    );
    let mut forged = drawn.body.clone();
    forged["proof"]["beacon"]["signature"] = json!(fixture()["foreign_signatures"]["5"]);
    assert_eq!(
        verifiers_accept("forged", &forged, &eligible, None, Some(&networks)),
        Verdicts::fail("signature")
    );
    let mut early_round = drawn.body.clone();
    early_round["proof"]["beacon"]["round"] = json!(1);
    early_round["proof"]["beacon"]["signature"] = json!(signature(1));
    assert_eq!(
        verifiers_accept("early", &early_round, &eligible, None, Some(&networks)),
        Verdicts::fail("round")
    );
}

/// W5 and V1 under concurrency: voids race the close on several instances. Each void
/// lands once, either before the freeze (out of the list) or after it (a late void, still
/// in the list), never both; every close answers the same frozen list, and that list is
/// exactly the sold tickets less the voids before the freeze.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn voids_racing_the_close_land_once_before_or_after_the_freeze() {
    const PAYMENTS: usize = 60;
    let app = crate::helpers::spawn_app().await;
    let created = app
        .post("/draws", &json!({"draw_id": "race", "total_tickets": 400}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    for i in 0..PAYMENTS {
        let body = json!({"payment_id": format!("p{i}"), "quantity": 1 + i % 5,
                          "payer_id": format!("payer-{}", i % 7)});
        assert!(
            app.post("/draws/race/purchases", &body)
                .await
                .status
                .is_success()
        );
    }
    let mut tasks = Vec::new();
    for worker in 0..6usize {
        let store = crate::helpers::store_on(app.store.table(), None).await;
        let instance = crate::helpers::router(store);
        tasks.push(tokio::spawn(async move {
            let mut closes = Vec::new();
            // Workers void every other purchase between them; two of them also close.
            for i in (worker..PAYMENTS).step_by(6).filter(|i| i % 2 == 0) {
                let void = crate::helpers::settle(
                    &instance,
                    &format!("/draws/race/purchases/p{i}/void"),
                    &json!({"reason": "refund"}).to_string(),
                )
                .await;
                assert_eq!(void.status, StatusCode::OK, "{}", void.body);
                if worker < 2 && i % 3 == 0 {
                    closes.push(crate::helpers::settle(&instance, "/draws/race/close", "{}").await);
                }
            }
            closes
        }));
    }
    let mut closes = Vec::new();
    for task in tasks {
        closes.extend(task.await.unwrap());
    }
    closes.push(app.post("/draws/race/close", &json!({})).await);
    let frozen = &closes[0].body;
    for close in &closes {
        assert_eq!(close.status, StatusCode::OK, "{}", close.body);
        for field in ["eligible_digest", "eligible_count", "frozen_at"] {
            assert_eq!(close.body[field], frozen[field], "{field}");
        }
    }
    let items = app.scan().await;
    let voided = crate::invariants::voids_and_caps(&items, "race", u64::MAX);
    let sold: Vec<u64> = crate::invariants::sold_tickets(&items, 400)
        .into_values()
        .flatten()
        .collect();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for ticket in crate::helpers::of_kind(&items, "ticket") {
        let number = crate::helpers::attr_n(ticket, "number");
        match ticket
            .get("list_pk")
            .and_then(|v| v.as_s().ok())
            .map(String::as_str)
        {
            Some("DRAW#race#VOIDS") => before.push(number),
            Some("DRAW#race#LATE_VOIDS") => after.push(number),
            _ => assert!(
                !voided.contains(&number),
                "void ticket {number} is not listed"
            ),
        }
    }
    assert_eq!(before.len() + after.len(), voided.len());
    let eligible = app.get("/draws/race/eligible").await.body;
    assert_eq!(eligible["eligible_digest"], frozen["eligible_digest"]);
    let mut expected: Vec<u64> = sold.into_iter().filter(|t| !before.contains(t)).collect();
    expected.sort();
    assert_eq!(listed(&eligible).tickets().collect::<Vec<_>>(), expected);
    let draw = app.get("/draws/race").await.body;
    assert_eq!(
        (draw["voided"].as_u64(), draw["late_voided"].as_u64()),
        (Some(before.len() as u64), Some(after.len() as u64))
    );
}
