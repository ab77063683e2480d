//! Lucky dips among chosen numbers: one miss a stripe at most, never a number sold twice.

use super::*;

/// The lucky dip passes over chosen numbers: it learns a stripe's chosen numbers from one
/// cancelled transaction at most, not one per number it meets, and sells every other
/// number exactly once.
#[tokio::test]
async fn a_lucky_dip_skips_chosen_numbers_with_at_most_one_miss_per_stripe() {
    const TOTAL: u64 = 600;
    const STRIPES: u32 = 6;
    let counter = RequestCounter::default();
    let (store, _table) = fresh_store(Some(counter.clone())).await;
    let draw_id = DrawId::parse("skip").unwrap();
    let seller = TicketService::new(store.clone());
    seller
        .create_draw(NewDraw::new(
            draw_id.clone(),
            DrawConfig::new(TOTAL, Some(10), Some(STRIPES)).unwrap(),
        ))
        .await
        .unwrap();
    // A third of the numbers chosen first, ten at a time.
    let mut rng = StdRng::seed_from_u64(3);
    let mut numbers: Vec<u64> = (1..=TOTAL).collect();
    for i in (1..numbers.len()).rev() {
        numbers.swap(i, rng.random_range(0..=i));
    }
    let chosen: BTreeSet<u64> = numbers[..200].iter().copied().collect();
    for (i, chunk) in numbers[..200].chunks(10).enumerate() {
        let mut picked = chunk.to_vec();
        picked.sort_unstable();
        let request = PurchaseRequest {
            draw_id: draw_id.clone(),
            payment_id: PaymentId::parse(&format!("c{i}")).unwrap(),
            quantity: 10,
            numbers: Some(picked),
            payer_id: None,
            token: None,
            channel: Default::default(),
            amount: None,
        };
        seller.purchase(request).await.unwrap();
    }
    // A process that never saw them sells out the rest.
    let dipper = TicketService::new(store_on(store.table(), Some(counter.clone())).await);
    let mut dipped = BTreeSet::new();
    let mut purchases = 0;
    let before = counter.get();
    for n in 0.. {
        let request = PurchaseRequest {
            draw_id: draw_id.clone(),
            payment_id: PaymentId::parse(&format!("d{n}")).unwrap(),
            quantity: 1 + (n % 10) as u32,
            numbers: None,
            payer_id: None,
            token: None,
            channel: Default::default(),
            amount: None,
        };
        match dipper.purchase(request).await {
            Ok(receipt) => {
                purchases += 1;
                for ticket in receipt.purchase.tickets {
                    assert!(!chosen.contains(&ticket), "a dip sold chosen {ticket}");
                    assert!(dipped.insert(ticket), "{ticket} sold twice");
                }
            }
            Err(TicketError::SoldOut { remaining: 0, .. }) => break,
            Err(TicketError::SoldOut { .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(dipped.len() as u64 + 200, TOTAL);
    // Each purchase is one transaction; each stripe end may cost a claim and one miss
    // that teaches its chosen numbers, and the end of the draw a few reads.
    let requests = counter.get() - before;
    let ends = 2 * u64::from(STRIPES);
    assert!(
        requests <= purchases + 2 * ends + 8,
        "{requests} requests for {purchases} purchases over {STRIPES} stripes"
    );
}

/// T1-T5 with chosen numbers: 64 instances sell out 1,000 numbers at once, half of them
/// choosing overlapping numbers from a hot set of 120, the rest by lucky dip, each
/// payment sent twice; the table is read back, then the draw closed and its winners
/// drawn and verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn choosers_and_lucky_dips_at_once_never_sell_a_number_twice() {
    const TOTAL: u64 = 1_000;
    const CLIENTS: usize = 64;
    let app = spawn_app().await;
    create(
        &app,
        json!({"draw_id": "mix", "total_tickets": TOTAL, "max_per_purchase": 10}),
    )
    .await;
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let router = crate::helpers::router(store_on(app.store.table(), None).await);
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(client as u64);
            let mut answers = Vec::new();
            for n in 0..12 {
                let payment = format!("c{client}-{n}");
                let body = if client % 2 == 0 {
                    let picked: BTreeSet<u64> = (0..rng.random_range(1..=3))
                        .map(|_| rng.random_range(1..=120))
                        .collect();
                    json!({"payment_id": payment, "numbers": picked})
                } else {
                    json!({"payment_id": payment, "quantity": rng.random_range(1..=5)})
                };
                for _twice in 0..2 {
                    let reply = settle(&router, "/draws/mix/purchases", &body.to_string()).await;
                    answers.push((
                        payment.clone(),
                        body.clone(),
                        reply.status,
                        reply.code().to_owned(),
                        reply.body.clone(),
                    ));
                }
            }
            answers
        }));
    }
    let mut sold: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for task in tasks {
        for (payment, body, status, code, reply) in task.await.unwrap() {
            match (status, code.as_str()) {
                (StatusCode::CREATED | StatusCode::OK, _) => {
                    let tickets: Vec<u64> = reply["tickets"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t.as_u64().unwrap())
                        .collect();
                    if let Some(numbers) = body["numbers"].as_array() {
                        let asked: Vec<u64> = numbers.iter().map(|n| n.as_u64().unwrap()).collect();
                        assert_eq!(tickets, asked, "{payment}: other numbers than chosen");
                    }
                    let earlier = sold.insert(payment.clone(), tickets.clone());
                    assert!(
                        earlier.is_none_or(|e| e == tickets),
                        "{payment}: the twins differ"
                    );
                }
                (StatusCode::CONFLICT, "numbers_taken") => {
                    assert!(body["numbers"].is_array(), "{payment}");
                    let taken = reply["numbers"].as_array().unwrap();
                    assert!(!taken.is_empty());
                }
                (StatusCode::CONFLICT, "sold_out") => {}
                (status, code) => panic!("{payment}: {status} {code} {reply}"),
            }
        }
    }
    // The rest of the draw by lucky dip, so that it sells out.
    for n in 0.. {
        let reply = settle(
            &app.router,
            "/draws/mix/purchases",
            &json!({"payment_id": format!("rest-{n}"), "quantity": 1}).to_string(),
        )
        .await;
        if reply.code() == "sold_out" {
            break;
        }
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        sold.insert(format!("rest-{n}"), tickets_of(&reply));
    }
    // T1, T2, T3, T5 on the table, and the table agrees with the answers.
    assert_eq!(sold_tickets(&app.scan().await, TOTAL), sold);
    let total: usize = sold.values().map(Vec::len).sum();
    assert_eq!(total as u64, TOTAL, "every number sold exactly once");
    let draw = get(&app.router, "/draws/mix").await.body;
    assert_eq!(
        (draw["sold"].as_u64(), draw["remaining"].as_u64()),
        (Some(TOTAL), Some(0))
    );
    // Closed and drawn: every number is eligible, and both verifiers agree.
    app.post("/draws/mix/close", &json!({})).await;
    let winners = app.post("/draws/mix/winners", &json!({"prizes": 3})).await;
    assert_eq!(winners.status, StatusCode::CREATED, "{}", winners.body);
    let eligible = app.get("/draws/mix/eligible").await.body;
    assert_eq!(bitmap_tickets(&eligible), (1..=TOTAL).collect::<Vec<_>>());
    let proof = app.get("/draws/mix/winners").await.body;
    assert_eq!(
        verifiers_accept("chosen", &proof, &eligible, None, None),
        Verdicts::BOTH_PASS
    );
}
