//! Gapless leases and `Retry-After`: a lease left by a writer that died (or whose release
//! was lost) is answered with the time until it can be taken, not a blanket second, and a
//! client that honours `Retry-After` settles every order within a few tries, under heavy
//! faults too.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::json;
use tally::store::orders::Lease;
use tally::store::{RequestCounter, Store};
use tally_domain::ids::SeriesId;
use tally_domain::series::{Period, Reset};
use tally_domain::time::Epoch;

use crate::faults::faulty_instance;
use crate::helpers::{Reply, endpoint, post_json, spawn_app, store_on};
use crate::invariants::numbered_orders;
use tally_testkit::fault_proxy::{FaultProxy, Faults};

/// A lease of the series' counter by a writer that died, ending `lease_ms` from now.
async fn dead_writer(store: &Store, series: &str, lease_ms: i64) {
    let series = SeriesId::parse(series).unwrap();
    let period = Period::parse(Reset::Never, "all").unwrap();
    let now = Timestamp::now().epoch_millis();
    let lease = store
        .lease_counter(&series, &period, "dead-writer", 1, now, now + lease_ms)
        .await
        .unwrap();
    assert!(matches!(lease, Lease::Leased(_)));
}

/// The seconds a 503 asks to wait.
fn retry_after(reply: &Reply) -> u64 {
    reply.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Posts until the answer is not a 503, waiting what each 503's `Retry-After` says;
/// returns the answer and the number of tries.
async fn honouring(router: &Router, body: &serde_json::Value) -> (Reply, u32) {
    for tries in 1..=50 {
        let reply = post_json(router, "/orders", body).await;
        assert_ne!(
            reply.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{}",
            reply.body
        );
        if reply.status != StatusCode::SERVICE_UNAVAILABLE {
            return (reply, tries);
        }
        tokio::time::sleep(Duration::from_secs(retry_after(&reply))).await;
    }
    panic!("{body}: still 503 after 50 tries");
}

#[tokio::test]
async fn a_claim_left_by_a_dead_writer_is_answered_with_the_time_it_still_holds() {
    let app = spawn_app().await;
    let series = json!({"format": "D{seq:4}", "reset": "never"});
    app.define_series("D", &series).await;
    dead_writer(&app.store, "D", 15_000).await;
    let order = json!({"series": "D", "source": "erp", "external_ref": "a"});
    let blocked = app.post("/orders", &order).await;
    assert_eq!(
        blocked.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        blocked.body
    );
    assert_eq!(blocked.code(), "contention");
    // The lease stood still for seconds: the answer names the rest of its lease, not 1 s.
    let wait = retry_after(&blocked);
    assert!((2..=16).contains(&wait), "Retry-After: {wait}");
    let (settled, tries) = honouring(&app.router, &order).await;
    assert_eq!(settled.status, StatusCode::CREATED, "{}", settled.body);
    assert_eq!(settled.body["order_number"], "D0001");
    assert!(tries <= 2, "{tries} tries after the first");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn under_heavy_faults_a_client_honouring_retry_after_settles_every_order_in_a_few_tries() {
    const SOURCES: usize = 4;
    const ORDERS: usize = 25;
    const MOST_TRIES: u32 = 10;
    let app = spawn_app().await;
    let series = json!({"format": "H{seq:4}", "reset": "never"});
    app.define_series("H", &series).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(Faults {
        lost_after: 0.15,
        throttle: 0.10,
        error_before: 0.025,
        error_after: 0.025,
        ..Faults::default()
    });
    // A writer died holding the lease, as the run starts.
    dead_writer(&app.store, "H", 6_000).await;
    let mut tasks = Vec::new();
    for source in 0..SOURCES {
        let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(20)).await;
        tasks.push(tokio::spawn(async move {
            let mut tries = BTreeMap::new();
            for k in 0..ORDERS {
                let reference = format!("s{source}-{k}");
                let body = json!({"series": "H", "source": format!("src{source}"),
                                  "external_ref": reference});
                let (reply, n) = honouring(&instance, &body).await;
                assert!(reply.status.is_success(), "{}", reply.body);
                let number = reply.body["order_number"].as_str().unwrap().to_owned();
                tries.insert(reference, (n, number));
            }
            tries
        }));
    }
    let mut answered = BTreeMap::new();
    for task in tasks {
        answered.extend(task.await.unwrap());
    }
    let counts = proxy.counts();
    assert!(counts.lost_after > 0 && counts.throttled > 0, "{counts:?}");
    let most = answered.values().map(|(n, _)| *n).max().unwrap();
    assert!(most <= MOST_TRIES, "an order took {most} tries");
    // O1, O2, O4: every order once, 1..=N without a gap, as answered.
    let stored = numbered_orders(&app.scan().await, "H");
    assert_eq!(stored.len(), SOURCES * ORDERS);
    let mut counters: Vec<u64> = stored.values().map(|n| n.counter).collect();
    counters.sort_unstable();
    assert_eq!(
        counters,
        (1..=(SOURCES * ORDERS) as u64).collect::<Vec<_>>()
    );
    for ((_, reference), numbered) in &stored {
        assert_eq!(answered[reference].1, numbered.number, "{reference}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_cut_off_at_its_deadline_gives_its_claim_up_for_the_next_writer() {
    let app = spawn_app().await;
    let series = json!({"format": "C{seq:4}", "reset": "never"});
    app.define_series("C", &series).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    // Its transaction is slower than its request may take: the request is cut off while
    // it holds the lease.
    let slow = Duration::from_secs(3);
    proxy.set(Faults {
        latency: Some(slow..=slow),
        operations: Some(vec!["TransactWriteItems".into()]),
        ..Faults::default()
    });
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(1)).await;
    // A batch leases the counter (a single post would not).
    let cut = post_json(
        &instance,
        "/orders/batch",
        &json!({"series": "C", "source": "a",
                "orders": [{"external_ref": "1"}, {"external_ref": "2"}]}),
    )
    .await;
    assert_eq!(cut.code(), "outcome_unknown", "{}", cut.body);
    proxy.set(Faults::default());
    // The lease was given up when the request was dropped: the next writer numbers at
    // once, without waiting for the lease (6 s here) to end.
    let next = post_json(
        &app.router,
        "/orders",
        &json!({"series": "C", "source": "b", "external_ref": "2"}),
    )
    .await;
    assert_eq!(next.status, StatusCode::CREATED, "{}", next.body);
    // The cut-off transaction, landing later, finds the lease gone and writes nothing.
    tokio::time::sleep(slow).await;
    let stored = numbered_orders(&app.scan().await, "C");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(next.body["order_number"], "C0001");
}

/// A single post that meets another writer's lease waits for it and reads the counter
/// again, sending no transaction the lease would refuse, and answers with the time the
/// lease still holds.
#[tokio::test]
async fn a_single_post_behind_a_dead_writers_claim_sends_no_transaction() {
    let app = spawn_app().await;
    let series = json!({"format": "W{seq:4}", "reset": "never"});
    app.define_series("W", &series).await;
    dead_writer(&app.store, "W", 10_000).await;
    let counter = RequestCounter::default();
    let instance = crate::helpers::router(store_on(app.store.table(), Some(counter.clone())).await);
    let order = json!({"series": "W", "source": "erp", "external_ref": "w"});
    let blocked = post_json(&instance, "/orders", &order).await;
    assert_eq!(blocked.code(), "contention", "{}", blocked.body);
    assert!(retry_after(&blocked) >= 2, "{}", retry_after(&blocked));
    let sent = counter.snapshot();
    assert_eq!(sent.of("TransactWriteItems"), 0, "{sent}");
}
