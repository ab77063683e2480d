//! 64 clients at once on a draw of 1,000 numbers: choosers on a small hot set, holders
//! who pay, release or let their holds expire, and lucky dips; then the rest sells out,
//! the draw closes and its winners are drawn. H1–H4 and T1–T5 are read back from the
//! table.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{Method, StatusCode};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use crate::helpers::{attr_numbers, attr_s, get, of_kind, settle, settle_request, tickets_of};
use crate::hold_app::{HoldApp, Ticker};
use crate::invariants::sold_tickets;
use crate::winners::bitmap_tickets;
use tally_testkit::verifiers::{Verdicts, verifiers_accept};

const TOTAL: u64 = 1_000;
const CLIENTS: u64 = 64;
const PAYERS: u64 = 16;
const CAP: u64 = 90;
/// Numbers every chooser and many holders want.
const HOT: u64 = 30;

/// What the clients saw succeed: each payment's tickets, and the holds that were paid
/// for or answered as ended.
#[derive(Default)]
struct Seen {
    sold: BTreeMap<String, Vec<u64>>,
    converted: BTreeMap<String, String>,
    ended: BTreeSet<String>,
}

fn numbers(rng: &mut StdRng) -> Vec<u64> {
    let count = rng.random_range(1..=3);
    let mut numbers: Vec<u64> = (0..count)
        .map(|_| {
            if rng.random_range(0..10) < 7 {
                rng.random_range(1..=HOT)
            } else {
                rng.random_range(1..=TOTAL)
            }
        })
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    numbers
}

/// One client: 10 steps of its kind. Every answer is a success or a documented refusal.
async fn client(router: Router, client: u64) -> Seen {
    let mut rng = StdRng::seed_from_u64(client);
    let mut seen = Seen::default();
    let payer = format!("payer{}", client % PAYERS);
    for step in 0..10 {
        let payment = format!("c{client}-{step}");
        match client % 4 {
            0 | 1 => {
                let wanted = numbers(&mut rng);
                let body = json!({"payment_id": payment, "numbers": wanted, "payer_id": payer});
                // Twice, as a retried webhook would: the same answer, nothing allocated twice.
                for _ in 0..2 {
                    let reply = settle(&router, "/draws/race/purchases", &body.to_string()).await;
                    match (reply.status, reply.code()) {
                        (StatusCode::CREATED | StatusCode::OK, _) => {
                            assert_eq!(tickets_of(&reply), wanted, "{payment}");
                            seen.sold.insert(payment.clone(), wanted.clone());
                        }
                        (StatusCode::CONFLICT, "numbers_taken" | "payer_limit") => {}
                        (status, code) => panic!("{payment}: {status} {code} {}", reply.body),
                    }
                }
            }
            2 => {
                let hold = format!("h{client}-{step}");
                let body = if rng.random_range(0..2) == 0 {
                    json!({"hold_id": hold, "quantity": rng.random_range(1..=3), "payer_id": payer})
                } else {
                    json!({"hold_id": hold, "numbers": numbers(&mut rng), "payer_id": payer})
                };
                let held = settle(&router, "/draws/race/holds", &body.to_string()).await;
                match (held.status, held.code()) {
                    (StatusCode::CREATED, _) => {
                        held_alone(&router, &hold, &tickets_of(&held)).await
                    }
                    (
                        StatusCode::CONFLICT,
                        "numbers_taken" | "payer_limit" | "payer_hold_limit" | "sold_out"
                        | "tickets_held" | "holds_full",
                    ) => {
                        continue;
                    }
                    (status, code) => panic!("{hold}: {status} {code} {}", held.body),
                }
                let pay = json!({"payment_id": payment, "hold_id": hold}).to_string();
                match rng.random_range(0..4) {
                    // Abandoned: it expires on its own.
                    0 => continue,
                    1 => {
                        let path = format!("/draws/race/holds/{hold}");
                        let released = settle_request(&router, Method::DELETE, &path, "").await;
                        assert_eq!(released.status, StatusCode::OK, "{}", released.body);
                    }
                    // Pays at once, or long after the hold's 30 seconds.
                    wait => {
                        if wait == 3 {
                            tokio::time::sleep(Duration::from_millis(4_000)).await;
                        }
                        let paid = settle(&router, "/draws/race/purchases", &pay).await;
                        match (paid.status, paid.code()) {
                            (StatusCode::CREATED, _) => {
                                assert_eq!(tickets_of(&paid), tickets_of(&held), "H2: {hold}");
                                seen.sold.insert(payment.clone(), tickets_of(&paid));
                                seen.converted.insert(hold.clone(), payment.clone());
                                continue;
                            }
                            (StatusCode::CONFLICT, "hold_expired") => {}
                            (status, code) => panic!("{hold}: {status} {code} {}", paid.body),
                        }
                    }
                }
                seen.ended.insert(hold.clone());
                // An ended hold is never paid for.
                let late = settle(&router, "/draws/race/purchases", &pay).await;
                assert_eq!(late.code(), "hold_expired", "H2: {hold}: {}", late.body);
            }
            _ => {
                let body = json!({"payment_id": payment, "quantity": rng.random_range(1..=4), "payer_id": payer});
                let reply = settle(&router, "/draws/race/purchases", &body.to_string()).await;
                match (reply.status, reply.code()) {
                    (StatusCode::CREATED, _) => {
                        seen.sold.insert(payment.clone(), tickets_of(&reply));
                    }
                    (StatusCode::CONFLICT, "sold_out" | "tickets_held" | "payer_limit") => {}
                    (status, code) => panic!("{payment}: {status} {code} {}", reply.body),
                }
            }
        }
    }
    seen
}

