//! Prices, spend limits across draws (M1) and self-exclusion (X1): each decided in the
//! transaction that commits a sale, on the payer's one item across draws, under
//! concurrency and through faults; the table is read back and checked.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use jiff::{SignedDuration, Timestamp};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use tally_domain::time::rfc3339_millis;

use crate::faults::{every_fault, faulty_instance};
use crate::helpers::{Item, TestApp, endpoint, of_kind, scan, settle, settle_request, spawn_app};
use crate::helpers::{attr_n, attr_s};
use tally_testkit::fault_proxy::FaultProxy;

const PRICE: u64 = 100;

async fn priced_draws(app: &TestApp, draws: &[&str]) {
    for draw in draws {
        app.create_draw(
            &json!({"draw_id": draw, "total_tickets": 1_000, "max_per_purchase": 5,
                                "ticket_price": PRICE, "currency": "GBP"}),
        )
        .await;
    }
}

/// Each payer's non-void spend in GBP, and the day's count on the payer's item, as the
/// table holds them.
fn spend_on_record(items: &[Item]) -> BTreeMap<String, (u64, u64)> {
    let mut spend: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for purchase in of_kind(items, "purchase") {
        let payer = attr_s(purchase, "payer_id").to_owned();
        let void = purchase.get("status").is_some();
        if !void && purchase.contains_key("amount") {
            assert_eq!(attr_s(purchase, "currency"), "GBP");
            spend.entry(payer).or_default().0 += attr_n(purchase, "amount");
        }
    }
    let today = Timestamp::now().strftime("%Y-%m-%d").to_string();
    for payer in of_kind(items, "payer") {
        let Some(day) = payer.get("spend_GBP_day").and_then(|v| v.as_m().ok()) else {
            continue;
        };
        if day["window"].as_s().unwrap() == &today {
            let counted = day["amount"].as_n().unwrap().parse().unwrap();
            spend
                .entry(attr_s(payer, "payer_id").to_owned())
                .or_default()
                .1 = counted;
        }
    }
    spend
}

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

