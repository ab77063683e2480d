//! W5: draws no insider can steer. The eligible list is frozen at the close and shown from
//! then on; a void after it is recorded and changes nothing; the beacon round is fixed by
//! Tally after the freeze and its value is a verified drand signature; a redraw is asked
//! for with its reason and picked with a round fixed then. The tests run a drand network
//! whose keys they hold (tests/fixtures/beacon.json, made with py_ecc) and set the
//! service's clock, so that a round is "published" when they say.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tally::api::{self, AppState};
use tally::tickets::TicketService;
use tally_domain::hex;
use tally_domain::ids::DrawId;
use tally_domain::winners::{BeaconNetworks, DrawInputs, EligibleSet, Picks};

use tally_testkit::beacon::{GENESIS, fixture, networks_json, published_ms, signature};

use crate::helpers::{TestApp, fresh_store, test_app};
use tally_testkit::verifiers::{Verdicts, verifiers_accept};

/// An API whose ticket service trusts the test network and reads a clock the test sets.
pub struct BeaconApp {
    pub app: TestApp,
    state: AppState,
    clock: Arc<AtomicI64>,
}

impl BeaconApp {
    pub async fn spawn() -> Self {
        let (store, table) = fresh_store(None).await;
        let clock = Arc::new(AtomicI64::new(GENESIS * 1_000));
        let read = clock.clone();
        let networks = BeaconNetworks::with_json(Some(&networks_json())).unwrap();
        let tickets = TicketService::new(store.clone())
            .with_networks(networks)
            .with_clock(Arc::new(move || {
                tally_domain::time::from_epoch_millis(read.load(Ordering::SeqCst)).unwrap()
            }));
        let state = AppState {
            tickets: Arc::new(tickets),
            request_timeout: Duration::from_secs(120),
            drawing_timeout: Duration::from_secs(120),
            ..AppState::new(store.clone())
        };
        Self {
            app: test_app(api::router(state.clone()), store, table),
            state,
            clock,
        }
    }

    /// Sets the service's clock to Unix milliseconds `at`.
    pub fn set_clock(&self, at: i64) {
        self.clock.store(at, Ordering::SeqCst);
    }

    /// A closed draw of `id` on the test network, with 10 instant prizes: 10 payments of
    /// 4 tickets from 5 payers, the second voided before the close. Returns the close's
    /// answer.
    pub async fn closed_draw(&self, id: &str) -> Value {
        let app = &self.app;
        let created = app
            .post(
                "/draws",
                &json!({"draw_id": id, "total_tickets": 100, "beacon": {"network": "test"},
                        "instant_wins": [{"prize": "voucher", "count": 10}]}),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        for i in 0..10 {
            let body = json!({"payment_id": format!("p{i}"), "quantity": 4,
                              "payer_id": format!("someone{}@example.com", i % 5)});
            let bought = app.post(&format!("/draws/{id}/purchases"), &body).await;
            assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
        }
        let void = app
            .post(
                &format!("/draws/{id}/purchases/p1/void"),
                &json!({"reason": "refund"}),
            )
            .await;
        assert_eq!(void.status, StatusCode::OK);
        let closed = app.post(&format!("/draws/{id}/close"), &json!({})).await;
        assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
        closed.body
    }
}

/// The tickets of a bitmap answer.
fn listed(eligible: &Value) -> EligibleSet {
    let bitmap = STANDARD
        .decode(eligible["bitmap"].as_str().unwrap())
        .unwrap();
    EligibleSet::from_bitmap(eligible["total_tickets"].as_u64().unwrap(), &bitmap).unwrap()
}

#[tokio::test]
async fn the_close_freezes_the_list_and_fixes_a_round_published_after_it() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    let closed = world.closed_draw("frozen").await;
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
    // Closing again changes nothing.
    let again = app.post("/draws/frozen/close", &json!({})).await.body;
    assert_eq!(
        (&again["eligible_digest"], &again["frozen_at"]),
        (&digest, &closed["frozen_at"])
    );

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
    assert_eq!(proof["late_voids"].as_array().unwrap().len(), 4);
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

/// The insider of the issue: they read the seed from the table, know the eligible list
/// and the beacon as soon as it is out, and try every API call after the close. Only a
/// public redraw with a reason changes a prize, and its pick needs a round fixed when it
/// is asked for.
#[tokio::test]
async fn an_insider_who_knows_the_seed_and_the_beacon_cannot_change_who_wins() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    let closed = world.closed_draw("insider").await;
    let round = closed["beacon"]["round"].as_u64().unwrap();
    let eligible = app.get("/draws/insider/eligible").await.body;
    // What the insider knows: the seed (from the table), the list, the beacon once out.
    let seed = *app
        .store
        .get_draw(&DrawId::parse("insider").unwrap())
        .await
        .unwrap()
        .unwrap()
        .seed
        .as_bytes();
    world.set_clock(published_ms(round) + 1);
    let randomness = Sha256::digest(hex::decode(&signature(round)).unwrap());
    let set = listed(&eligible);
    let inputs = DrawInputs {
        seed,
        digest: set.digest(),
    };
    let predicted = Picks::new(&set, inputs.clone()).take(3, &randomness);