/// H1 while the hold lives: none of its numbers is sold to anyone, and another hold of
/// them is refused.
async fn held_alone(router: &Router, hold: &str, numbers: &[u64]) {
    for number in numbers {
        let ticket = get(router, &format!("/draws/race/tickets/{number}")).await;
        let rival = json!({"hold_id": format!("{hold}-rival"), "numbers": [number],
                           "payer_id": "rival"});
        let second = settle(router, "/draws/race/holds", &rival.to_string()).await;
        let status = get(router, &format!("/draws/race/holds/{hold}")).await;
        if status.body["status"] != "held" {
            // Ended meanwhile (the clock runs fast): the number may be anyone's now.
            return;
        }
        assert_eq!(
            ticket.code(),
            "ticket_not_sold",
            "H1: {number} of {hold}: {}",
            ticket.body
        );
        assert_eq!(
            second.code(),
            "numbers_taken",
            "H1: {number} of {hold}: {}",
            second.body
        );
    }
}

#[tokio::test]
async fn holds_choosers_and_lucky_dips_at_once_never_hold_or_sell_a_number_twice() {
    let app = HoldApp::spawn().await;
    app.draw(
        json!({"draw_id": "race", "total_tickets": TOTAL, "hold_seconds": 30,
                    "max_per_payer": CAP}),
    )
    .await;
    let routers = app.routers(3).await;
    // The clock runs 10 times faster than the test: a hold lives about 3 seconds.
    let app = Arc::new(app);
    let ticker = Ticker::start(app.clone(), Duration::from_millis(100));
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|c| tokio::spawn(client(routers[(c % 4) as usize].clone(), c)))
        .collect();
    let mut seen = Seen::default();
    for task in tasks {
        let one = task.await.unwrap();
        seen.sold.extend(one.sold);
        seen.converted.extend(one.converted);
        seen.ended.extend(one.ended);
    }
    ticker.stop().await;
    // Every hold has ended: what is left sells out by lucky dip (H3).
    app.advance(60);
    let mut payer = 0;
    for n in 0.. {
        let body = json!({"payment_id": format!("rest-{n}"), "quantity": 5,
                          "payer_id": format!("rest{payer}")});
        let reply = settle(&app.app.router, "/draws/race/purchases", &body.to_string()).await;
        match (reply.status, reply.code()) {
            (StatusCode::CREATED, _) => {
                seen.sold.insert(format!("rest-{n}"), tickets_of(&reply));
            }
            (StatusCode::CONFLICT, "payer_limit") => payer += 1,
            (StatusCode::CONFLICT, "sold_out") => {
                let quantity = reply.body["remaining"].as_u64().unwrap();
                if quantity == 0 {
                    break;
                }
                let body = json!({"payment_id": format!("last-{n}"), "quantity": quantity,
                                  "payer_id": format!("last{n}")});
                let last =
                    settle(&app.app.router, "/draws/race/purchases", &body.to_string()).await;
                assert_eq!(last.status, StatusCode::CREATED, "{}", last.body);
                seen.sold.insert(format!("last-{n}"), tickets_of(&last));
            }
            (status, code) => panic!("rest: {status} {code} {}", reply.body),
        }
    }
    let items = app.app.scan().await;
    // T1, T2, T3, T5, and the table agrees with the answers; H3: every number sold once.
    let sold = sold_tickets(&items, TOTAL);
    assert_eq!(sold, seen.sold);
    assert_eq!(sold.values().map(Vec::len).sum::<usize>() as u64, TOTAL);
    // H2: a converted hold became exactly its payment's purchase; an ended one never.
    let holds = of_kind(&items, "hold");
    assert!(holds.len() > 20, "only {} holds were made", holds.len());
    for hold in &holds {
        let id = attr_s(hold, "hold_id");
        match attr_s(hold, "end") {
            "converted" => {
                let payment = attr_s(hold, "payment_id");
                assert_eq!(
                    seen.converted.get(id).map(String::as_str),
                    Some(payment),
                    "{id}"
                );
                assert_eq!(sold[payment], attr_numbers(hold, "tickets"), "H2: {id}");
            }
            _ => assert!(!seen.converted.contains_key(id), "H2: {id}"),
        }
    }
    for ended in &seen.ended {
        assert!(!seen.converted.contains_key(ended), "H2: {ended}");
    }
    let purchases = of_kind(&items, "purchase");
    // H4: no payer past the cap.
    let mut per_payer: BTreeMap<&str, u64> = BTreeMap::new();
    for purchase in &purchases {
        if let Some(payer) = purchase.get("payer_id").and_then(|p| p.as_s().ok()) {
            *per_payer.entry(payer).or_default() += attr_numbers(purchase, "tickets").len() as u64;
        }
    }
    assert!(per_payer.values().all(|&n| n <= CAP), "H4: {per_payer:?}");
    // Closed and drawn: every number is eligible, none held, and both verifiers agree.
    let closed = app.app.post("/draws/race/close", &json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let winners = app
        .app
        .post("/draws/race/winners", &json!({"prizes": 3}))
        .await;
    assert_eq!(winners.status, StatusCode::CREATED, "{}", winners.body);
    let eligible: Value = app.app.get("/draws/race/eligible").await.body;
    assert_eq!(bitmap_tickets(&eligible), (1..=TOTAL).collect::<Vec<_>>());
    let proof = app.app.get("/draws/race/winners").await.body;
    assert_eq!(
        verifiers_accept("holds", &proof, &eligible, None, None),
        Verdicts::BOTH_PASS
    );
}