#[tokio::test]
async fn a_lower_limit_applies_at_once_and_a_higher_one_after_cooling_off() {
    let app = spawn_app().await;
    priced_draws(&app, &["d"]).await;
    let set = app
        .put(
            "/payers/ann/limits",
            &json!({"limits": {"GBP": {"day": 300}}}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(set.body["limits"]["GBP"]["day"]["limit"], 300);
    assert_eq!(set.body["limits"]["GBP"]["week"]["limit"], Value::Null);
    let bought = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "a1", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let over = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "a2", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(
        (over.status, over.code()),
        (StatusCode::CONFLICT, "spend_limit"),
        "{}",
        over.body
    );
    assert_eq!(
        (
            &over.body["span"],
            &over.body["spend_limit"],
            &over.body["left"],
            &over.body["currency"]
        ),
        (&json!("day"), &json!(300), &json!(100), &json!("GBP"))
    );
    // Raised: the old limit stays until the cooling-off period ends.
    let raised = app
        .put(
            "/payers/ann/limits",
            &json!({"limits": {"GBP": {"day": 5000}}}),
        )
        .await;
    let day = &raised.body["limits"]["GBP"]["day"];
    assert_eq!(
        (&day["limit"], &day["raise"]["limit"]),
        (&json!(300), &json!(5000)),
        "{day}"
    );
    let applies_at =
        tally_domain::time::parse_rfc3339(day["raise"]["applies_at"].as_str().unwrap()).unwrap();
    let wait = applies_at - Timestamp::now();
    assert!(wait > SignedDuration::from_hours(23), "{wait}");
    let still = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "a3", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(still.code(), "spend_limit", "{}", still.body);
    // Lowered, to zero: at once, for every purchase.
    let zero = app
        .put(
            "/payers/ann/limits",
            &json!({"limits": {"GBP": {"day": 0}}}),
        )
        .await;
    assert_eq!(
        zero.body["limits"]["GBP"]["day"]["left"], 0,
        "{}",
        zero.body
    );
    let none = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "a4", "quantity": 1, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(
        (none.code(), &none.body["left"]),
        ("spend_limit", &json!(0))
    );
    // A void gives the amount back to the day it was spent in, once.
    for _ in 0..2 {
        let voided = app
            .post("/draws/d/purchases/a1/void", &json!({"reason": "refund"}))
            .await;
        assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    }
    let read = app.get("/payers/ann/limits").await;
    assert_eq!(
        read.body["limits"]["GBP"]["day"]["spent"], 0,
        "{}",
        read.body
    );
    let wrong = app
        .put(
            "/payers/ann/limits",
            &json!({"limits": {"gbp": {"day": 1}}}),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.body);
}

#[tokio::test]
async fn an_exclusion_refuses_purchases_holds_payments_and_free_entries_and_never_shortens() {
    let app = spawn_app().await;
    priced_draws(&app, &["d", "e"]).await;
    let held = app
        .post(
            "/draws/d/holds",
            &json!({"hold_id": "h1", "quantity": 1, "payer_id": "bob"}),
        )
        .await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    let week = rfc3339_millis(Timestamp::now() + SignedDuration::from_hours(24 * 7));
    let excluded = app
        .put("/payers/bob/exclusion", &json!({"excluded_until": week}))
        .await;
    assert_eq!(excluded.status, StatusCode::OK, "{}", excluded.body);
    assert_eq!(excluded.body["excluded"], true);
    let until = excluded.body["excluded_until"].clone();
    for (path, body) in [
        (
            "/draws/e/purchases",
            json!({"payment_id": "b1", "quantity": 1, "payer_id": "bob"}),
        ),
        (
            "/draws/e/purchases",
            json!({"payment_id": "b2", "quantity": 1, "payer_id": "bob",
                                      "channel": "postal"}),
        ),
        (
            "/draws/e/holds",
            json!({"hold_id": "h2", "quantity": 1, "payer_id": "bob"}),
        ),
        (
            "/draws/d/purchases",
            json!({"payment_id": "b3", "hold_id": "h1"}),
        ),
    ] {
        let refused = app.post(path, &body).await;
        assert_eq!(
            (refused.status, refused.code()),
            (StatusCode::FORBIDDEN, "payer_excluded"),
            "{body}: {}",
            refused.body
        );
        assert_eq!(refused.body["excluded_until"], until);
    }
    // Shorter, or past: the one in force stays; later or open-ended: extended.
    let day = rfc3339_millis(Timestamp::now() + SignedDuration::from_hours(24));
    let shorter = app
        .put("/payers/bob/exclusion", &json!({"excluded_until": day}))
        .await;
    assert_eq!(shorter.body["excluded_until"], until, "{}", shorter.body);
    let past = app
        .put(
            "/payers/bob/exclusion",
            &json!({"excluded_until": "2020-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(past.code(), "invalid_excluded_until", "{}", past.body);
    let open = app.put("/payers/bob/exclusion", &json!({})).await;
    assert_eq!(
        (&open.body["excluded"], &open.body["excluded_until"]),
        (&json!(true), &Value::Null)
    );
    let still = app
        .put("/payers/bob/exclusion", &json!({"excluded_until": week}))
        .await;
    assert_eq!(still.body["excluded_until"], Value::Null, "{}", still.body);
    // Others buy as before.
    let other = app
        .post(
            "/draws/e/purchases",
            &json!({"payment_id": "c1", "quantity": 1, "payer_id": "cy"}),
        )
        .await;
    assert_eq!(other.status, StatusCode::CREATED, "{}", other.body);
    // Each exclusion set is an operator's action: one journal entry each (the refused
    // past end none), naming the payer by its key, never by its id.
    let journal = app.get("/journal").await;
    let set: Vec<&Value> = journal.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "exclusion_set")
        .collect();
    assert_eq!(set.len(), 4, "{}", journal.body);
    for entry in set {
        assert!(
            entry["target"].as_str().unwrap().starts_with("payer/"),
            "{entry}"
        );
        assert!(!entry.to_string().contains("bob"), "{entry}");
    }
}

/// M1, X1: buyers in many tasks spread over three draws; no payer passes a window's
/// limit, the excluded payer commits nothing after the exclusion returned, and voids,
/// each sent twice at once, give back exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_payer_passes_a_limit_across_draws_and_an_exclusion_stops_every_sale() {
    const PAYERS: usize = 6;
    let app = spawn_app().await;
    let draws = ["d0", "d1", "d2"];
    priced_draws(&app, &draws).await;
    let limits = [700u64, 1_000, 300, 0, 1_200, 900];
    for (i, day) in limits.iter().enumerate() {
        let week = if i == 4 { json!(800) } else { json!(null) };
        let body = json!({"limits": {"GBP": {"day": day, "week": week}}});
        let set = app.put(&format!("/payers/p{i}/limits"), &body).await;
        assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    }
    let mut tasks = Vec::new();
    for task in 0..24u64 {
        let router = app.router.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(task);
            let mut answers = Vec::new();
            for n in 0..12 {
                let payer = rng.random_range(0..PAYERS + 1);
                let draw = draws[rng.random_range(0..draws.len())];
                let body = json!({"payment_id": format!("t{task}-{n}"), "payer_id": format!("p{payer}"),
                                  "quantity": rng.random_range(1..=3)});
                let reply = settle(&router, &format!("/draws/{draw}/purchases"), &body.to_string()).await;
                answers.push((payer, reply.status, reply.code().to_owned()));
            }
            answers
        }));
    }
    // Payer p6 excludes themselves while the sale runs.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let excluded = app.put("/payers/p6/exclusion", &json!({})).await;
    assert_eq!(excluded.status, StatusCode::OK, "{}", excluded.body);
    let at_exclusion = of_kind(&scan(&app.store).await, "purchase")
        .iter()
        .filter(|p| attr_s(p, "payer_id") == "p6")
        .count();
    for task in tasks {
        for (payer, status, code) in task.await.unwrap() {
            assert!(
                status == StatusCode::CREATED
                    || code == "spend_limit"
                    || (payer == 6 && code == "payer_excluded"),
                "p{payer}: {status} {code}"
            );
        }
    }
    let items = scan(&app.store).await;
    let after = of_kind(&items, "purchase")
        .iter()
        .filter(|p| attr_s(p, "payer_id") == "p6")
        .count();
    assert_eq!(
        after, at_exclusion,
        "p6 bought after the exclusion returned"
    );
    let spend = spend_on_record(&items);
    for (i, day) in limits.iter().enumerate() {
        let (spent, counted) = spend.get(&format!("p{i}")).copied().unwrap_or_default();
        let most = if i == 4 { 800 } else { *day };
        assert!(spent <= most, "p{i} spent {spent} over {most}");
        assert_eq!(
            spent, counted,
            "p{i}: the day's count is not what the purchases spent"
        );
        // Every limit was reached as far as 1 to 3 tickets of 100 could.
        assert!(
            most - spent < 100 || most == 0,
            "p{i} spent only {spent} of {most}"
        );
    }
    // Void every second purchase of each payer, twice at once.
    let purchases: Vec<(String, String)> = of_kind(&items, "purchase")
        .iter()
        .map(|p| {
            (
                attr_s(p, "draw_id").to_owned(),
                attr_s(p, "payment_id").to_owned(),
            )
        })
        .collect();
    let mut voids = Vec::new();
    for (draw, payment) in purchases.into_iter().step_by(2) {
        for _twin in 0..2 {
            let (router, path) = (
                app.router.clone(),
                format!("/draws/{draw}/purchases/{payment}/void"),
            );
            voids.push(tokio::spawn(async move {
                settle_request(&router, Method::POST, &path, r#"{"reason": "refund"}"#).await
            }));
        }
    }
    for void in voids {
        let reply = void.await.unwrap();
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    for (payer, (spent, counted)) in spend_on_record(&scan(&app.store).await) {
        assert_eq!(spent, counted, "{payer}: voids gave back other than once");
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
