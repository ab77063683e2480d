//! Tickets under faults: a sell-out, a close, voids, winners and redraws.

use super::*;
use tally_domain::ids::DrawId;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sell_out_under_faults_settles_every_payment_exactly_once() {
    const TOTAL: u64 = 300;
    const PAYMENTS: usize = 120;
    let app = spawn_app().await;
    let draw = json!({"draw_id": "faulty", "total_tickets": TOTAL, "max_per_purchase": 5});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.04));
    let answers = twin_payments(
        &proxy,
        app.store.table(),
        "/draws/faulty/purchases",
        PAYMENTS,
        |i| json!({"payment_id": format!("pay-{i}"), "quantity": 1 + i % 5}),
    )
    .await;
    let counts = proxy.counts();
    assert!(
        counts.throttled > 0
            && counts.errors_before > 0
            && counts.errors_after > 0
            && counts.lost_after > 0,
        "not every fault happened: {counts:?}"
    );
    // Each payment: both twins got the same tickets, or both were told it sold out.
    let mut sold = BTreeMap::new();
    for (payment, replies) in &answers {
        let tickets: Vec<Option<Vec<u64>>> = replies
            .iter()
            .map(|r| match (r.status, r.code()) {
                (StatusCode::CREATED | StatusCode::OK, _) => Some(tickets_of(r)),
                (StatusCode::CONFLICT, "sold_out") => None,
                (status, code) => panic!("{payment}: {status} {code}"),
            })
            .collect();
        assert_eq!(tickets[0], tickets[1], "{payment}: the twins disagree");
        if let Some(tickets) = &tickets[0] {
            sold.insert(payment.clone(), tickets.clone());
        }
    }
    // The table holds exactly what the answers said: T1, T2, T3, T4, T5.
    assert_eq!(sold_tickets(&app.scan().await, TOTAL), sold);
    let draw = app.get("/draws/faulty").await.body;
    assert_eq!(draw["sold"], sold.values().map(Vec::len).sum::<usize>());
    assert_eq!(draw["sold"], TOTAL, "the draw did not sell out");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_close_under_faults_is_repeated_until_closed_and_then_nothing_sells() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "shut", "total_tickets": 2_000, "stripes": 200});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;
    let bought = post_json(
        &instance,
        "/draws/shut/purchases",
        &json!({"payment_id": "before", "quantity": 3}),
    )
    .await;
    assert_eq!(bought.status, StatusCode::CREATED);
    proxy.set(Faults {
        error_before: 0.2,
        error_after: 0.2,
        ..Faults::default()
    });
    let mut interrupted = 0;
    let mut started = false;
    let stripes: Vec<u32> = (0..200).collect();
    let closed = loop {
        let reply = post_json(&instance, "/draws/shut/close", &json!({})).await;
        assert_ne!(
            reply.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{}",
            reply.body
        );
        match reply.status {
            StatusCode::OK => break reply,
            StatusCode::SERVICE_UNAVAILABLE => {
                interrupted += 1;
                // A close cut short before its first write leaves the draw open; once
                // it reads "closing" it never opens again, and it never reads "closed"
                // before every stripe is.
                let seen = app.get("/draws/shut").await.body;
                match seen["status"].as_str().unwrap() {
                    "open" => assert!(!started, "a closing draw read open again"),
                    "closing" => started = true,
                    status => {
                        assert_eq!(status, "closed");
                        let draw = DrawId::parse("shut").unwrap();
                        let states = app.store.read_stripes(&draw, &stripes).await.unwrap();
                        assert!(states.iter().all(|(_, state)| state.closed));
                        started = true;
                    }
                }
                assert!(interrupted < 50);
            }
            other => panic!("close answered {other}: {}", reply.body),
        }
    };
    assert!(interrupted > 0, "no close was interrupted");
    assert_eq!(closed.body["status"], "closed");
    // W5: the close froze the list once, as the list served from then on.
    assert_eq!(closed.body["eligible_count"], 3, "{}", closed.body);
    proxy.set(Faults::default());
    let eligible = app.get("/draws/shut/eligible").await.body;
    assert_eq!(eligible["eligible_digest"], closed.body["eligible_digest"]);
    assert_eq!(
        app.get("/draws/shut").await.body["frozen_at"],
        closed.body["frozen_at"]
    );
    // Every stripe refuses now, on this instance and on a new one.
    for (i, seller) in [&instance, &app.router].into_iter().enumerate() {
        let late = post_json(
            seller,
            "/draws/shut/purchases",
            &json!({"payment_id": format!("after-{i}"), "quantity": 1}),
        )
        .await;
        assert_eq!(late.code(), "draw_closed", "{}", late.body);
    }
    assert_eq!(sold_tickets(&app.scan().await, 2_000).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn voids_winners_and_redraws_under_faults_settle_exactly_once() {
    const TOTAL: u64 = 120;
    const CAP: u64 = 12;
    let app = spawn_app().await;
    let draw = json!({"draw_id": "fv", "total_tickets": TOTAL, "max_per_purchase": 5,
                      "max_per_payer": CAP});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.05));
    let twins = [
        faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await,
        faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await,
    ];
    // Every request is sent by two instances at once and repeated until it settles.
    let both = |path: String, body: serde_json::Value| {
        let twins = twins.clone();
        async move {
            let body = body.to_string();
            tokio::join!(
                settle(&twins[0], &path, &body),
                settle(&twins[1], &path, &body)
            )
        }
    };
    let mut bought = Vec::new();
    for i in 0..30 {
        let body = json!({"payment_id": format!("p{i}"), "quantity": 1 + i % 5,
                          "payer_id": format!("payer-{}", i % 4)});
        let (a, b) = both("/draws/fv/purchases".into(), body).await;
        match (a.code(), b.code()) {
            ("", "") => {
                assert_eq!(tickets_of(&a), tickets_of(&b), "p{i}: the twins disagree");
                bought.push(format!("p{i}"));
            }
            ("payer_limit", "payer_limit") | ("sold_out", "sold_out") => {}
            (x, y) => panic!("p{i}: {x} / {y}: {} {}", a.body, b.body),
        }
    }
    for payment in bought.iter().step_by(3) {
        let (a, b) = both(
            format!("/draws/fv/purchases/{payment}/void"),
            json!({"reason": "refund"}),
        )
        .await;
        assert_eq!((a.status, b.status), (StatusCode::OK, StatusCode::OK));
        assert_eq!((&a.body["status"], &a.body), (&json!("void"), &b.body));
    }
    let (closed, _) = both("/draws/fv/close".into(), json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let (a, b) = both("/draws/fv/winners".into(), json!({"prizes": 3})).await;
    assert!(
        a.status.is_success() && b.status.is_success(),
        "{} {}",
        a.body,
        b.body
    );
    assert_eq!(a.body, b.body, "the twins got different winners");
    let (a, b) = both(
        "/draws/fv/winners/1/redraw".into(),
        json!({"reason": "no answer"}),
    )
    .await;
    assert!(
        a.status.is_success() && b.status.is_success(),
        "{} {}",
        a.body,
        b.body
    );
    assert_eq!(a.body, b.body, "the twins redrew differently");
    // A void after the freeze is recorded once and changes no winner.
    let (late, again) = both(
        format!("/draws/fv/purchases/{}/void", bought[1]),
        json!({"reason": "late"}),
    )
    .await;
    assert_eq!((late.status, &late.body), (StatusCode::OK, &again.body));
    let counts = proxy.counts();
    assert!(counts.errors_after + counts.lost_after > 0, "{counts:?}");
    proxy.set(Faults::default());

    // Exactly once: one pick per prize and one redraw, voids counted once, caps held.
    let items = app.scan().await;
    sold_tickets(&items, TOTAL);
    let voided = voids_and_caps(&items, "fv", CAP);
    assert_eq!(of_kind(&items, "pick").len(), 4);
    let winners = app.get("/draws/fv/winners").await.body;
    // The same winners as answered; the late void may have flagged one of them since.
    let unflagged = |prizes: &serde_json::Value| {
        let mut prizes = prizes.clone();
        for prize in prizes.as_array_mut().unwrap() {
            prize.as_object_mut().unwrap().remove("voided");
        }
        prizes
    };
    assert_eq!(unflagged(&winners["prizes"]), unflagged(&a.body["prizes"]));
    assert_eq!(winners["proof"]["picks"], a.body["proof"]["picks"]);
    assert_eq!(winners["history"].as_array().unwrap().len(), 1);
    let late: Vec<u64> = tickets_of(&late);
    // Every late void counted; of them, the picked ones listed.
    assert_eq!(winners["proof"]["late_voided"], late.len());
    assert_eq!(
        crate::winners::late_void_tickets(&winners),
        crate::winners::picked_among(&winners, &late)
    );
    for prize in winners["prizes"].as_array().unwrap() {
        let ticket = prize["ticket"].as_u64().unwrap();
        // Voided before the freeze: never a winner; after it: flagged.
        assert_eq!(prize["voided"], late.contains(&ticket));
        assert!(!voided.contains(&ticket) || late.contains(&ticket));
    }
}

/// A stripe that a purchase's transaction holds for a moment refuses its close
/// (`TransactionConflict`); the close waits and tries again, as the draw's own writes do,
/// rather than answering `503` under a busy sale.
#[tokio::test]
async fn closing_a_stripe_waits_out_a_transaction_that_holds_it() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "held", "total_tickets": 100, "stripes": 2});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let store = faulty_store(&proxy, app.store.table()).await;
    proxy.set(Faults {
        conflict_before: 1.0,
        operations: Some(vec!["UpdateItem".into()]),
        at_most: Some(2),
        ..Faults::default()
    });
    let id = DrawId::parse("held").unwrap();
    store
        .close_stripe(&id, 1)
        .await
        .expect("the close waits for the transaction");
    assert_eq!(proxy.counts().conflicts, 2);
    let mut stripes = app.store.read_stripes(&id, &[0, 1]).await.unwrap();
    stripes.sort_by_key(|(stripe, _)| *stripe);
    let closed: Vec<(u32, bool)> = stripes.iter().map(|(n, s)| (*n, s.closed)).collect();
    assert_eq!(closed, [(0, false), (1, true)]);
}
