//! Instant prizes won by purchases: at once and once, by 64 buyers, under faults.

use super::*;

async fn create(app: &TestApp, body: Value) -> Value {
    let created = app.create_draw(&body).await;
    created.body
}

#[tokio::test]
async fn a_winning_number_wins_at_once_once_and_a_void_voids_its_prize() {
    let app = spawn_app().await;
    let draw = create(
        &app,
        json!({"draw_id": "iw", "total_tickets": 100, "instant_wins":
            [{"prize": "£50 voucher", "count": 3}, {"prize": "car", "count": 1}]}),
    )
    .await;
    // I2: the draw shows its prizes and a commitment, never the numbers.
    assert_eq!(
        draw["instant_wins"]["prizes"],
        json!([{"prize": "£50 voucher", "count": 3}, {"prize": "car", "count": 1}])
    );
    let commitment = draw["instant_wins"]["commitment"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(commitment.len(), 64);
    let map = insider_map(&app.store, "iw").await;
    assert_eq!(map.len(), 4);
    let winners: Vec<u64> = map.keys().copied().collect();
    let loser = (1..=100).find(|t| !map.contains_key(t)).unwrap();
    // A chosen winning number wins at once; a replay answers the same.
    let body = json!({"payment_id": "w1", "numbers": [winners[0], loser]});
    let bought = app.post("/draws/iw/purchases", &body).await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let expected = BTreeMap::from([(winners[0], map[&winners[0]].clone())]);
    assert_eq!(wins_of(&bought.body, "instant_wins"), expected);
    let replay = app.post("/draws/iw/purchases", &body).await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(wins_of(&replay.body, "instant_wins"), expected);
    // A sold number is refused, winning or not: no prize twice.
    let plain = app
        .post(
            "/draws/iw/purchases",
            &json!({"payment_id": "p1", "numbers": [loser]}),
        )
        .await;
    assert_eq!(plain.code(), "numbers_taken");
    let taken = app
        .post(
            "/draws/iw/purchases",
            &json!({"payment_id": "p2", "numbers": [winners[0]]}),
        )
        .await;
    assert_eq!(taken.code(), "numbers_taken");
    // Won so far: the prize, its purchase, no other winning number.
    let won = app.get("/draws/iw/instant-wins").await;
    assert_eq!(won.status, StatusCode::OK, "{}", won.body);
    assert_eq!(wins_of(&won.body, "won"), expected);
    assert_eq!(won.body["won"][0]["payment_id"], "w1");
    assert_eq!(won.body["won"][0]["status"], "active");
    assert!(
        won.body["proof"].is_null(),
        "the map is shown before the winners"
    );
    // A void marks the prize void in the same transaction; the number is never sold again.
    let second = app
        .post(
            "/draws/iw/purchases",
            &json!({"payment_id": "w2", "numbers": [winners[1], winners[2]]}),
        )
        .await;
    assert_eq!(wins_of(&second.body, "instant_wins").len(), 2);
    let voided = app
        .post("/draws/iw/purchases/w2/void", &json!({"reason": "refund"}))
        .await;
    assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    let awards = stored_awards(&app.scan().await);
    assert_eq!(awards[&winners[1]], ("w2".to_owned(), "void".to_owned()));
    assert_eq!(awards[&winners[2]], ("w2".to_owned(), "void".to_owned()));
    assert_eq!(awards[&winners[0]].1, "active");
    // A free entry by post wins like a paid one.
    let postal = app
        .post(
            "/draws/iw/purchases",
            &json!({"payment_id": "post", "numbers": [winners[3]], "channel": "postal"}),
        )
        .await;
    assert_eq!(postal.status, StatusCode::CREATED, "{}", postal.body);
    assert_eq!(
        wins_of(&postal.body, "instant_wins"),
        BTreeMap::from([(winners[3], map[&winners[3]].clone())])
    );
    // A draw without instant wins has none to show; bad entries are refused.
    create(&app, json!({"draw_id": "plain", "total_tickets": 10})).await;
    assert_eq!(
        app.get("/draws/plain/instant-wins").await.code(),
        "no_instant_wins"
    );
    for entries in [
        json!([{"prize": "a", "count": 0}]),
        json!([{"prize": "a", "count": 1}, {"prize": "a", "count": 1}]),
        json!([{"prize": "a", "count": 11}]),
        json!([{"prize": "", "count": 1}]),
    ] {
        let refused = app
            .post(
                "/draws",
                &json!({"total_tickets": 10, "instant_wins": entries}),
            )
            .await;
        assert_eq!(refused.code(), "invalid_instant_wins", "{entries}");
    }
    // I3: after the winners, the map and its key are public and both verifiers check them.
    app.post("/draws/iw/close", &json!({"prizes": 1})).await;
    let kept = app.get("/draws/iw").await.body;
    assert_eq!(kept["instant_wins"]["commitment"], commitment.as_str());
    let drawn = app.post("/draws/iw/winners", &json!({"prizes": 1})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let proof = app.get("/draws/iw/instant-wins").await.body["proof"].clone();
    assert_eq!(proof["commitment"], commitment.as_str());
    let published: BTreeMap<u64, String> = wins_of(&proof, "map");
    assert_eq!(published, map);
    let winners_body = app.get("/draws/iw/winners").await.body;
    let eligible = app.get("/draws/iw/eligible").await.body;
    assert_eq!(
        verifiers_accept("instant", &winners_body, &eligible, Some(&kept), None),
        Verdicts::BOTH_PASS
    );
    // A map moved after the fact fails both verifiers at the `instant` step.
    let mut moved = winners_body.clone();
    moved["proof"]["instant_wins"]["map"][0]["ticket"] = json!(loser);
    assert_eq!(
        verifiers_accept("instant-moved", &moved, &eligible, Some(&kept), None),
        Verdicts::fail("instant")
    );
    let mut other = kept.clone();
    other["instant_wins"]["commitment"] = json!("00".repeat(32));
    assert_eq!(
        verifiers_accept(
            "instant-other",
            &winners_body,
            &eligible,
            Some(&other),
            None
        ),
        Verdicts::fail("instant")
    );
}

/// I1, I2, I3 under a race: 64 buyers sell out 2,000 numbers carrying 50 instant prizes,
/// half of them choosing from a hot set of 120 numbers that holds 20 winning ones, the
/// rest by lucky dip. Every prize goes exactly once to the buyer of its number, each
/// purchase learns its own prizes and no others, and both verifiers recompute the map.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_buyers_win_every_instant_prize_exactly_once() {
    const TOTAL: u64 = 2_000;
    const CLIENTS: usize = 64;
    let app = spawn_app().await;
    let created = create(
        &app,
        json!({"draw_id": "race", "total_tickets": TOTAL, "max_per_purchase": 10,
               "instant_wins": [{"prize": "car", "count": 2}, {"prize": "voucher", "count": 48}]}),
    )
    .await;
    let map = insider_map(&app.store, "race").await;
    assert_eq!(map.len(), 50);
    // The hot set: 20 winning numbers and 100 losing ones.
    let hot: Vec<u64> = map
        .keys()
        .copied()
        .take(20)
        .chain((1..=TOTAL).filter(|t| !map.contains_key(t)).take(100))
        .collect();
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let router = crate::helpers::router(store_on(app.store.table(), None).await);
        let hot = hot.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(client as u64);
            let mut answers = Vec::new();
            for n in 0.. {
                let payment = format!("c{client}-{n}");
                let body = if client % 2 == 0 && n < 8 {
                    let picked: BTreeSet<u64> = (0..rng.random_range(1..=3))
                        .map(|_| hot[rng.random_range(0..hot.len())])
                        .collect();
                    json!({"payment_id": payment, "numbers": picked})
                } else {
                    json!({"payment_id": payment, "quantity": rng.random_range(1..=10)})
                };
                let reply = settle(&router, "/draws/race/purchases", &body.to_string()).await;
                let done = reply.code() == "sold_out" && body["quantity"].is_u64();
                answers.push((payment, reply.status, reply.code().to_owned(), reply.body));
                if done {
                    break;
                }
            }
            answers
        }));
    }
    let mut sold: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut answered: BTreeMap<u64, String> = BTreeMap::new();
    for task in tasks {
        for (payment, status, code, body) in task.await.unwrap() {
            match (status, code.as_str()) {
                (StatusCode::CREATED, _) => {
                    let tickets: Vec<u64> = body["tickets"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t.as_u64().unwrap())
                        .collect();
                    // Each purchase learns exactly its own prizes (I1), no other (I2).
                    let own = own_wins(&tickets, &map);
                    assert_eq!(wins_of(&body, "instant_wins"), own, "{payment}");
                    answered.extend(own);
                    sold.insert(payment, tickets);
                }
                (StatusCode::CONFLICT, "numbers_taken" | "sold_out" | "tickets_fragmented") => {}
                (status, code) => panic!("{payment}: {status} {code} {body}"),
            }
        }
    }
    // The last numbers, if fragmentation left some, one at a time.
    for n in 0.. {
        let body = json!({"payment_id": format!("rest-{n}"), "quantity": 1});
        let reply = settle(&app.router, "/draws/race/purchases", &body.to_string()).await;
        if reply.code() == "sold_out" {
            break;
        }
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        let tickets = tickets_of(&reply);
        answered.extend(wins_of(&reply.body, "instant_wins"));
        sold.insert(format!("rest-{n}"), tickets);
    }
    let items = app.scan().await;
    assert_eq!(sold_tickets(&items, TOTAL), sold);
    assert_eq!(sold.values().map(Vec::len).sum::<usize>() as u64, TOTAL);
    // Sold out: every prize was answered once and is stored once, to its buyer.
    assert_eq!(answered, map, "I1: every prize answered to its buyer");
    assert_awards_follow_sales(&items, &map, &sold);
    assert_eq!(stored_awards(&items).len(), 50);
    let won = app.get("/draws/race/instant-wins").await.body;
    assert_eq!(wins_of(&won, "won"), map);
    // I3: both verifiers recompute the map and every award after the winners.
    app.post("/draws/race/close", &json!({"prizes": 3})).await;
    let kept = app.get("/draws/race").await.body;
    assert_eq!(kept["instant_wins"], created["instant_wins"]);
    let drawn = app.post("/draws/race/winners", &json!({"prizes": 3})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let winners = app.get("/draws/race/winners").await.body;
    let eligible = app.get("/draws/race/eligible").await.body;
    assert_eq!(bitmap_tickets(&eligible).len() as u64, TOTAL);
    assert_eq!(
        verifiers_accept("instant-race", &winners, &eligible, Some(&kept), None),
        Verdicts::BOTH_PASS
    );
}

