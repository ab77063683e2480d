//! Facts polled during a concurrent sale add up and match the table.

use super::*;

const TOTAL: u64 = 600;
const CLIENTS: u64 = 24;
const STEPS: u64 = 12;
const PRIZES: [(&str, u64); 2] = [("voucher", 12), ("car", 3)];

/// What the table holds of the sale at one moment.
#[derive(Debug, Default, PartialEq, Eq)]
struct TableCounts {
    /// Ticket items, voided ones included.
    sold: u64,
    voided: u64,
    /// Tickets of purchases not voided, by channel.
    online: u64,
    postal: u64,
    /// Per prize, its winning numbers that have a ticket item.
    won: BTreeMap<String, u64>,
}

fn table_counts(items: &[Item], map: &BTreeMap<u64, String>) -> TableCounts {
    let mut counts = TableCounts::default();
    for ticket in of_kind(items, "ticket") {
        counts.sold += 1;
        if matches!(ticket.get("status"), Some(AttributeValue::S(s)) if s == "void") {
            counts.voided += 1;
        }
        if let Some(prize) = map.get(&attr_n(ticket, "number")) {
            *counts.won.entry(prize.clone()).or_default() += 1;
        }
    }
    for purchase in of_kind(items, "purchase") {
        if purchase.contains_key("status") {
            continue;
        }
        let quantity = attr_n(purchase, "quantity");
        match purchase.get("channel") {
            Some(AttributeValue::S(c)) if c == "postal" => counts.postal += quantity,
            _ => counts.online += quantity,
        }
    }
    counts
}

async fn read_table(app: &TestApp, map: &BTreeMap<u64, String>) -> TableCounts {
    table_counts(&app.scan().await, map)
}

/// Per prize, its numbers sold as the facts say (count less remaining).
fn won(facts: &Value) -> BTreeMap<String, u64> {
    facts["instant_prizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let prize = p["prize"].as_str().unwrap().to_owned();
            (prize, n(&p["count"]) - n(&p["remaining"]))
        })
        .collect()
}

/// What every facts answer must hold on its own: the counts add up, and each odds is
/// made of them.
fn assert_adds_up(facts: &Value) {
    let (sold, held, remaining) = (n(&facts["sold"]), n(&facts["held"]), n(&facts["remaining"]));
    assert_eq!(sold + held + remaining, TOTAL, "{facts}");
    let entries = n(&facts["entries"]["online"]) + n(&facts["entries"]["postal"]);
    assert_eq!(entries + n(&facts["voided"]), sold, "{facts}");
    if entries == 0 {
        assert!(facts["prize_odds"].is_null(), "{facts}");
    } else {
        assert_eq!(
            facts["prize_odds"],
            json!({"chances": 1, "out_of": entries})
        );
    }
    let prizes = facts["instant_prizes"].as_array().unwrap();
    assert_eq!(prizes.len(), PRIZES.len(), "{facts}");
    for (prize, (name, count)) in prizes.iter().zip(PRIZES) {
        assert_eq!(
            (prize["prize"].as_str(), n(&prize["count"])),
            (Some(name), count)
        );
        let left = n(&prize["remaining"]);
        assert!(left <= count, "{facts}");
        if held + remaining == 0 {
            assert!(prize["odds"].is_null(), "{facts}");
        } else {
            assert_eq!(
                prize["odds"],
                json!({"chances": left, "out_of": held + remaining}),
                "{facts}"
            );
        }
    }
    // Public: nothing names a payer, a payment or a number.
    let text = facts.to_string();
    assert!(
        !text.contains("payer") && !text.contains("payment"),
        "{text}"
    );
    assert!(!text.contains("ticket\""), "{text}");
}

