//! How facts are read: held winning numbers, the freshness bound, the close.

use super::*;

#[tokio::test]
async fn a_held_winning_number_shows_in_the_facts_as_a_losing_one_does() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "iw", "total_tickets": 100, "stripes": 4,
                      "instant_wins": [{"prize": "voucher", "count": 10}]});
    app.create_draw(&draw).await;
    let map = insider_map(&app.store, "iw").await;
    let winning = *map.keys().next().unwrap();
    let losing = (1..=100).find(|n| !map.contains_key(n)).unwrap();
    let reader = Reader::new(&app).await;
    let fresh = reader.facts().await;
    assert_eq!(fresh["instant_prizes"][0]["remaining"], 10, "{fresh}");
    let mut seen = Vec::new();
    for (i, number) in [winning, losing].into_iter().enumerate() {
        let hold = json!({"hold_id": format!("h{i}"), "numbers": [number], "payer_id": "p"});
        let held = app.post("/draws/iw/holds", &hold).await;
        assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
        seen.push(reader.facts().await);
        let path = format!("/draws/iw/holds/h{i}");
        let released = settle_request(&app.router, Method::DELETE, &path, "").await;
        assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    }
    // I2: holding the winning number answers what holding the losing one does, and the
    // prize's count and odds are those of the fresh draw: a held number is not sold.
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0]["held"], 1);
    assert_eq!(seen[0]["instant_prizes"], fresh["instant_prizes"]);
    // Bought, the winning number leaves the prize's count.
    let bought = post_json(
        &app.router,
        "/draws/iw/purchases",
        &json!({"payment_id": "win", "numbers": [winning], "payer_id": "p"}),
    )
    .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    assert_eq!(tickets_of(&bought), vec![winning]);
    let after = reader.facts().await;
    assert_eq!(after["instant_prizes"][0]["remaining"], 9, "{after}");
    assert_eq!(after["entries"], json!({"online": 1, "postal": 0}));
    assert_eq!(
        after["instant_prizes"][0]["odds"],
        json!({"chances": 9, "out_of": 99})
    );
}

/// A process that answers the facts, its clock a bound further on at each poll, so that
/// every poll counts the table as it is.
struct Reader {
    router: Router,
    clock: Arc<AtomicI64>,
}

impl Reader {
    async fn new(app: &TestApp) -> Self {
        let clock = Arc::new(AtomicI64::new(now_ms()));
        let router = clocked_router(store_on(app.store.table(), None).await, &clock);
        Self { router, clock }
    }

    /// The facts of draw `iw`, without the time of the read.
    async fn facts(&self) -> Value {
        self.clock.fetch_add(bound_ms(), Ordering::SeqCst);
        let mut body = get(&self.router, "/draws/iw/facts").await.body;
        body.as_object_mut().unwrap().remove("read_at");
        body
    }
}

/// Cheap enough to poll: within the bound a poll is one `GetItem` of the published facts;
/// past it one caller counts again (the draw, one strongly consistent `BatchGetItem` per
/// 100 stripes) and publishes once; no query, no scan. With instant wins too, once the
/// process knows the draw.
#[tokio::test]
async fn a_poll_within_the_bound_reads_one_item_and_a_stale_one_counts_once() {
    let (store, _table) = fresh_store(None).await;
    let seller = router(store.clone());
    let draw = json!({"draw_id": "wide", "total_tickets": 1_500, "stripes": 150,
                      "instant_wins": [{"prize": "voucher", "count": 30}]});
    let created = post_json(&seller, "/draws", &draw).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    for i in 0..5 {
        let body = json!({"payment_id": format!("p{i}"), "quantity": 4});
        let bought = post_json(&seller, "/draws/wide/purchases", &body).await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    let counter = RequestCounter::default();
    let start = now_ms();
    let clock = Arc::new(AtomicI64::new(start));
    let reader = clocked_router(store_on(store.table(), Some(counter.clone())).await, &clock);
    let sent = |before: &tally::store::RequestCounts| {
        let sent = counter.snapshot().since(before);
        sent.operations()
            .map(|op| (op.to_owned(), sent.of(op)))
            .collect::<Vec<_>>()
    };
    // The first poll finds nothing published: it counts (and learns the draw's map).
    let first = get(&reader, "/draws/wide/facts").await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(max_age(&first), FACTS_FRESH.as_secs());
    // Within the bound, another poll is one eventually consistent GetItem.
    clock.store(start + 2_000, Ordering::SeqCst);
    let before = counter.snapshot();
    let again = get(&reader, "/draws/wide/facts").await;
    assert_eq!(sent(&before), vec![("GetItem".to_owned(), 1)]);
    assert_eq!(again.body, first.body);
    assert_eq!(max_age(&again), FACTS_FRESH.as_secs() - 2);
    // Past the bound, the poll counts again: the published facts, the draw, its 150
    // stripes, and one publish.
    clock.store(start + bound_ms(), Ordering::SeqCst);
    let before = counter.snapshot();
    let stale = get(&reader, "/draws/wide/facts").await;
    assert_eq!(n(&stale.body["sold"]), 20, "{}", stale.body);
    assert_eq!(
        sent(&before),
        vec![
            ("BatchGetItem".to_owned(), 2),
            ("GetItem".to_owned(), 2),
            ("PutItem".to_owned(), 1)
        ]
    );
    assert_eq!(read_at_ms(&stale.body), start + bound_ms());
}

/// Published facts answer with the draw's status as of the answer: past `closes_at` the
/// draw reads closed at once, from the same item. A publish never moves the facts back.
#[tokio::test]
async fn published_facts_read_closed_past_closes_at_and_never_go_back() {
    let app = spawn_app().await;
    let start = now_ms();
    let closes_at = from_epoch_millis(start + 3_000).unwrap();
    let created = app
        .create_draw(&json!({"draw_id": "timed", "total_tickets": 50,
                             "closes_at": rfc3339_millis(closes_at)}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let counter = RequestCounter::default();
    let clock = Arc::new(AtomicI64::new(start));
    let reader = clocked_router(
        store_on(app.store.table(), Some(counter.clone())).await,
        &clock,
    );
    let open = get(&reader, "/draws/timed/facts").await.body;
    assert_eq!(open["status"], "open", "{open}");
    clock.store(start + 3_500, Ordering::SeqCst);
    let before = counter.snapshot();
    let past = get(&reader, "/draws/timed/facts").await.body;
    assert_eq!(counter.snapshot().since(&before).of("GetItem"), 1);
    assert_eq!(past["status"], "closed", "{past}");
    assert_eq!(past["read_at"], open["read_at"]);

    // An older count, published late (a poller that lost the race), is kept out.
    let draw = DrawId::parse("timed").unwrap();
    let stored = app.store.published_facts(&draw).await.unwrap().unwrap();
    let mut older = stored.clone();
    older.read_at -= SignedDuration::from_secs(1);
    older.standings.sold = 7;
    assert_eq!(
        app.store.publish_facts(&older).await.unwrap(),
        Published::Kept
    );
    assert_eq!(
        app.store.published_facts(&draw).await.unwrap(),
        Some(stored.clone())
    );
    let mut newer = stored;
    newer.read_at += SignedDuration::from_secs(1);
    assert_eq!(
        app.store.publish_facts(&newer).await.unwrap(),
        Published::Written
    );
    assert_eq!(app.store.published_facts(&draw).await.unwrap(), Some(newer));
}