    // Every lever after the close: voids (the predicted first winner's purchase too),
    // purchases, a new beacon, closes, other signatures, reads.
    let holder = app
        .get(&format!("/draws/insider/tickets/{}", predicted[0].1))
        .await
        .body["payment_id"]
        .as_str()
        .unwrap()
        .to_owned();
    for payment in [holder.as_str(), "p3", "p7"] {
        let void = app
            .post(
                &format!("/draws/insider/purchases/{payment}/void"),
                &json!({"reason": "refund"}),
            )
            .await;
        assert_eq!(void.status, StatusCode::OK, "{}", void.body);
    }
    let bought = app
        .post(
            "/draws/insider/purchases",
            &json!({"payment_id": "late", "quantity": 2}),
        )
        .await;
    assert_eq!(bought.code(), "draw_closed");
    let beacon = app.patch("/draws/insider", &json!({"beacon": null})).await;
    assert_eq!(beacon.code(), "draw_closed");
    assert_eq!(
        app.post("/draws/insider/close", &json!({})).await.body["eligible_digest"],
        closed["eligible_digest"]
    );
    for other in [signature(round - 1), signature(round + 1)] {
        let refused = app
            .post(
                "/draws/insider/winners",
                &json!({"prizes": 3, "beacon_signature": other}),
            )
            .await;
        assert_eq!(refused.code(), "invalid_beacon_signature");
    }
    assert_eq!(app.get("/draws/insider/eligible").await.body, eligible);

    let drawn = app
        .post(
            "/draws/insider/winners",
            &json!({"prizes": 3, "beacon_signature": signature(round)}),
        )
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    assert_eq!(
        crate::winners::winning_tickets(&drawn),
        predicted.iter().map(|p| p.1).collect::<Vec<_>>(),
        "a call after the close changed who wins"
    );
    // The voided winner is flagged, in the open.
    assert_eq!(drawn.body["prizes"][0]["voided"], true);
    let late: Vec<u64> = drawn.body["proof"]["late_voids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["ticket"].as_u64().unwrap())
        .collect();
    assert!(late.contains(&predicted[0].1));

    // The one lever left: a public redraw with a reason. Asked for now, its round is
    // the first published more than 30 s later; nobody knows the replacement yet.
    let asked_at = published_ms(round) + 2_000;
    world.set_clock(asked_at);
    let reason = json!({"reason": "the winning purchase was charged back"});
    let asked = app.post("/draws/insider/winners/1/redraw", &reason).await;
    assert_eq!(asked.status, StatusCode::ACCEPTED, "{}", asked.body);
    let pending = &asked.body["pending_redraw"];
    let redraw_round = pending["beacon_round"].as_u64().unwrap();
    assert_eq!(redraw_round, round + 4);
    assert_eq!(asked.body["prizes"][0]["ticket"], predicted[0].1);
    // Asking again is a repeat; another redraw waits its turn.
    let repeat = app.post("/draws/insider/winners/1/redraw", &reason).await;
    assert_eq!((repeat.status, &repeat.body), (StatusCode::OK, &asked.body));
    let other = app
        .post("/draws/insider/winners/2/redraw", &json!({"reason": "x"}))
        .await;
    assert_eq!(other.code(), "redraw_pending");
    assert_eq!(other.body["prize"], 1);
    // Its round, not the draw's, and only once published.
    let signed =
        |round: u64| json!({"reason": reason["reason"], "beacon_signature": signature(round)});
    let early = app
        .post("/draws/insider/winners/1/redraw", &signed(redraw_round))
        .await;
    assert_eq!(early.code(), "beacon_not_published");
    world.set_clock(published_ms(redraw_round));
    let stale = app
        .post("/draws/insider/winners/1/redraw", &signed(round))
        .await;
    assert_eq!(stale.code(), "invalid_beacon_signature");
    let redrawn = app
        .post("/draws/insider/winners/1/redraw", &signed(redraw_round))
        .await;
    assert_eq!(redrawn.status, StatusCode::CREATED, "{}", redrawn.body);
    assert!(redrawn.body["pending_redraw"].is_null());
    let picked: Vec<u64> = predicted.iter().map(|p| p.1).collect();
    let mut after = Picks::after(&set, inputs, &picked).unwrap();
    let replacement = after
        .pick(&Sha256::digest(
            hex::decode(&signature(redraw_round)).unwrap(),
        ))
        .unwrap();
    assert_eq!(redrawn.body["prizes"][0]["ticket"], replacement.1);
    let pick = &redrawn.body["proof"]["picks"][3];
    assert_eq!(pick["beacon_round"], redraw_round);
    assert_eq!(pick["reason"], reason["reason"]);
    assert_eq!(app.get("/draws/insider/winners").await.body, redrawn.body);
    assert_eq!(
        verifiers_accept(
            "insider",
            &redrawn.body,
            &eligible,
            Some(&closed),
            Some(&networks_json())
        ),
        Verdicts::BOTH_PASS
    );
    // A redraw pick moved to another ticket is caught.
    let mut walked = redrawn.body.clone();
    let other_ticket = set
        .tickets()
        .find(|t| !picked.contains(t) && *t != replacement.1);
    walked["proof"]["picks"][3]["ticket"] = json!(other_ticket);
    walked["prizes"][0]["ticket"] = json!(other_ticket);
    assert_eq!(
        verifiers_accept("walked", &walked, &eligible, None, Some(&networks_json())),
        Verdicts::fail("pick")
    );
    let items = app.scan().await;
    crate::invariants::voids_and_caps(&items, "insider", u64::MAX);
}

/// quicknet itself, with a round drand published: the service's clock is set so that
/// round 657413 is the one the close fixes.
#[tokio::test]
async fn a_real_quicknet_round_is_verified_by_the_service_and_both_verifiers() {
    const ROUND: u64 = 657_413;
    const SIGNATURE: &str = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b";
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    let published = (1_692_803_367 + (ROUND as i64 - 1) * 3) * 1_000;
    world.set_clock(published - 30_000 - 1);
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "qn", "total_tickets": 50, "beacon": {"network": "quicknet"}}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let bought = app
        .post(
            "/draws/qn/purchases",
            &json!({"payment_id": "a", "quantity": 7}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED);
    let closed = app.post("/draws/qn/close", &json!({})).await.body;
    assert_eq!(closed["beacon"]["round"], ROUND, "{closed}");
    world.set_clock(published);
    let drawn = app
        .post(
            "/draws/qn/winners",
            &json!({"prizes": 2, "beacon_signature": SIGNATURE}),
        )
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let eligible = app.get("/draws/qn/eligible").await.body;
    assert_eq!(
        verifiers_accept("quicknet", &drawn.body, &eligible, Some(&closed), None),
        Verdicts::BOTH_PASS
    );
}

/// The browser verifier in headless Chromium (web/test/verify-page.mjs), on a draw drawn
/// here and served by the local server as `tally serve` serves it, with `/verify`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_page_passes_a_true_draw_and_turns_red_at_the_tampered_step() {
    let root = env!("CARGO_MANIFEST_DIR");
    let page = format!("{root}/target/verify-page/verify.html");
    assert!(
        std::path::Path::new(&page).exists(),
        "{page} is missing: run scripts/verify-page.sh (make test does)"
    );
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    let closed = world.closed_draw("browser").await;
    world.set_clock(published_ms(5));
    let drawn = app
        .post(
            "/draws/browser/winners",
            &json!({"prizes": 3, "beacon_signature": signature(5)}),
        )
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let eligible = app.get("/draws/browser/eligible").await.body;

