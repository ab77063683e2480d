//! What purchases are charged, and limits held in one transaction, also under faults.

use super::*;

#[tokio::test]
async fn a_priced_draw_charges_each_purchase_and_a_free_entry_nothing() {
    let app = spawn_app().await;
    let created = app
        .create_draw(&json!({"draw_id": "priced", "total_tickets": 100,
                             "ticket_price": 250, "currency": "EUR"}))
        .await;
    assert_eq!(created.body["ticket_price"], 250);
    assert_eq!(created.body["currency"], "EUR");
    let app = &app;
    let buy = |body: Value| async move { app.post("/draws/priced/purchases", &body).await };
    let listed = buy(json!({"payment_id": "p1", "quantity": 4})).await;
    assert_eq!(listed.status, StatusCode::CREATED, "{}", listed.body);
    assert_eq!(
        (&listed.body["amount"], &listed.body["currency"]),
        (&json!(1000), &json!("EUR"))
    );
    let bundle = buy(json!({"payment_id": "p2", "quantity": 4, "amount": 900})).await;
    assert_eq!(bundle.body["amount"], 900, "{}", bundle.body);
    let postal = buy(json!({"payment_id": "p3", "quantity": 2, "channel": "postal"})).await;
    assert_eq!(postal.body["amount"], 0, "{}", postal.body);
    let dearer = buy(json!({"payment_id": "p4", "quantity": 1, "amount": 251})).await;
    assert_eq!(
        (dearer.status, dearer.code()),
        (StatusCode::BAD_REQUEST, "invalid_amount"),
        "{}",
        dearer.body
    );
    assert_eq!(
        app.get("/draws/priced/purchases/p2").await.body["amount"],
        900
    );
    // A draw without a price counts nothing: its purchases have no amount.
    app.create_draw(&json!({"draw_id": "free", "total_tickets": 10}))
        .await;
    let free = app
        .post(
            "/draws/free/purchases",
            &json!({"payment_id": "f1", "quantity": 1}),
        )
        .await;
    assert_eq!(
        (&free.body["amount"], &free.body["currency"]),
        (&Value::Null, &Value::Null)
    );
    for (body, code) in [
        (
            json!({"total_tickets": 10, "ticket_price": 5}),
            "invalid_currency",
        ),
        (
            json!({"total_tickets": 10, "ticket_price": 5, "currency": "eur"}),
            "invalid_currency",
        ),
        (
            json!({"total_tickets": 10, "currency": "EUR"}),
            "invalid_currency",
        ),
        (
            json!({"total_tickets": 10, "ticket_price": 100_000_001_u64, "currency": "EUR"}),
            "invalid_ticket_price",
        ),
    ] {
        let refused = app.post("/draws", &body).await;
        assert_eq!(refused.code(), code, "{body}: {}", refused.body);
    }
}

