//! Race-freedom: many independent instances sell out one draw at once, with retried and
//! conflicting payments; then the table is read back and every invariant is checked.

use std::collections::{BTreeMap, HashMap};

use axum::http::StatusCode;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::json;

use crate::helpers::{get, settle, spawn_app, store_on, tickets_of};
use crate::invariants::sold_tickets;

const TOTAL: u64 = 1_000;
const TASKS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Original,
    /// The same body again, sent while the original may still be in flight.
    Retry,
    /// The same payment id with another quantity.
    Conflicting,
}

struct Outcome {
    payment: String,
    quantity: u64,
    kind: Kind,
    status: StatusCode,
    code: String,
    tickets: Vec<u64>,
    remaining: Option<u64>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_buyers_sell_out_a_draw_without_duplicates_or_leaks() {
    let app = spawn_app().await;
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "race", "total_tickets": TOTAL, "max_per_purchase": 10}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);

    // 320 payments of 1..=10 tickets ask for about 1,760 tickets: more than the draw holds.
    let mut rng = StdRng::seed_from_u64(42);
    let mut jobs = Vec::new();
    for i in 0..320 {
        let payment = format!("pay-{i}");
        let quantity = rng.random_range(1..=10u64);
        jobs.push((payment.clone(), quantity, Kind::Original));
        if i % 5 == 0 {
            jobs.push((payment.clone(), quantity, Kind::Retry));
        }
        if i % 15 == 0 {
            jobs.push((payment.clone(), quantity, Kind::Retry));
        }
        if i % 7 == 3 {
            jobs.push((payment, quantity % 10 + 1, Kind::Conflicting));
        }
    }
    // Neighbouring jobs (an original and its retries) go to different tasks, so they run
    // at the same moment.
    let mut queues: Vec<Vec<(String, u64, Kind)>> = vec![Vec::new(); TASKS];
    for (index, job) in jobs.into_iter().enumerate() {
        queues[index % TASKS].push(job);
    }
    let mut tasks = Vec::new();
    for queue in queues {
        // Each task is its own instance: its own SDK client and caches, one shared table.
        let router = crate::helpers::router(store_on(app.store.table(), None).await);
        tasks.push(tokio::spawn(async move {
            let mut outcomes = Vec::new();
            for (payment, quantity, kind) in queue {
                let body = json!({"payment_id": payment, "quantity": quantity});
                let reply = settle(&router, "/draws/race/purchases", &body.to_string()).await;
                let tickets = if reply.status.is_success() {
                    tickets_of(&reply)
                } else {
                    Vec::new()
                };
                outcomes.push(Outcome {
                    payment,
                    quantity,
                    kind,
                    status: reply.status,
                    code: reply.code().to_owned(),
                    tickets,
                    remaining: reply.body["remaining"].as_u64(),
                });
            }
            outcomes
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.extend(task.await.unwrap());
    }

    // Every answer is one of the expected ones.
    for o in &outcomes {
        match (o.status, o.code.as_str()) {
            (StatusCode::CREATED, _) | (StatusCode::OK, _) => {
                assert_eq!(o.tickets.len() as u64, o.quantity, "{}", o.payment);
            }
            (StatusCode::CONFLICT, "sold_out") => {
                assert!(
                    o.remaining.unwrap() < o.quantity,
                    "sold_out with room for {}",
                    o.payment
                )
            }
            (StatusCode::CONFLICT, "idempotency_conflict") => {}
            (status, code) => panic!("{}: unexpected {status} {code}", o.payment),
        }
    }
    // T4: per payment id one winning body, one allocation, identical replays.
    let mut by_payment: HashMap<&str, Vec<&Outcome>> = HashMap::new();
    for o in &outcomes {
        by_payment.entry(&o.payment).or_default().push(o);
    }
    let mut winners: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (payment, answers) in &by_payment {
        let successes: Vec<&&Outcome> = answers.iter().filter(|o| o.status.is_success()).collect();
        let created = successes
            .iter()
            .filter(|o| o.status == StatusCode::CREATED)
            .count();
        if successes.is_empty() {
            continue;
        }
        // None when the creating answer was a 503 and its repeat found the purchase.
        assert!(created <= 1, "{payment}: {created} purchases created");
        let first = &successes[0];
        for other in &successes {
            assert_eq!(other.tickets, first.tickets, "{payment}: replay differs");
            assert_eq!(other.quantity, first.quantity, "{payment}: two bodies won");
        }
        // A retry of the winning body is never told that the draw sold out: a refusal
        // rests on a read of the payment no earlier than the cursors it counted.
        for o in answers.iter().filter(|o| o.quantity == first.quantity) {
            assert!(
                o.status.is_success(),
                "{payment}: a retry of the winning body was answered {} {}",
                o.status,
                o.code
            );
        }
        for o in answers.iter().filter(|o| o.code == "idempotency_conflict") {
            assert_ne!(
                o.quantity, first.quantity,
                "{payment}: same body called a conflict"
            );
        }
        winners.insert(payment.to_string(), first.tickets.clone());
    }
    assert!(
        outcomes
            .iter()
            .any(|o| o.kind == Kind::Retry && o.status == StatusCode::OK)
    );
    assert!(
        outcomes
            .iter()
            .any(|o| o.kind != Kind::Original && o.code == "idempotency_conflict")
    );
    assert!(outcomes.iter().any(|o| o.code == "sold_out"));

    // Read the table back: T1, T2, T3, T5, every number sold, and the answers agree.
    let held = sold_tickets(&app.scan().await, TOTAL);
    assert_eq!(held, winners, "table and answers differ");
    let sold: u64 = held.values().map(|t| t.len() as u64).sum();
    assert_eq!(sold, TOTAL);
    // sold = sum of the cursors = TOTAL, and the API says so.
    let draw = get(&app.router, "/draws/race").await.body;
    assert_eq!(draw["sold"], TOTAL);
    assert_eq!(draw["remaining"], 0);

    // A retried payment after the sell-out still gets its own tickets back.
    let (payment, tickets) = winners.iter().next().unwrap();
    let replay = app
        .post(
            "/draws/race/purchases",
            &json!({"payment_id": payment, "quantity": tickets.len()}),
        )
        .await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(&tickets_of(&replay), tickets);
}

/// T4 where it is hardest: every payment is sent twice at once, by two instances, while a
/// small draw sells out. Both answers of a payment agree: both get the same tickets, or
/// both are told the draw is sold out. Never one purchase and one refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twin_payments_at_the_sell_out_get_the_same_answer() {
    const TICKETS: u64 = 24;
    const PAYMENTS: usize = 40;
    let app = spawn_app().await;
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "twins", "total_tickets": TICKETS, "max_per_purchase": 2}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let mut tasks = Vec::new();
    for _ in 0..2 {
        for i in 0..PAYMENTS {
            let router = crate::helpers::router(store_on(app.store.table(), None).await);
            let quantity = 1 + (i % 2) as u64;
            tasks.push(tokio::spawn(async move {
                let body = json!({"payment_id": format!("pay-{i}"), "quantity": quantity});
                let reply = settle(&router, "/draws/twins/purchases", &body.to_string()).await;
                let tickets = if reply.status.is_success() {
                    tickets_of(&reply)
                } else {
                    Vec::new()
                };
                (i, reply.status, reply.code().to_owned(), tickets)
            }));
        }
    }
    let mut answers: BTreeMap<usize, Vec<(StatusCode, String, Vec<u64>)>> = BTreeMap::new();
    for task in tasks {
        let (i, status, code, tickets) = task.await.unwrap();
        answers.entry(i).or_default().push((status, code, tickets));
    }
    let mut sold = 0;
    let mut refused = 0;
    for (i, pair) in &answers {
        let (a, b) = (&pair[0], &pair[1]);
        if a.0.is_success() || b.0.is_success() {
            assert!(
                a.0.is_success() && b.0.is_success(),
                "pay-{i}: answered {} {} and {} {}",
                a.0,
                a.1,
                b.0,
                b.1
            );
            assert_eq!(a.2, b.2, "pay-{i}: the twins got different tickets");
            let created = [a.0, b.0]
                .iter()
                .filter(|s| **s == StatusCode::CREATED)
                .count();
            assert!(created <= 1, "pay-{i}: {created} purchases created");
            sold += a.2.len() as u64;
        } else {
            assert_eq!((a.1.as_str(), b.1.as_str()), ("sold_out", "sold_out"));
            refused += 1;
        }
    }
    assert_eq!(sold, TICKETS);
    assert!(
        refused > 0,
        "every payment was served: the draw never sold out"
    );
}
