//! H5 under concurrency: 48 clients at once on four processes, holding by lucky dip and
//! chosen numbers under payer ids they share or make up for each hold, releasing and
//! holding again at once, paying and buying, while holds end on the clock. Then every image
//! the table's stream recorded of a stripe or a payer's allowance is read back: no payer's
//! holds ever took more than `max_held_per_payer` numbers, no stripe ever carried more hold
//! marks than its share, so no draw ever had more live held numbers than its
//! `max_held_percent`; and each item's count agrees with what it carries (H6).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{Method, StatusCode};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_dynamo::AttributeValue;
use serde_json::{Value, json};
use tally::store::limits::STRIPE_HOLD_MARKS;
use tally_domain::stripes::{StripeLayout, held_caps};

use crate::helpers::{settle, settle_request, tickets_of};
use crate::hold_app::{HoldApp, Ticker};
use crate::stream::stream_records;

const TOTAL: u64 = 2_000;
const STRIPES: u32 = 20;
const CLIENTS: u64 = 48;
const STEPS: u64 = 12;
/// Also each payer's cap on held numbers (the default, one purchase's worth).
const MAX_PER_PURCHASE: u64 = 8;
/// Payer ids that several clients share; the other holds make one up.
const SHARED_PAYERS: u64 = 6;
/// Numbers many choosers want.
const HOT: u64 = 80;

/// Answers a client may get besides a success: each a documented refusal.
const REFUSALS: &[&str] = &[
    "payer_hold_limit",
    "holds_full",
    "numbers_taken",
    "tickets_held",
    "sold_out",
    "tickets_fragmented",
    "hold_expired",
];

fn hold_body(rng: &mut StdRng, hold: &str, payer: &str) -> Value {
    if rng.random_range(0..2) == 0 {
        let quantity = rng.random_range(1..=MAX_PER_PURCHASE);
        json!({"hold_id": hold, "quantity": quantity, "payer_id": payer})
    } else {
        let mut numbers: Vec<u64> = (0..rng.random_range(1..=3))
            .map(|_| rng.random_range(1..=HOT))
            .collect();
        numbers.sort_unstable();
        numbers.dedup();
        json!({"hold_id": hold, "numbers": numbers, "payer_id": payer})
    }
}

fn refused(reply: &crate::helpers::Reply, what: &str) {
    assert!(
        reply.status == StatusCode::CONFLICT && REFUSALS.contains(&reply.code()),
        "{what}: {} {}",
        reply.status,
        reply.body
    );
}

/// One client: holds it made and still means to pay or release, by id, with its body.
async fn client(router: Router, client: u64) {
    let mut rng = StdRng::seed_from_u64(client);
    let shared = format!("shared-{}", client % SHARED_PAYERS);
    let mut mine: Vec<(String, Value)> = Vec::new();
    for step in 0..STEPS {
        let id = format!("c{client}-{step}");
        match rng.random_range(0..5) {
            // A hold under the shared payer, or under a payer made up for it.
            0 | 1 => {
                let payer = if rng.random_range(0..2) == 0 {
                    shared.clone()
                } else {
                    format!("made-up-{id}")
                };
                let body = hold_body(&mut rng, &id, &payer);
                let reply = settle(&router, "/draws/race/holds", &body.to_string()).await;
                if reply.status == StatusCode::CREATED {
                    mine.push((id, body));
                } else {
                    refused(&reply, &id);
                }
            }
            // Release a hold and hold the same again at once.
            2 if !mine.is_empty() => {
                let (old, mut body) = mine.swap_remove(rng.random_range(0..mine.len()));
                let path = format!("/draws/race/holds/{old}");
                let released = settle_request(&router, Method::DELETE, &path, "").await;
                assert_eq!(released.status, StatusCode::OK, "{}", released.body);
                body["hold_id"] = json!(id);
                let again = settle(&router, "/draws/race/holds", &body.to_string()).await;
                if again.status == StatusCode::CREATED {
                    mine.push((id, body));
                } else {
                    refused(&again, &id);
                }
            }
            // Pay for a hold.
            3 if !mine.is_empty() => {
                let (hold, _) = mine.swap_remove(rng.random_range(0..mine.len()));
                let body = json!({"payment_id": id, "hold_id": hold});
                let paid = settle(&router, "/draws/race/purchases", &body.to_string()).await;
                if paid.status != StatusCode::CREATED {
                    refused(&paid, &id);
                }
            }
            _ => {
                let quantity = rng.random_range(1..=4);
                let body = json!({"payment_id": id, "quantity": quantity});
                let bought = settle(&router, "/draws/race/purchases", &body.to_string()).await;
                match bought.status {
                    StatusCode::CREATED => assert_eq!(tickets_of(&bought).len() as u64, quantity),
                    _ => refused(&bought, &id),
                }
            }
        }
    }
}