/// M1 through lost answers, throttling and 500s, every payment sent twice at once: the
/// counts on the payers' items agree with what was sold, no payer passes a limit, and
/// voids (also twice, also through faults) give back once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn limits_and_voids_under_faults_settle_exactly_once() {
    const PAYMENTS: usize = 80;
    let app = spawn_app().await;
    priced_draws(&app, &["f0", "f1"]).await;
    for i in 0..4 {
        let body = json!({"limits": {"GBP": {"day": 500 + 200 * i}}});
        app.put(&format!("/payers/q{i}/limits"), &body).await;
    }
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.05));
    let mut tasks = Vec::new();
    for twin in 0..2 {
        for chunk in 0..8usize {
            let instance = faulty_instance(&proxy, app.table(), Duration::from_secs(10)).await;
            tasks.push(tokio::spawn(async move {
                let mut answers = Vec::new();
                for i in (chunk..PAYMENTS).step_by(8) {
                    let draw = if i % 3 == 0 { "f1" } else { "f0" };
                    let body = json!({"payment_id": format!("pay-{i}"), "payer_id": format!("q{}", i % 4),
                                      "quantity": 1 + i % 3});
                    let reply = settle(&instance, &format!("/draws/{draw}/purchases"), &body.to_string()).await;
                    answers.push((twin, i, reply.status, reply.code().to_owned()));
                }
                answers
            }));
        }
    }
    for task in tasks {
        for (_, i, status, code) in task.await.unwrap() {
            assert!(
                status.is_success() || code == "spend_limit",
                "pay-{i}: {status} {code}"
            );
        }
    }
    let items = scan(&app.store).await;
    for (payer, (spent, counted)) in spend_on_record(&items) {
        let i: u64 = payer[1..].parse().unwrap();
        assert!(spent <= 500 + 200 * i, "{payer} spent {spent}");
        assert_eq!(spent, counted, "{payer}: counted other than what was sold");
    }
    let instance = faulty_instance(&proxy, app.table(), Duration::from_secs(10)).await;
    let mut voids = Vec::new();
    for purchase in of_kind(&items, "purchase").iter().step_by(2) {
        let path = format!(
            "/draws/{}/purchases/{}/void",
            attr_s(purchase, "draw_id"),
            attr_s(purchase, "payment_id")
        );
        for _twin in 0..2 {
            let (instance, path) = (instance.clone(), path.clone());
            voids.push(tokio::spawn(async move {
                settle_request(
                    &instance,
                    Method::POST,
                    &path,
                    r#"{"reason": "chargeback"}"#,
                )
                .await
            }));
        }
    }
    for void in voids {
        let reply = void.await.unwrap();
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    proxy.set(Default::default());
    for (payer, (spent, counted)) in spend_on_record(&scan(&app.store).await) {
        assert_eq!(
            spent, counted,
            "{payer}: voids under faults gave back other than once"
        );
    }
}

/// Cost: a purchase with limits and an exclusion check is one transaction with one more
/// item (the payer's) than without; a process that learned the payer's terms sends no
/// cancelled transaction to learn them again.
#[tokio::test]
async fn a_limited_payer_buys_in_one_transaction_once_the_process_knows_the_terms() {
    use tally::store::RequestCounter;
    use tally::tickets::{NewDraw, TicketService};
    use tally_domain::draw::DrawConfig;
    use tally_domain::ids::{DrawId, PayerId, PaymentId};
    use tally_domain::purchase::PurchaseRequest;
    use tally_domain::spend::{Currency, LimitChange, Price, Span};

    let counter = RequestCounter::default();
    let (store, _table) = crate::helpers::fresh_store(Some(counter.clone())).await;
    let seller = TicketService::new(store);
    let price = Price::new(Some(100), Some("GBP")).unwrap();
    let config = DrawConfig::new(100, None, None).unwrap().with_price(price);
    let draw = DrawId::parse("cost").unwrap();
    seller
        .create_draw(NewDraw::new(draw.clone(), config))
        .await
        .unwrap();
    let payer = PayerId::parse("dee").unwrap();
    let limits = LimitChange::from([(
        Currency::parse("GBP").unwrap(),
        [(Span::Day, 10_000)].into(),
    )]);
    seller
        .set_limits(&payer, &limits, &tally_domain::journal::Operator::local())
        .await
        .unwrap();
    let buy = |n: u32| PurchaseRequest {
        draw_id: draw.clone(),
        payment_id: PaymentId::parse(&format!("c{n}")).unwrap(),
        quantity: 2,
        numbers: None,
        payer_id: Some(payer.clone()),
        token: None,
        channel: Default::default(),
        amount: None,
    };
    // The first learns the terms' version from its cancellation.
    seller.purchase(buy(0)).await.unwrap();
    for n in 1..4 {
        let before = counter.snapshot();
        let receipt = seller.purchase(buy(n)).await.unwrap();
        let sent = counter.snapshot().since(&before);
        assert_eq!(
            (sent.of("TransactWriteItems"), sent.total()),
            (1, 1),
            "{sent}"
        );
        assert_eq!(receipt.purchase.amount.map(|a| a.minor), Some(200));
    }
}