/// The hot set of the fault test: winning and losing numbers, fixed once the draw exists.
static FAULT_HOT: OnceLock<Vec<u64>> = OnceLock::new();

/// The same under faults: choosers of a hot set holding winning numbers and lucky dips
/// through a proxy that throttles, fails, and loses answers after commits; each payment
/// sent by two instances, repeating 503s. Both twins answer the same prizes, and the table
/// holds each prize exactly once, with its buyer.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn instant_prizes_under_faults_are_awarded_exactly_once() {
    const TOTAL: u64 = 300;
    const PAYMENTS: usize = 120;
    let app = spawn_app().await;
    let created = create(
        &app,
        json!({"draw_id": "faulty", "total_tickets": TOTAL, "max_per_purchase": 5,
               "instant_wins": [{"prize": "voucher", "count": 30}]}),
    )
    .await;
    let map = insider_map(&app.store, "faulty").await;
    let hot: Vec<u64> = map
        .keys()
        .copied()
        .take(15)
        .chain((1..=TOTAL).filter(|t| !map.contains_key(t)).take(45))
        .collect();
    FAULT_HOT.set(hot).unwrap();
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.04));
    let replies = twin_payments(
        &proxy,
        app.store.table(),
        "/draws/faulty/purchases",
        PAYMENTS,
        |i| {
            let payment = format!("pay-{i}");
            if i % 2 == 0 {
                let hot = FAULT_HOT.get().unwrap();
                let mut rng = StdRng::seed_from_u64(i as u64);
                let picked: BTreeSet<u64> = (0..1 + i % 3)
                    .map(|_| hot[rng.random_range(0..hot.len())])
                    .collect();
                json!({"payment_id": payment, "numbers": picked})
            } else {
                json!({"payment_id": payment, "quantity": 1 + i % 5})
            }
        },
    )
    .await;
    let mut sold = BTreeMap::new();
    for (payment, replies) in &replies {
        for reply in replies {
            assert!(
                reply.status.is_success() || ["numbers_taken", "sold_out"].contains(&reply.code()),
                "{payment}: {} {}",
                reply.status,
                reply.body
            );
        }
        if replies[0].status.is_success() {
            let tickets = tickets_of(&replies[0]);
            assert_eq!(
                tickets,
                tickets_of(&replies[1]),
                "{payment}: the twins differ"
            );
            let own = own_wins(&tickets, &map);
            for reply in replies {
                assert_eq!(wins_of(&reply.body, "instant_wins"), own, "{payment}");
            }
            sold.insert(payment.clone(), tickets);
        }
    }
    proxy.set(Default::default());
    // Sell out the rest without faults, then check the table.
    for n in 0.. {
        let body = json!({"payment_id": format!("rest-{n}"), "quantity": 1});
        let reply = settle(&app.router, "/draws/faulty/purchases", &body.to_string()).await;
        if reply.code() == "sold_out" {
            break;
        }
        sold.insert(format!("rest-{n}"), tickets_of(&reply));
    }
    let items = app.scan().await;
    assert_eq!(sold_tickets(&items, TOTAL), sold);
    assert_awards_follow_sales(&items, &map, &sold);
    assert_eq!(stored_awards(&items).len(), map.len());
    app.post("/draws/faulty/close", &json!({"prizes": 1})).await;
    let kept = app.get("/draws/faulty").await.body;
    assert_eq!(kept["instant_wins"], created["instant_wins"]);
    app.post("/draws/faulty/winners", &json!({"prizes": 1}))
        .await;
    let winners = app.get("/draws/faulty/winners").await.body;
    let eligible = app.get("/draws/faulty/eligible").await.body;
    assert_eq!(
        verifiers_accept("instant-faults", &winners, &eligible, Some(&kept), None),
        Verdicts::BOTH_PASS
    );
}
