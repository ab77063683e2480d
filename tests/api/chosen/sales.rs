//! Chosen numbers sold all or nothing, once a payment, also under faults (N1).

use super::*;

#[tokio::test]
async fn chosen_numbers_are_sold_all_or_nothing_once_per_payment() {
    let app = spawn_app().await;
    create(&app, json!({"draw_id": "pick", "total_tickets": 100})).await;
    let bought = app
        .post(
            "/draws/pick/purchases",
            &json!({"payment_id": "p1", "numbers": [77, 7]}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    assert_eq!(tickets_of(&bought), vec![7, 77]);
    assert_eq!(
        (
            bought.body["quantity"].as_u64(),
            bought.body["chosen"].as_bool()
        ),
        (Some(2), Some(true))
    );
    // T4: the same body (in any order) replays; another body under the id is refused.
    let replay = app
        .post(
            "/draws/pick/purchases",
            &json!({"payment_id": "p1", "numbers": [7, 77]}),
        )
        .await;
    assert_eq!(
        (replay.status, tickets_of(&replay)),
        (StatusCode::OK, vec![7, 77])
    );
    let other_body = app
        .post(
            "/draws/pick/purchases",
            &json!({"payment_id": "p1", "numbers": [7, 78]}),
        )
        .await;
    assert_eq!(other_body.code(), "idempotency_conflict");
    let dip_body = app
        .post(
            "/draws/pick/purchases",
            &json!({"payment_id": "p1", "quantity": 2}),
        )
        .await;
    assert_eq!(dip_body.code(), "idempotency_conflict");
    // All or nothing: one sold number refuses the whole purchase, and names it.
    let clash = app
        .post(
            "/draws/pick/purchases",
            &json!({"payment_id": "p2", "numbers": [78, 77, 79]}),
        )
        .await;
    assert_eq!(clash.status, StatusCode::CONFLICT);
    assert_eq!(
        (clash.code(), &clash.body["numbers"]),
        ("numbers_taken", &json!([77]))
    );
    let free = app
        .post(
            "/draws/pick/purchases",
            &json!({"payment_id": "p3", "numbers": [78, 79]}),
        )
        .await;
    assert_eq!(free.status, StatusCode::CREATED, "{}", free.body);
    for (body, code) in [
        (
            json!({"payment_id": "b1", "numbers": [0]}),
            "invalid_numbers",
        ),
        (
            json!({"payment_id": "b2", "numbers": [101]}),
            "invalid_numbers",
        ),
        (
            json!({"payment_id": "b3", "numbers": [5, 5]}),
            "invalid_numbers",
        ),
        (
            json!({"payment_id": "b4", "numbers": [5], "quantity": 1}),
            "invalid_numbers",
        ),
        (
            json!({"payment_id": "b5", "numbers": []}),
            "invalid_numbers",
        ),
        (json!({"payment_id": "b6"}), "invalid_quantity"),
        (
            json!({"payment_id": "b7", "numbers": (1..=21).collect::<Vec<u64>>()}),
            "invalid_numbers",
        ),
    ] {
        let refused = app.post("/draws/pick/purchases", &body).await;
        assert_eq!(
            (refused.status, refused.code()),
            (StatusCode::BAD_REQUEST, code),
            "{body}"
        );
    }
    let draw = app.get("/draws/pick").await.body;
    assert_eq!(
        (draw["sold"].as_u64(), draw["remaining"].as_u64()),
        (Some(4), Some(96))
    );
    // A lucky dip never gets a chosen number, and the eligible list has them all.
    let dip = app
        .post(
            "/draws/pick/purchases",
            &json!({"payment_id": "d1", "quantity": 20}),
        )
        .await;
    let dipped: BTreeSet<u64> = tickets_of(&dip).into_iter().collect();
    assert!(
        dipped.is_disjoint(&BTreeSet::from([7, 77, 78, 79])),
        "{dipped:?}"
    );
    // N2: the grid, read strongly consistent, shows exactly the unsold numbers free.
    let grid = app.get("/draws/pick/availability").await;
    assert_eq!(grid.status, StatusCode::OK, "{}", grid.body);
    let sold: BTreeSet<u64> = dipped.iter().copied().chain([7, 77, 78, 79]).collect();
    let free: Vec<u64> = (1..=100).filter(|n| !sold.contains(n)).collect();
    let shown = bitmap_tickets(&json!({"bitmap": grid.body["bitmap"], "total_tickets": 100}));
    assert_eq!(shown, free);
    assert_eq!(
        (
            grid.body["free"].as_u64(),
            grid.body["held"].as_u64(),
            grid.body["sold"].as_u64()
        ),
        (Some(76), Some(0), Some(24))
    );
    app.post("/draws/pick/close", &json!({})).await;
    let eligible = app.get("/draws/pick/eligible").await.body;
    let expected: Vec<u64> = dipped
        .iter()
        .copied()
        .chain([7, 77, 78, 79])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(bitmap_tickets(&eligible), expected);
}

/// The same under faults: choosers and lucky dips through a proxy that throttles, fails,
/// and loses answers after commits; every payment is sent by two instances and repeated
/// on 503. Both twins get the same answer, and the table holds exactly what was answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn choosers_under_faults_settle_every_payment_exactly_once() {
    const TOTAL: u64 = 300;
    const PAYMENTS: usize = 120;
    let app = spawn_app().await;
    create(
        &app,
        json!({"draw_id": "faulty", "total_tickets": TOTAL, "max_per_purchase": 5}),
    )
    .await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.04));
    // Even payments choose from a hot set of 60 numbers, odd ones dip.
    let replies = twin_payments(
        &proxy,
        app.store.table(),
        "/draws/faulty/purchases",
        PAYMENTS,
        |i| {
            let payment = format!("pay-{i}");
            if i % 2 == 0 {
                let mut rng = StdRng::seed_from_u64(i as u64);
                let picked: BTreeSet<u64> =
                    (0..1 + i % 3).map(|_| rng.random_range(1..=60)).collect();
                json!({"payment_id": payment, "numbers": picked})
            } else {
                json!({"payment_id": payment, "quantity": 1 + i % 5})
            }
        },
    )
    .await;
    let answers: BTreeMap<String, Vec<Answer>> = replies
        .into_iter()
        .map(|(payment, replies)| {
            let answers = replies
                .iter()
                .map(|r| {
                    (
                        r.status,
                        r.code().to_owned(),
                        r.status.is_success().then(|| tickets_of(r)),
                    )
                })
                .collect();
            (payment, answers)
        })
        .collect();
    let counts = proxy.counts();
    assert!(
        counts.throttled > 0 && counts.errors_after > 0 && counts.lost_after > 0,
        "not every fault happened: {counts:?}"
    );
    let mut sold = BTreeMap::new();
    for (payment, replies) in &answers {
        for (status, code, _) in replies {
            assert!(
                status.is_success() || ["numbers_taken", "sold_out"].contains(&code.as_str()),
                "{payment}: {status} {code}"
            );
        }
        assert_eq!(replies[0].2, replies[1].2, "{payment}: the twins disagree");
        if let Some(tickets) = &replies[0].2 {
            sold.insert(payment.clone(), tickets.clone());
        }
    }
    assert!(
        answers.values().any(|r| r[0].1 == "numbers_taken"),
        "no chooser met a sold number"
    );
    assert_eq!(sold_tickets(&app.scan().await, TOTAL), sold);
    let draw = app.get("/draws/faulty").await.body;
    assert_eq!(draw["sold"], sold.values().map(Vec::len).sum::<usize>());
}
