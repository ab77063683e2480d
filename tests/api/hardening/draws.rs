//! What a careful user does to draws: serves many from one process, re-sends a create
//! after a lost answer, cuts a close short, buys more than a transaction can hold.

use super::*;

#[tokio::test]
async fn a_process_keeps_a_bounded_number_of_draws_and_reopens_one_it_forgot() {
    let counter = RequestCounter::default();
    let (store, _table) = fresh_store(Some(counter.clone())).await;
    let seller = TicketService::with_cached_draws(store.clone(), NonZeroUsize::new(2).unwrap());
    let buy = |draw: &str, payment: &str| PurchaseRequest {
        draw_id: DrawId::parse(draw).unwrap(),
        payment_id: PaymentId::parse(payment).unwrap(),
        quantity: 1,
        numbers: None,
        payer_id: None,
        token: None,
        channel: Default::default(),
        amount: None,
    };
    for draw in ["a", "b", "c"] {
        seller
            .create_draw(NewDraw::new(
                DrawId::parse(draw).unwrap(),
                DrawConfig::new(100, None, None).unwrap(),
            ))
            .await
            .unwrap();
        seller
            .purchase(buy(draw, &format!("{draw}1")))
            .await
            .unwrap();
    }
    // "c" is still known: one transaction, no claim.
    let before = counter.snapshot();
    seller.purchase(buy("c", "c2")).await.unwrap();
    let warm = counter.snapshot().since(&before);
    assert_eq!((warm.of("UpdateItem"), warm.total()), (0, 1), "{warm}");
    // "a" was forgotten for "c": it is opened again with a claim.
    let before = counter.snapshot();
    seller.purchase(buy("a", "a2")).await.unwrap();
    let reopened = counter.snapshot().since(&before);
    assert_eq!(reopened.of("UpdateItem"), 1, "{reopened}");
}

#[tokio::test]
async fn a_create_re_sent_after_a_lost_answer_is_its_own_and_a_repeated_create_is_answered() {
    let app = spawn_app().await;
    // The SDK re-sends the very same PutItem when an answer is lost: the item it finds is
    // its own.
    let draw = Draw {
        beacon: Some(tally_domain::winners::BeaconNetwork::quicknet()),
        created_beacon: Some("quicknet".into()),
        ..Draw::new(
            DrawId::parse("resent").unwrap(),
            DrawConfig::new(10, None, None).unwrap(),
            PermutationKey::generate(),
            DrawSeed::generate(),
            Timestamp::now(),
        )
    };
    let entry = |action, target: &str| {
        Draft::new(
            Timestamp::now(),
            &Operator::local(),
            action,
            target.to_owned(),
            &json!({}),
        )
    };
    let created = entry(Action::DrawCreated, "draw/resent");
    for _ in 0..2 {
        assert!(matches!(
            app.store.insert_draw(&draw, &created).await.unwrap(),
            Inserted::New
        ));
    }
    let series = Series::new(
        SeriesId::parse("RESENT").unwrap(),
        SeriesDefinition::new("R{seq:3}", Reset::Never, true, 1).unwrap(),
        Timestamp::now(),
    );
    // Written with its issuer's item, in one transaction: the same call again finds its
    // own series (the issuer's item has moved on, as the first call left it).
    let issuer = Issuer::new(IssuerId::deployment())
        .enter_existing(&series, tally::store::issuers::MAX_ISSUER_FORMATS)
        .unwrap()
        .unwrap();
    let defined = entry(Action::SeriesDefined, "series/RESENT");
    for _ in 0..2 {
        assert!(matches!(
            app.store
                .insert_series(&series, Some(&issuer), &defined)
                .await
                .unwrap(),
            SeriesInsert::New
        ));
    }
    // J1: each write, repeated, is journalled once.
    assert_eq!(app.store.journal_head().await.unwrap().last, 2);
    // A client repeating its create after a 503 gets the draw; other settings conflict.
    let body = json!({"draw_id": "again", "name": "Spring", "total_tickets": 40});
    let first = app.create_draw(&body).await;
    let bought = json!({"payment_id": "p", "quantity": 1});
    assert!(
        app.post("/draws/again/purchases", &bought)
            .await
            .status
            .is_success()
    );
    let repeated = app.post("/draws", &body).await;
    assert_eq!(repeated.status, StatusCode::OK, "{}", repeated.body);
    assert_eq!(repeated.body["sold"], 1);
    assert_eq!(repeated.body["created_at"], first.body["created_at"]);
    let other = json!({"draw_id": "again", "name": "Autumn", "total_tickets": 40});
    assert_eq!(app.post("/draws", &other).await.code(), "draw_exists");
}

