//! J1: every operator action has exactly one journal entry, written in the action's own
//! transaction, numbered without gap or repeat and chained by hash; a buyer's purchase
//! writes none; an action repeated after a lost answer is journalled once. Where callers
//! are bound to sources, only a caller bound to every source reads the journal.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use tally::store::Store;
use tally_domain::journal::{Action, Entry, Verifier};
use tally_testkit::dynamodb::endpoint;
use tally_testkit::fault_proxy::{FaultProxy, Faults};
use tally_testkit::http::settle_request;

use crate::faults::faulty_instance;
use crate::helpers::{TestApp, assert_problem, spawn_app};

/// Every entry, read back from the table, checked: numbers 1..=last, each linked to the
/// one before, the head's hash that of the last.
pub async fn checked_journal(store: &Store) -> Vec<Entry> {
    let head = store.journal_head().await.unwrap();
    let entries = store.journal_entries(1, head.last).await.unwrap();
    let mut verifier = Verifier::default();
    for entry in &entries {
        verifier.check(entry).unwrap();
    }
    assert_eq!(verifier.finish(&head), Ok(head.last));
    entries
}

/// How many entries name each (action, target).
fn tally_of(entries: &[Entry]) -> BTreeMap<(Action, String), usize> {
    let mut counts = BTreeMap::new();
    for entry in entries {
        *counts
            .entry((entry.draft.action, entry.draft.target.clone()))
            .or_default() += 1;
    }
    counts
}