/// One buyer: `STEPS` steps of its kind, through its process's router. Every answer is
/// a success or a documented refusal.
async fn client(router: Router, client: u64) {
    let mut rng = StdRng::seed_from_u64(client);
    let payer = format!("payer{client}");
    for step in 0..STEPS {
        let payment = format!("c{client}-{step}");
        let body = match client % 4 {
            0 => {
                json!({"payment_id": payment, "quantity": rng.random_range(1..=6), "payer_id": payer})
            }
            1 => json!({"payment_id": payment, "quantity": rng.random_range(1..=3),
                        "payer_id": payer, "channel": "postal"}),
            2 => {
                let numbers: Vec<u64> = {
                    let mut picked: Vec<u64> = (0..rng.random_range(1..=3))
                        .map(|_| rng.random_range(1..=TOTAL))
                        .collect();
                    picked.sort_unstable();
                    picked.dedup();
                    picked
                };
                json!({"payment_id": payment, "numbers": numbers, "payer_id": payer})
            }
            _ => {
                let hold = format!("h{client}-{step}");
                let body = json!({"hold_id": hold, "quantity": rng.random_range(1..=3),
                                  "payer_id": payer});
                let held = settle(&router, "/draws/facts/holds", &body.to_string()).await;
                if !created(&held, &hold) {
                    continue;
                }
                if rng.random_range(0..2) == 0 {
                    let path = format!("/draws/facts/holds/{hold}");
                    let released = settle_request(&router, Method::DELETE, &path, "").await;
                    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
                    continue;
                }
                json!({"payment_id": payment, "hold_id": hold})
            }
        };
        let bought = settle(&router, "/draws/facts/purchases", &body.to_string()).await;
        if !created(&bought, &payment) {
            continue;
        }
        if rng.random_range(0..5) == 0 {
            let path = format!("/draws/facts/purchases/{payment}/void");
            let voided = settle(&router, &path, r#"{"reason": "refunded"}"#).await;
            assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
        }
    }
}

#[tokio::test]
async fn facts_polled_during_a_concurrent_sale_add_up_and_match_the_table() {
    let app = spawn_app().await;
    let prizes: Vec<Value> = PRIZES
        .iter()
        .map(|(prize, count)| json!({"prize": prize, "count": count}))
        .collect();
    let created = app
        .create_draw(
            &json!({"draw_id": "facts", "total_tickets": TOTAL, "stripes": 16,
                             "max_per_purchase": 6, "hold_seconds": 600,
                             "instant_wins": prizes}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let map = insider_map(&app.store, "facts").await;
    // Four processes sell; a fifth, which sells nothing and whose clock the test moves,
    // answers the facts.
    let routers: Vec<Router> = (0..4).map(|_| router(app.store.clone())).collect();
    let counter = RequestCounter::default();
    let clock = Arc::new(AtomicI64::new(now_ms()));
    let reader = clocked_router(
        store_on(app.store.table(), Some(counter.clone())).await,
        &clock,
    );
    // How far the reader's clock runs ahead: a bound more every other poll, so that it
    // answers fresh counts and published facts in turn.
    let mut ahead = 0;
    let poll = |reader: Router, ahead: i64| {
        let (clock, counter) = (clock.clone(), counter.clone());
        async move {
            let asked_at = now_ms() + ahead;
            clock.store(asked_at, Ordering::SeqCst);
            let sent = counter.snapshot();
            let reply = get(&reader, "/draws/facts/facts").await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            let counted = counter.snapshot().since(&sent).of("BatchGetItem") > 0;
            (reply, asked_at, counted)
        }
    };
    let selling = Arc::new(AtomicBool::new(true));
    let sale = {
        let selling = selling.clone();
        let routers = routers.clone();
        tokio::spawn(async move {
            let clients: Vec<_> = (0..CLIENTS)
                .map(|c| tokio::spawn(client(routers[(c % 4) as usize].clone(), c)))
                .collect();
            for c in clients {
                c.await.unwrap();
            }
            selling.store(false, Ordering::SeqCst);
        })
    };
    let mut polls = 0;
    let mut last: Option<Value> = None;
    // Every fresh count the reader answered, by its `read_at`.
    let mut counts: BTreeMap<String, Value> = BTreeMap::new();
    let mut published = 0;
    while selling.load(Ordering::SeqCst) {
        if polls % 2 == 1 {
            ahead += bound_ms();
        }
        let before = read_table(&app, &map).await;
        let (reply, asked_at, counted) = poll(reader.clone(), ahead).await;
        let after = read_table(&app, &map).await;
        let facts = reply.body.clone();
        assert_adds_up(&facts);
        let (sold, voided) = (n(&facts["sold"]), n(&facts["voided"]));
        if counted {
            assert_eq!(read_at_ms(&facts), asked_at, "{facts}");
            assert_eq!(max_age(&reply), FACTS_FRESH.as_secs(), "{facts}");
            assert!(
                before.sold <= sold && sold <= after.sold,
                "{before:?} {facts} {after:?}"
            );
            assert!(
                before.voided <= voided && voided <= after.voided,
                "{before:?} {facts}"
            );
            for (prize, sold_winners) in won(&facts) {
                let (low, high) = (before.won.get(&prize), after.won.get(&prize));
                let (low, high) = (low.copied().unwrap_or(0), high.copied().unwrap_or(0));
                assert!(
                    low <= sold_winners && sold_winners <= high,
                    "{prize}: {facts}"
                );
            }
            counts.insert(facts["read_at"].as_str().unwrap().to_owned(), facts.clone());
        } else {
            // Published facts: a count answered before, exactly, within the bound.
            let age = asked_at - read_at_ms(&facts);
            assert!((0..bound_ms()).contains(&age), "{age} ms old: {facts}");
            assert!(max_age(&reply) <= FACTS_FRESH.as_secs(), "{facts}");
            let read_at = facts["read_at"].as_str().unwrap();
            assert_eq!(
                Some(&facts),
                counts.get(read_at),
                "not a count answered before"
            );
            published += 1;
        }
        if let Some(last) = &last {
            assert!(
                n(&last["sold"]) <= sold,
                "sold went back: {last} then {facts}"
            );
            for (prize, was) in won(last) {
                assert!(was <= won(&facts)[&prize], "{prize} came back: {facts}");
            }
        }
        last = Some(facts);
        polls += 1;
    }
    sale.await.unwrap();
    assert!(polls >= 3, "only {polls} polls during the sale");
    assert!(
        published >= 1 && counts.len() >= 2,
        "{published} published, {} counted",
        counts.len()
    );

    // The sale stopped: a count is the table's, exactly.
    let table = read_table(&app, &map).await;
    let (reply, _, counted) = poll(reader.clone(), ahead + bound_ms()).await;
    assert!(counted, "a poll past the bound counts again");
    let facts = reply.body;
    assert_adds_up(&facts);
    assert_eq!(
        n(&facts["held"]),
        0,
        "every hold was paid or released: {facts}"
    );
    assert_eq!(
        (
            n(&facts["sold"]),
            n(&facts["voided"]),
            n(&facts["entries"]["online"]),
            n(&facts["entries"]["postal"]),
        ),
        (table.sold, table.voided, table.online, table.postal),
        "{facts}"
    );
    assert!(table.voided > 0 && table.postal > 0, "{table:?}");
    assert!(
        table.won.values().sum::<u64>() > 0,
        "no instant prize sold: {table:?}"
    );
    let items = app.scan().await;
    for (prize, count) in PRIZES {
        let sold_winners = table.won.get(prize).copied().unwrap_or(0);
        assert_eq!(won(&facts)[prize], sold_winners, "{prize}: {facts}");
        let awarded = of_kind(&items, "instant_win")
            .iter()
            .map(|award| {
                let wins = award.get("wins").and_then(|w| w.as_l().ok()).unwrap();
                wins.iter()
                    .filter(|w| {
                        w.as_m()
                            .ok()
                            .and_then(|m| m.get("prize"))
                            .is_some_and(|p| p.as_s().is_ok_and(|p| p == prize))
                    })
                    .count() as u64
            })
            .sum::<u64>();
        assert_eq!(awarded, sold_winners, "I1: {prize}");
        assert!(sold_winners <= count);
    }
    // Every process answers the same.
    for router in &routers {
        let seen = get(router, "/draws/facts/facts").await.body;
        assert_eq!(
            (&seen["sold"], &seen["entries"], &seen["instant_prizes"]),
            (&facts["sold"], &facts["entries"], &facts["instant_prizes"])
        );
    }
    // Closed, the entries are the eligible list, at once: the close publishes the closed
    // draw's facts over the reader's, though the reader's clock stamped those later.
    let closed = app.post("/draws/facts/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let facts = get(&routers[0], "/draws/facts/facts").await.body;
    assert_eq!(facts["status"], "closed", "{facts}");
    let entries = n(&facts["entries"]["online"]) + n(&facts["entries"]["postal"]);
    assert_eq!(entries, n(&closed.body["eligible_count"]), "{facts}");
}