#[tokio::test]
async fn a_close_cut_short_reads_closing_until_a_repeat_finishes_it() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "half", "total_tickets": 400, "stripes": 8});
    app.create_draw(&draw).await;
    let warm = router(store_on(app.store.table(), None).await);
    let buy = |payment: &str| json!({"payment_id": payment, "quantity": 1});
    assert_eq!(
        post_json(&warm, "/draws/half/purchases", &buy("w1"))
            .await
            .status,
        StatusCode::CREATED
    );
    // A close that died after its first step and 3 of 8 stripes.
    let id = DrawId::parse("half").unwrap();
    app.store.set_draw_closing(&id).await.unwrap().unwrap();
    for stripe in [5, 6, 7] {
        app.store.close_stripe(&id, stripe).await.unwrap();
    }
    assert_eq!(app.get("/draws/half").await.body["status"], "closing");
    // A process that learns of the draw now refuses; none reads "closed" yet.
    let fresh = router(store_on(app.store.table(), None).await);
    let refused = post_json(&fresh, "/draws/half/purchases", &buy("n1")).await;
    assert_eq!(refused.code(), "draw_closed", "{}", refused.body);
    // The repeat finishes the job: every stripe is closed, then the draw.
    let closed = app.post("/draws/half/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK);
    assert_eq!(closed.body["status"], "closed");
    let items = app.scan().await;
    let stripes: Vec<&Item> = items
        .iter()
        .filter(|i| matches!(i.get("pk"), Some(AttributeValue::S(pk)) if pk.contains("#STRIPE#")))
        .collect();
    assert_eq!(stripes.len(), 8);
    assert!(
        stripes
            .iter()
            .all(|s| s.get("closed") == Some(&AttributeValue::Bool(true)))
    );
    let sold_before = of_kind(&items, "purchase").len();
    for (seller, payment) in [(&warm, "w2"), (&fresh, "n2")] {
        let late = post_json(seller, "/draws/half/purchases", &buy(payment)).await;
        assert_eq!(late.code(), "draw_closed", "{}", late.body);
    }
    assert_eq!(of_kind(&app.scan().await, "purchase").len(), sold_before);
}

/// Sets every stripe of a draw to one ticket left and every stripe end handed out, as the
/// end of a long sale leaves it (item attributes as the store writes them).
async fn leave_one_ticket_per_stripe(store: &Store, draw: &str, config: DrawConfig) {
    let layout = config.layout();
    for stripe in 0..config.stripes() {
        store
            .client()
            .put_item()
            .table_name(store.table())
            .item(
                "pk",
                AttributeValue::S(format!("DRAW#{draw}#STRIPE#{stripe}")),
            )
            .item("c", AttributeValue::N((layout.len(stripe) - 1).to_string()))
            .send()
            .await
            .unwrap();
    }
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key("pk", AttributeValue::S(format!("DRAW#{draw}")))
        .update_expression("SET opened = :all")
        .expression_attribute_values(
            ":all",
            AttributeValue::N((2 * config.stripes()).to_string()),
        )
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_purchase_no_transaction_can_hold_is_refused_without_a_write() {
    let (store, _table) = fresh_store(None).await;
    let config = DrawConfig::new(200, Some(50), Some(100)).unwrap();
    TicketService::new(store.clone())
        .create_draw(NewDraw::new(DrawId::parse("crumbs").unwrap(), config))
        .await
        .unwrap();
    leave_one_ticket_per_stripe(&store, "crumbs", config).await;
    let counter = RequestCounter::default();
    let seller = TicketService::new(store_on(store.table(), Some(counter.clone())).await);
    let request = |payment: &str, quantity| PurchaseRequest {
        draw_id: DrawId::parse("crumbs").unwrap(),
        payment_id: PaymentId::parse(payment).unwrap(),
        quantity,
        numbers: None,
        payer_id: None,
        token: None,
        channel: Default::default(),
        amount: None,
    };
    // 100 tickets left, one per stripe: 50 need 50 cursors, 50 tickets and the record.
    let refused = seller.purchase(request("whale", 50)).await;
    assert!(
        matches!(refused, Err(TicketError::TooFragmented { remaining: 100 })),
        "{refused:?}"
    );
    let sent = counter.snapshot();
    // The claim that reads the draw for a new process, then reads only.
    assert_eq!(
        (sent.of("UpdateItem"), sent.of("TransactWriteItems")),
        (1, 0),
        "{sent}"
    );
    let bought = seller.purchase(request("smaller", 49)).await.unwrap();
    assert_eq!(bought.purchase.tickets.len(), 49);
}
