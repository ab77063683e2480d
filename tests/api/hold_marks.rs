//! Hold marks leave their stripe (H6): a hold's mark goes when the hold is released, paid
//! for, or found ended by a later hold of that stripe, and a stripe carries at most its
//! cap of marks. Thousands of holds come and go on one stripe, their marks filling its cap
//! a dozen times over; its item stays within a fixed size, so every write of it costs the
//! same.

use std::collections::HashMap;
use std::sync::Arc;
use tally_domain::time::Epoch;

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use serde_json::json;
use tally::store::item_units;
use tally::store::limits::STRIPE_HOLD_MARKS;

use crate::helpers::{Item, settle};
use crate::hold_app::HoldApp;

const TOTAL: u64 = 20_000;
/// Holders at once, each holding in turn: one, as concurrent holds of one stripe only
/// meet in its transactions, which the races of holds prove elsewhere.
const TASKS: u64 = 1;
/// A round's marks: 44 of its first hold and one of each other, 107; two rounds fill the
/// cap of 256, the rounds after it keep it full.
const HOLDS_PER_TASK: u64 = 64;
const ROUNDS: u64 = 32;

/// The stripe item of a one-stripe draw, as stored.
async fn stripe_item(app: &HoldApp, draw: &str) -> Item {
    let key = HashMap::from([(
        "pk".to_owned(),
        AttributeValue::S(format!("DRAW#{draw}#STRIPE#0")),
    )]);
    app.app
        .store
        .client()
        .get_item()
        .table_name(app.app.store.table())
        .set_key(Some(key))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap_or_default()
}

/// The hold marks of a stripe item: offset attribute to deadline.
fn hold_marks(item: &Item) -> Vec<i64> {
    item.iter()
        .filter(|(name, _)| {
            name.strip_prefix('h')
                .is_some_and(|digits| digits.parse::<u64>().is_ok())
        })
        .map(|(_, value)| value.as_n().unwrap().parse().unwrap())
        .collect()
}

/// One holder's holds of a round: the first of the most numbers one write of a stripe
/// takes (its write also sweeps as many ended marks), then holds of one number. Answers
/// how many were made; the others found the stripe at its cap.
async fn holder(router: axum::Router, round: u64, task: u64) -> u64 {
    let mut made = 0;
    for i in 0..HOLDS_PER_TASK {
        let quantity = if i == 0 { 44 } else { 1 };
        let body = json!({"hold_id": format!("h{round}-{task}-{i}"), "quantity": quantity,
                          "payer_id": format!("p{round}-{task}-{i}")});
        let reply = settle(&router, "/draws/h6/holds", &body.to_string()).await;
        match (reply.status, reply.code()) {
            (StatusCode::CREATED, _) => made += 1,
            (StatusCode::CONFLICT, "holds_full") => {}
            (status, code) => panic!("{status} {code} {}", reply.body),
        }
    }
    made
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn holds_that_come_and_go_on_one_stripe_leave_its_item_bounded_and_every_write_flat() {
    let app = Arc::new(HoldApp::spawn().await);
    // The defaults: 25% of the draw may be held, at most 256 marks on a stripe item.
    app.draw(
        json!({"draw_id": "h6", "total_tickets": TOTAL, "stripes": 1,
                    "max_per_purchase": 44, "hold_seconds": 30}),
    )
    .await;
    let mut made = 0;
    let mut units = Vec::new();
    // Each round's marks, and what the item counted of them.
    let mut counts = Vec::new();
    for round in 0..ROUNDS {
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| tokio::spawn(holder(app.app.router.clone(), round, task)))
            .collect();
        for task in tasks {
            made += task.await.unwrap();
        }
        let item = stripe_item(&app, "h6").await;
        let marks = hold_marks(&item);
        // H6: the item carries at most its cap of marks, so a write of it, which costs one
        // unit per started kilobyte of the item (two in a transaction), costs no more than
        // the cap's worth, whatever came before.
        assert!(
            marks.len() as u64 <= STRIPE_HOLD_MARKS,
            "round {round}: {} marks",
            marks.len()
        );
        units.push(item_units(&item));
        let counted: u64 = item
            .get("hn")
            .map_or(0, |v| v.as_n().unwrap().parse().unwrap());
        counts.push((marks.len() as u64, counted));
        // Every hold of this round ends; the next round's holds find their marks ended.
        app.advance(31);
    }
    // Every hold is made: ended marks always give their room to the next holds.
    assert_eq!(made, ROUNDS * TASKS * HOLDS_PER_TASK);
    let most = *units.iter().max().unwrap();
    assert!(
        most <= 5,
        "a write of the stripe cost up to {most} units: {units:?}"
    );
    // From the round the cap is full on, a write costs what the first such did.
    let full = counts
        .iter()
        .position(|&(marks, _)| marks == STRIPE_HOLD_MARKS)
        .expect("the rounds fill the cap");
    let steady = &units[full..];
    assert!(steady.len() >= 24, "the cap filled only in round {full}");
    let tenth = steady.len() / 10;
    let mean = |part: &[u64]| part.iter().sum::<u64>() as f64 / part.len() as f64;
    let (first, last) = (
        mean(&steady[..tenth]),
        mean(&steady[steady.len() - tenth..]),
    );
    assert!(last <= first + 0.5, "units grew from {first} to {last}");
    // The item counts its marks exactly, so a mark that leaves gives its room back.
    for (round, (marks, counted)) in counts.iter().enumerate() {
        assert_eq!(marks, counted, "round {round}");
    }
    // The marks of the last round end too: the next hold sweeps them and holds its own.
    let last_hold = json!({"hold_id": "last", "quantity": 44, "payer_id": "last"});
    let reply = settle(&app.app.router, "/draws/h6/holds", &last_hold.to_string()).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let item = stripe_item(&app, "h6").await;
    let now = tally_domain::time::parse_rfc3339(reply.body["created_at"].as_str().unwrap())
        .unwrap()
        .epoch_millis();
    assert_eq!(
        hold_marks(&item).iter().filter(|&&end| end > now).count(),
        44
    );
}
