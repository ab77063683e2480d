//! The whole life of a raffle at once: 64 instances sell out a capped draw while others
//! void purchases, then the winners are drawn. The table keeps T1-T5 and V1, no payer
//! holds more than the cap (P1), and the winners are distinct eligible tickets (W2).
//! Buyers and operators repeat a 503 as real clients do: the answer is then the one
//! settled request's.

use std::collections::HashSet;
use std::sync::Arc;

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::json;
use tokio::sync::Mutex;

use crate::helpers::{get, settle, spawn_app, store_on, tickets_of};
use crate::invariants::{sold_tickets, voids_and_caps};

const TOTAL: u64 = 1_000;
const TASKS: usize = 64;
const PAYERS: usize = 40;
const CAP: u64 = 30;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_capped_sell_out_with_concurrent_voids_keeps_caps_voids_and_fair_winners() {
    let app = spawn_app().await;
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "life", "total_tickets": TOTAL, "max_per_purchase": 10,
                    "max_per_payer": CAP}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    // Purchases made, for the voiding tasks to pick from.
    let made: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut tasks = Vec::new();
    for task in 0..TASKS {
        let router = crate::helpers::router(store_on(app.store.table(), None).await);
        let made = made.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(task as u64);
            let (mut refused_by_cap, mut voids) = (0u32, 0u32);
            for n in 0..40 {
                // One task in eight voids a purchase someone made, now and then.
                if task % 8 == 0 && n % 3 == 0 {
                    let victim = {
                        let made = made.lock().await;
                        (!made.is_empty()).then(|| made[rng.random_range(0..made.len())].clone())
                    };
                    if let Some(payment) = victim {
                        let reply = settle(
                            &router,
                            &format!("/draws/life/purchases/{payment}/void"),
                            r#"{"reason": "chargeback"}"#,
                        )
                        .await;
                        assert_eq!(reply.status, StatusCode::OK, "void: {}", reply.body);
                        voids += 1;
                    }
                    continue;
                }
                // Few payers, many tasks: one payer buys from several instances at once.
                let payer = format!("payer-{}", rng.random_range(0..PAYERS));
                let payment = format!("t{task}-{n}");
                let quantity = rng.random_range(1..=10u64);
                let body = json!({"payment_id": payment, "quantity": quantity, "payer_id": payer});
                let reply = settle(&router, "/draws/life/purchases", &body.to_string()).await;
                match (reply.status, reply.code()) {
                    // OK: a repeat after a 503 found the purchase committed.
                    (StatusCode::CREATED | StatusCode::OK, _) => {
                        assert_eq!(tickets_of(&reply).len() as u64, quantity);
                        made.lock().await.push(payment);
                    }
                    (StatusCode::CONFLICT, "payer_limit") => {
                        assert!(reply.body["left"].as_u64().unwrap() < quantity);
                        refused_by_cap += 1;
                    }
                    (StatusCode::CONFLICT, "sold_out") => return (refused_by_cap, voids),
                    (status, code) => panic!("{payment}: {status} {code} {}", reply.body),
                }
            }
            (refused_by_cap, voids)
        }));
    }
    let (mut refused_by_cap, mut voids) = (0, 0);
    for task in tasks {
        let (r, v) = task.await.unwrap();
        refused_by_cap += r;
        voids += v;
    }
    assert!(refused_by_cap > 0, "the cap never refused a purchase");
    assert!(voids > 0, "nothing was voided");
    // Payers near their cap may leave a few tickets unsold: new payers take the rest.
    for filler in 0.. {
        let body = json!({"payment_id": format!("filler-{filler}"), "quantity": 1,
                          "payer_id": format!("filler-{filler}")});
        let reply = settle(&app.router, "/draws/life/purchases", &body.to_string()).await;
        match (reply.status, reply.code()) {
            (StatusCode::CREATED | StatusCode::OK, _) => {}
            (StatusCode::CONFLICT, "sold_out") => break,
            (status, code) => panic!("filler: {status} {code} {}", reply.body),
        }
    }

    // T1-T5, V1 and P1 on the table.
    let items = app.scan().await;
    let held = sold_tickets(&items, TOTAL);
    let voided = voids_and_caps(&items, "life", CAP);
    assert!(!voided.is_empty());
    let sold: HashSet<u64> = held.values().flatten().copied().collect();
    let draw = get(&app.router, "/draws/life").await.body;
    assert_eq!(draw["sold"], sold.len());
    assert_eq!(draw["sold"], TOTAL, "the draw did not sell out");
    assert_eq!(draw["voided"], voided.len());

    // W2: the winners come from the eligible list, which is exactly sold less voided.
    assert_eq!(
        app.post("/draws/life/close", &json!({})).await.status,
        StatusCode::OK
    );
    let drawn = app
        .post("/draws/life/winners", &json!({"prizes": 20}))
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let winners: Vec<u64> = drawn.body["prizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["ticket"].as_u64().unwrap())
        .collect();
    assert_eq!(
        winners.iter().collect::<HashSet<_>>().len(),
        20,
        "a ticket won twice"
    );
    let eligible = app.get("/draws/life/eligible").await.body;
    let bitmap = STANDARD
        .decode(eligible["bitmap"].as_str().unwrap())
        .unwrap();
    let listed: HashSet<u64> = (0..TOTAL)
        .filter(|i| bitmap[(i / 8) as usize] >> (i % 8) & 1 == 1)
        .map(|i| i + 1)
        .collect();
    let expected: HashSet<u64> = sold.difference(&voided).copied().collect();
    assert_eq!(
        listed, expected,
        "the eligible list is not sold less voided"
    );
    assert!(
        winners.iter().all(|w| expected.contains(w)),
        "a winner is not eligible"
    );
}
