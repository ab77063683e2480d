//! The winners' proof: an insider cannot change who wins, a real quicknet round verifies,
//! and the browser page turns red at the step that was tampered with.

use super::*;

/// The insider of the issue: they read the seed from the table, know the eligible list
/// and the beacon as soon as it is out, and try every API call after the close. The close
/// fixed the number of prizes; only a public redraw with a reason changes a prize, and its
/// pick needs a round fixed when it is asked for. Proofs that say otherwise fail.
#[tokio::test]
async fn an_insider_who_knows_the_seed_and_the_beacon_cannot_change_who_wins() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    let closed = world.closed_draw("insider", 3).await;
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
    // Another number of prizes than the close fixed: one more to take in a friend's
    // pick, one fewer to leave out a rival's.
    for prizes in [4, 2] {
        let refused = app
            .post(
                "/draws/insider/winners",
                &json!({"prizes": prizes, "beacon_signature": signature(round)}),
            )
            .await;
        assert_eq!(refused.code(), "prizes_fixed", "{}", refused.body);
        assert_eq!(refused.body["prizes"], 3);
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
    let late = crate::winners::late_void_tickets(&drawn.body);
    assert!(late.contains(&predicted[0].1));
    // Only picked tickets are listed; every late void is counted.
    assert!(
        late.iter().all(|t| predicted.iter().any(|p| p.1 == *t)),
        "{late:?}"
    );
    assert_eq!(
        drawn.body["proof"]["late_voided"],
        app.get("/draws/insider").await.body["late_voided"]
    );
    // A proof of fewer prizes than the close fixed fails against the kept answer.
    let mut fewer = drawn.body.clone();
    fewer["proof"]["prizes"] = json!(2);
    fewer["proof"]["picks"].as_array_mut().unwrap().truncate(2);
    fewer["prizes"].as_array_mut().unwrap().truncate(2);
    assert_eq!(
        verifiers_accept(
            "fewer",
            &fewer,
            &eligible,
            Some(&closed),
            Some(&networks_json())
        ),
        Verdicts::fail("frozen")
    );

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
    // Left pending, the redraw keeps the winners from being final.
    assert_eq!(
        verifiers_accept(
            "pending",
            &asked.body,
            &eligible,
            Some(&closed),
            Some(&networks_json())
        ),
        Verdicts::fail("pending")
    );
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
    let replacing = |round: u64| {
        Picks::after(&set, inputs.clone(), &picked)
            .unwrap()
            .pick(&Sha256::digest(hex::decode(&signature(round)).unwrap()))
            .unwrap()
    };
    let replacement = replacing(redraw_round);
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
    // A redraw without its request time, on a round of the proof writer's choosing whose
    // pick it recomputes correctly.
    let chosen_round = redraw_round + 1;
    let chosen = replacing(chosen_round);
    let mut unasked = redrawn.body.clone();
    let pick = &mut unasked["proof"]["picks"][3];
    pick.as_object_mut().unwrap().remove("requested_at");
    pick["beacon_round"] = json!(chosen_round);
    pick["beacon_signature"] = json!(signature(chosen_round));
    pick["ticket"] = json!(chosen.1);
    unasked["prizes"][0]["ticket"] = json!(chosen.1);
    assert_eq!(
        verifiers_accept(
            "unasked",
            &unasked,
            &eligible,
            Some(&closed),
            Some(&networks_json())
        ),
        Verdicts::fail("round")
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
    let closed = app
        .post("/draws/qn/close", &json!({"prizes": 2}))
        .await
        .body;
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
    let closed = world.closed_draw("browser", 3).await;
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