fn number(value: &AttributeValue) -> i64 {
    match value {
        AttributeValue::N(n) => n.parse().unwrap(),
        other => panic!("not a number: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_mix_of_holders_payer_ids_and_holding_again_takes_more_than_the_caps() {
    let app = HoldApp::spawn_with_stream().await;
    app.draw(
        json!({"draw_id": "race", "total_tickets": TOTAL, "stripes": STRIPES,
                    "max_per_purchase": MAX_PER_PURCHASE, "hold_seconds": 60}),
    )
    .await;
    let caps = held_caps(StripeLayout::new(TOTAL, STRIPES), 25, STRIPE_HOLD_MARKS);
    assert_eq!(caps.iter().sum::<u64>(), TOTAL / 4);
    let routers = app.routers(3).await;
    // The clock runs 20 times faster than the test: a hold lives about 3 seconds.
    let app = Arc::new(app);
    let ticker = Ticker::start(app.clone(), Duration::from_millis(50));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| tokio::spawn(client(routers[(c % 4) as usize].clone(), c)))
        .collect();
    for task in clients {
        task.await.unwrap();
    }
    ticker.stop().await;
    // Every image of a stripe and of an allowance, in the order the table wrote them.
    let stripe_prefix = "DRAW#race#STRIPE#";
    let (mut stripe_images, mut allowance_images) = (0, 0);
    let mut most_per_payer: BTreeMap<String, i64> = BTreeMap::new();
    for record in stream_records(&app.app.store).await.records {
        let image = &record.change.new_image;
        let Some(AttributeValue::S(key)) = image.get("pk") else {
            continue;
        };
        if let Some(stripe) = key.strip_prefix(stripe_prefix) {
            let stripe: usize = stripe.parse().unwrap();
            let marks = image
                .keys()
                .filter(|name| {
                    name.strip_prefix('h')
                        .is_some_and(|d| d.parse::<u64>().is_ok())
                })
                .count() as u64;
            // H5: never more marks (so never more live holds) than the stripe's share.
            assert!(
                marks <= caps[stripe],
                "H5: stripe {stripe} carries {marks} marks"
            );
            // H6: the count is exact, so a mark that leaves gives its room back.
            let counted = image.get("hn").map_or(0, number) as u64;
            assert_eq!(counted, marks, "H6: stripe {stripe}");
            stripe_images += 1;
        } else if image.get("kind") == Some(&AttributeValue::S("allowance".into())) {
            let holding = image.get("holding").map_or(0, number);
            // The holds named on the allowance add up to what it counts.
            let named: i64 = image
                .iter()
                .filter(|(name, _)| name.starts_with("hold_"))
                .map(|(_, value)| match value {
                    AttributeValue::L(pair) => number(&pair[1]),
                    other => panic!("a hold named as {other:?}"),
                })
                .sum();
            assert_eq!(holding, named, "{key}");
            let payer = match image.get("payer_id") {
                Some(AttributeValue::S(payer)) => payer.clone(),
                _ => panic!("an allowance without its payer"),
            };
            let most = most_per_payer.entry(payer).or_default();
            *most = (*most).max(holding);
            allowance_images += 1;
        }
    }
    assert!(stripe_images > 200, "only {stripe_images} stripe images");
    assert!(
        allowance_images > 200,
        "only {allowance_images} allowance images"
    );
    // H5: no payer's holds ever took more than its cap; shared payers reached it.
    for (payer, most) in &most_per_payer {
        assert!(*most as u64 <= MAX_PER_PURCHASE, "H5: {payer} held {most}");
    }
    let shared_most = (0..SHARED_PAYERS)
        .map(|p| {
            most_per_payer
                .get(&format!("shared-{p}"))
                .copied()
                .unwrap_or(0)
        })
        .max()
        .unwrap();
    assert!(
        shared_most as u64 >= MAX_PER_PURCHASE / 2,
        "the shared payers held {shared_most} at most"
    );
}