async fn sell(app: &TestApp, draw: &str, payments: usize) {
    app.create_draw(&json!({"draw_id": draw, "total_tickets": 1_000}))
        .await;
    for i in 0..payments {
        let reply = app
            .post(
                &format!("/draws/{draw}/purchases"),
                &json!({"payment_id": format!("{draw}-p{i}"), "quantity": 2, "payer_id": "ann"}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }
}

/// Posts `count` orders into the fast series `series`; returns their numbers.
async fn numbered(app: &TestApp, series: &str, count: usize) -> Vec<String> {
    app.define_series(
        series,
        &json!({"format": format!("{series}{{seq:5}}"), "reset": "never"}),
    )
    .await;
    app.post_range(series, 0, count).await
}

/// Sends `body` to `path` until it settles, twice (a client's repeat after a lost answer),
/// and expects `2xx` both times.
async fn twice(router: &axum::Router, method: Method, path: &str, body: &Value) {
    for _repeat in 0..2 {
        let reply = settle_request(router, method.clone(), path, &body.to_string()).await;
        assert!(
            reply.status.is_success(),
            "{method} {path}: {} {}",
            reply.status,
            reply.body
        );
    }
}

/// What operator `n` does besides voids: creates a draw and declares its beacon, defines
/// a series and changes it (an even one its ranges, an odd one its format), then moves its
/// counter; each call twice. Returns the (action, target) each should journal once.
async fn operate(router: &axum::Router, n: usize) -> Vec<(Action, String)> {
    let (draw, series) = (format!("op-{n}"), format!("OP{n}X"));
    let draw_body = json!({"draw_id": draw, "total_tickets": 100});
    twice(router, Method::POST, "/draws", &draw_body).await;
    let beacon = json!({"beacon": {"network": "quicknet"}});
    twice(router, Method::PATCH, &format!("/draws/{draw}"), &beacon).await;
    let path = format!("/series/{series}");
    let first = json!({"from": 1, "to": 100, "authority_ref": "R1"});
    let (definition, change, changed) = if n.is_multiple_of(2) {
        let second = json!({"from": 101, "to": 200, "authority_ref": "R2"});
        (
            json!({"format": format!("{series}-{{seq:4}}"), "reset": "never", "ranges": [first]}),
            json!({"ranges": [first, second]}),
            Action::RangesChanged,
        )
    } else {
        (
            json!({"format": format!("{series}-{{seq:4}}"), "reset": "never"}),
            json!({"format": format!("{series}/{{seq:5}}")}),
            Action::SeriesChanged,
        )
    };
    twice(router, Method::PUT, &path, &definition).await;
    twice(router, Method::PATCH, &path, &change).await;
    let moved = json!({"next": 10, "reason": "paper invoices 1-9"});
    twice(router, Method::PATCH, &path, &moved).await;
    let (draw, series) = (format!("draw/{draw}"), format!("series/{series}"));
    vec![
        (Action::DrawCreated, draw.clone()),
        (Action::DrawChanged, draw),
        (Action::SeriesDefined, series.clone()),
        (changed, series.clone()),
        (Action::CounterMoved, series),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_operators_journal_each_action_once_in_one_unbroken_chain() {
    let app = spawn_app().await;
    let draws = ["j-a", "j-b", "j-c"];
    for draw in draws {
        sell(&app, draw, 12).await;
    }
    let orders = numbered(&app, "JV", 20).await;
    let setup = checked_journal(&app.store).await;
    let actions: Vec<Action> = setup.iter().map(|e| e.draft.action).collect();
    assert_eq!(
        actions,
        [Action::DrawCreated; 3]
            .into_iter()
            .chain([Action::SeriesDefined])
            .collect::<Vec<_>>(),
        "purchases and orders are not journalled, the draws and the series are"
    );

    // Twelve operators at once: each voids its share of purchases (some twice), voids
    // orders, creates and changes a draw, defines and changes a series and moves its
    // counter, and the last closes a draw while voids of it still run.
    let mut tasks = Vec::new();
    for operator in 0..12usize {
        let router = app.router.clone();
        let orders = orders.clone();
        let draws = draws.map(str::to_owned);
        tasks.push(tokio::spawn(async move {
            let draw = &draws[operator % 3];
            for i in (operator / 3..12).step_by(4) {
                let path = format!("/draws/{draw}/purchases/{draw}-p{i}/void");
                for _repeat in 0..=(i % 2) {
                    let reply =
                        settle_request(&router, Method::POST, &path, r#"{"reason":"refund"}"#)
                            .await;
                    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
                }
            }
            for number in orders.iter().skip(operator).step_by(12) {
                let path = format!("/series/JV/orders/{number}/void");
                let reply =
                    settle_request(&router, Method::POST, &path, r#"{"reason":"cancelled"}"#).await;
                assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            }
            if operator < 2 {
                let path = format!("/draws/{}/close", draws[operator]);
                let reply = settle_request(&router, Method::POST, &path, "{}").await;
                assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            }
            operate(&router, operator).await
        }));
    }
    let mut operated = Vec::new();
    for task in tasks {
        operated.extend(task.await.unwrap());
    }
    // A close repeated changes nothing and journals nothing.
    let again = app.post("/draws/j-a/close", &json!({})).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);

    let entries = checked_journal(&app.store).await;
    let counts = tally_of(&entries);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
    let mut expected = setup.len() + 3 * 12 + orders.len() + 2 + operated.len();
    assert_eq!(entries.len(), expected, "{counts:?}");
    for action in &operated {
        assert!(counts.contains_key(action), "{action:?} is not journalled");
    }
    // What changed, and never a secret: a draw's entry has its seed's commitment only.
    let created = entries
        .iter()
        .find(|e| e.draft.target == "draw/op-0" && e.draft.action == Action::DrawCreated)
        .unwrap();
    let change: Value = serde_json::from_str(&created.draft.change).unwrap();
    assert_eq!(change["total_tickets"], 100);
    let keys: Vec<&String> = change.as_object().unwrap().keys().collect();
    assert!(
        keys.iter()
            .all(|k| !matches!(k.as_str(), "seed" | "key" | "perm_key" | "instant_key")),
        "{keys:?}"
    );
    let moved = entries
        .iter()
        .find(|e| e.draft.action == Action::CounterMoved)
        .unwrap();
    let change: Value = serde_json::from_str(&moved.draft.change).unwrap();
    assert_eq!(
        (change["from"].clone(), change["next"].clone()),
        (json!(1), json!(10))
    );
    for draw in draws {
        for i in 0..12 {
            let target = format!("draw/{draw}/purchase/{draw}-p{i}");
            assert!(counts.contains_key(&(Action::PurchaseVoided, target)));
        }
    }
    for number in &orders {
        let target = format!("series/JV/order/{number}");
        assert!(counts.contains_key(&(Action::OrderVoided, target)));
    }
    assert!(counts.contains_key(&(Action::DrawClosed, "draw/j-a".to_owned())));
    assert!(counts.contains_key(&(Action::DrawClosed, "draw/j-b".to_owned())));
    assert!(entries.iter().all(|e| e.draft.caller.as_str() == "local"));

    // What the route answers is what the table holds, page by page.
    let mut from = 1;
    let mut read = Vec::new();
    loop {
        let page = app.get(&format!("/journal?from={from}&limit=7")).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        read.extend(page.body["entries"].as_array().unwrap().iter().cloned());
        match page.body["next_from"].as_u64() {
            Some(next) => from = next,
            None => break,
        }
    }
    let numbers: Vec<u64> = read.iter().map(|e| e["number"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (1..=expected as u64).collect::<Vec<_>>());
    let last = &read[expected - 1];
    assert_eq!(
        last["hash"],
        json!(tally_domain::chain::to_hex(&entries[expected - 1].hash))
    );
    assert!(read.iter().all(|e| e["caller"] == "local"));

    // A page also ends by weight: at the entry that reaches it, the next one leading on.
    for max_bytes in [1, 3_000] {
        let (mut from, mut numbers, mut pages) = (Some(1), Vec::new(), 0);
        while let Some(start) = from {
            let page = app
                .store
                .journal_page(start, (1_000, max_bytes))
                .await
                .unwrap();
            assert!(!page.entries.is_empty());
            numbers.extend(page.entries.iter().map(|e| e.number));
            from = page.next_from;
            pages += 1;
        }
        assert_eq!(numbers, (1..=expected as u64).collect::<Vec<_>>());
        if max_bytes == 1 {
            assert_eq!(pages, expected);
        } else {
            assert!(pages > 1 && pages < expected, "{pages} pages of {expected}");
        }
    }

    // The third draw's close, after its voids: one more entry.
    let closed = app.post("/draws/j-c/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    expected += 1;
    assert_eq!(checked_journal(&app.store).await.len(), expected);
}

#[tokio::test]
async fn a_page_of_the_journal_takes_a_number_and_a_limit_only() {
    let app = spawn_app().await;
    let empty = app.get("/journal").await;
    assert_eq!(empty.status, StatusCode::OK, "{}", empty.body);
    assert_eq!(
        empty.body,
        json!({"entries": [], "last": 0, "next_from": Value::Null})
    );
    for bad in ["from=0", "from=-1", "from=x", "from=18446744073709551616"] {
        let reply = app.get(&format!("/journal?{bad}")).await;
        assert_problem(&reply, StatusCode::BAD_REQUEST, "invalid_from");
    }
    let reply = app.get("/journal?limit=1001").await;
    assert_problem(&reply, StatusCode::BAD_REQUEST, "invalid_limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn operator_actions_repeated_under_lost_answers_and_errors_are_journalled_once_each() {
    const PAYMENTS: usize = 24;
    let app = spawn_app().await;
    sell(&app, "jf", PAYMENTS).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        throttle: 0.1,
        error_before: 0.1,
        error_after: 0.15,
        lost_after: 0.15,
        operations: Some(vec!["TransactWriteItems".to_owned()]),
        ..Faults::default()
    });
    // Two instances void every purchase at once, as a retried refund webhook would, and
    // the first's four operators create and change draws and series and move counters,
    // each call twice, each repeating its 503s.
    let mut tasks = Vec::new();
    for twin in 0..2 {
        for chunk in 0..4usize {
            let instance = faulty_instance(&proxy, app.table(), Duration::from_secs(10)).await;
            tasks.push(tokio::spawn(async move {
                for i in (chunk..PAYMENTS).step_by(4) {
                    let path = format!("/draws/jf/purchases/jf-p{i}/void");
                    let reply =
                        settle_request(&instance, Method::POST, &path, r#"{"reason":"refund"}"#)
                            .await;
                    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
                }
                if twin == 0 {
                    operate(&instance, chunk).await
                } else {
                    Vec::new()
                }
            }));
        }
    }
    let mut operated = std::collections::BTreeSet::new();
    for task in tasks {
        operated.extend(task.await.unwrap());
    }
    let counts = proxy.counts();
    assert!(
        counts.lost_after > 0 && counts.errors_after > 0,
        "not every fault happened: {counts:?}"
    );
    let entries = checked_journal(&app.store).await;
    let tally = tally_of(&entries);
    assert_eq!(entries.len(), 1 + PAYMENTS + operated.len(), "{tally:?}");
    assert!(tally.values().all(|&n| n == 1), "{tally:?}");
    assert!(operated.iter().all(|action| tally.contains_key(action)));
    let draw = app.get("/draws/jf").await;
    assert_eq!(draw.body["voided"], json!(2 * PAYMENTS), "{}", draw.body);
}

#[tokio::test]
async fn winners_and_a_redraw_are_journalled_once_and_repeats_add_nothing() {
    let app = spawn_app().await;
    sell(&app, "jw", 6).await;
    let closed = app.post("/draws/jw/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    for _repeat in 0..2 {
        let drawn = app.post("/draws/jw/winners", &json!({"prizes": 2})).await;
        assert!(drawn.status.is_success(), "{}", drawn.body);
        let redrawn = app
            .post(
                "/draws/jw/winners/1/redraw",
                &json!({"reason": "winner unreachable"}),
            )
            .await;
        assert!(redrawn.status.is_success(), "{}", redrawn.body);
    }
    let entries = checked_journal(&app.store).await;
    let actions: Vec<Action> = entries.iter().map(|e| e.draft.action).collect();
    assert_eq!(
        actions,
        [
            Action::DrawCreated,
            Action::DrawClosed,
            Action::WinnersDrawn,
            Action::Redraw
        ]
    );
    let change: Value = serde_json::from_str(&entries[3].draft.change).unwrap();
    assert_eq!(change["prize"], 1);
    assert_eq!(change["reason"], "winner unreachable");
}
