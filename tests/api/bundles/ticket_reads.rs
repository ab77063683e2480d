//! A ticket read that finds no item, in a draw with several bundles cut short: it writes
//! the items of the one bundle holding its number, if any, and leaves the others to the
//! close, so that a read of an unsold number writes nothing however many wait (B1).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;

use super::{listed_unfinished, refused, unfinished};
use crate::faults::faulty_instance;
use crate::helpers::{Item, attr_n, attr_numbers, attr_s, endpoint, of_kind, post_raw, spawn_app};
use tally_testkit::fault_proxy::{FaultProxy, Faults};

const TOTAL: u64 = 2_000;

/// Each bundle's numbers, by payment id.
fn bundles(items: &[Item]) -> BTreeMap<String, BTreeSet<u64>> {
    of_kind(items, "purchase")
        .into_iter()
        .map(|p| {
            let numbers = attr_numbers(p, "tickets").into_iter().collect();
            (attr_s(p, "payment_id").to_owned(), numbers)
        })
        .collect()
}

/// The numbers that have their ticket item.
fn written(items: &[Item]) -> BTreeSet<u64> {
    of_kind(items, "ticket")
        .into_iter()
        .map(|t| attr_n(t, "number"))
        .collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_ticket_read_finishes_only_the_bundle_holding_its_number() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "many", "total_tickets": TOTAL, "max_per_purchase": 500});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let faulty = faulty_instance(&proxy, app.store.table(), Duration::from_secs(30)).await;
    proxy.set(refused("PutItem"));
    for payment_id in ["b1", "b2", "b3"] {
        let body = json!({"payment_id": payment_id, "quantity": 300}).to_string();
        let cut = post_raw(&faulty, "/draws/many/purchases", "application/json", body).await;
        assert_eq!(cut.status, StatusCode::SERVICE_UNAVAILABLE, "{}", cut.body);
    }
    proxy.set(Faults::default());
    let items = app.scan().await;
    let all = ["b1", "b2", "b3"].map(str::to_owned).to_vec();
    assert_eq!(sorted(unfinished(&items)), all);
    assert_eq!(sorted(listed_unfinished(&items)), all);
    let held = bundles(&items);
    let before = written(&items);
    // An unsold number: not sold, and no bundle finished by the read.
    let unsold = (1..=TOTAL)
        .find(|n| held.values().all(|numbers| !numbers.contains(n)))
        .expect("a number no bundle holds");
    let read = app.get(&format!("/draws/many/tickets/{unsold}")).await;
    assert_eq!(
        (read.status, read.code()),
        (StatusCode::NOT_FOUND, "ticket_not_sold"),
        "{}",
        read.body
    );
    let items = app.scan().await;
    assert_eq!(sorted(unfinished(&items)), all);
    assert_eq!(sorted(listed_unfinished(&items)), all);
    assert_eq!(written(&items), before);
    // A number of b2 without its item: b2's, and only b2 is finished.
    let missing = held["b2"]
        .iter()
        .find(|n| !before.contains(n))
        .expect("a number of b2 without its ticket item");
    let read = app.get(&format!("/draws/many/tickets/{missing}")).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body["payment_id"], "b2");
    let items = app.scan().await;
    let rest = ["b1", "b3"].map(str::to_owned).to_vec();
    assert_eq!(sorted(unfinished(&items)), rest);
    assert_eq!(sorted(listed_unfinished(&items)), rest);
    let expected: BTreeSet<u64> = before.union(&held["b2"]).copied().collect();
    assert_eq!(written(&items), expected);
}