    let dir = std::env::temp_dir().join(format!("tally-browser-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, value: &Value| {
        std::fs::write(dir.join(name), value.to_string()).unwrap();
    };
    write("winners.json", &drawn.body);
    write("eligible.json", &eligible);
    write("draw.json", &closed);
    std::fs::write(dir.join("networks.json"), networks_json()).unwrap();
    let mut seed = drawn.body.clone();
    seed["proof"]["seed"] = json!(hex::encode(&[1; 32]));
    write("winners-seed.json", &seed);
    let set = listed(&eligible);
    let mut winner = drawn.body.clone();
    let other = set
        .tickets()
        .find(|t| json!(t) != drawn.body["prizes"][0]["ticket"])
        .unwrap();
    winner["proof"]["picks"][0]["ticket"] = json!(other);
    winner["prizes"][0]["ticket"] = json!(other);
    write("winners-winner.json", &winner);
    let mut moved = drawn.body.clone();
    let first = moved["proof"]["instant_wins"]["map"][0]["ticket"]
        .as_u64()
        .unwrap();
    moved["proof"]["instant_wins"]["map"][0]["ticket"] = json!(first % 100 + 1);
    write("winners-instant.json", &moved);
    let mut list = eligible.clone();
    let mut bitmap = set.to_bitmap();
    bitmap[0] ^= 1;
    list["bitmap"] = json!(STANDARD.encode(&bitmap));
    write("eligible-list.json", &list);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(api::local_server::serve(
        listener,
        api::local_router(world.state.clone(), page.clone()),
        async {
            stopped.await.ok();
        },
        api::local_server::DEFAULT_HEADER_READ_TIMEOUT,
    ));
    let (files, page) = (dir.clone(), page.clone());
    // The server answers on this runtime while node waits on another thread.
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new("node")
            .arg(format!("{root}/web/test/verify-page.mjs"))
            .arg(format!("http://{address}"))
            .arg("browser")
            .arg(&files)
            .arg(&page)
            .output()
            .expect("node runs (make test installs Node.js packages and Chromium)")
    })
    .await
    .unwrap();
    stop.send(()).ok();
    server.await.unwrap().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let said = String::from_utf8_lossy(&output.stdout);
    println!("{said}");
    assert!(
        output.status.success() && said.contains(" 0 failed"),
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
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
