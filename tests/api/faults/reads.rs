//! Reads under faults: a period's listing, its audit and the operator journal, read while
//! DynamoDB throttles, fails, loses or cuts answers, or freezes. Every answer is a `200`
//! or a `503` with `Retry-After`, and a walk that repeats its 503s reads each order and
//! each journal entry once, and the audit a clean read gives.

use super::*;
use serde_json::Value;

const ORDERS: usize = 30;
const VOIDED: usize = 5;

/// Each of the fault kinds and answers cut short on the read operations; answers lost
/// less often, as each costs an attempt's timeout.
fn read_faults(share: f64) -> Faults {
    Faults {
        lost_after: share / 2.0,
        truncated_after: share,
        operations: Some(vec![
            "GetItem".into(),
            "Query".into(),
            "BatchGetItem".into(),
        ]),
        ..every_fault(share)
    }
}

/// A gapless series `L` of `ORDERS` orders, the first `VOIDED` of them void; each void
/// journalled.
async fn period_with_voids(app: &crate::helpers::TestApp) {
    let definition = json!({"format": "L{seq:4}", "reset": "never", "gapless": true});
    app.define_series("L", &definition).await;
    assert_eq!(app.post_range("L", 0, ORDERS).await.len(), ORDERS);
    for counter in 1..=VOIDED {
        let path = format!("/series/L/orders/L{counter:04}/void");
        let voided = app.post(&path, &json!({"reason": "typo"})).await;
        assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    }
}

/// `GET path` repeated through its 503s (each with `Retry-After`, never a 500): the `200`.
async fn read(instance: &Router, path: &str) -> Value {
    let reply = settle_request(instance, Method::GET, path, "").await;
    assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.body);
    reply.body
}

/// Every page of `L`'s listing, `limit` orders a page: the order numbers in page order.
async fn listed(instance: &Router, limit: usize) -> Vec<String> {
    let mut numbers = Vec::new();
    let mut path = format!("/series/L/orders?limit={limit}");
    loop {
        let page = read(instance, &path).await;
        for order in page["orders"].as_array().unwrap() {
            numbers.push(order["order_number"].as_str().unwrap().to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/series/L/orders?limit={limit}&cursor={cursor}"),
            None => return numbers,
        }
    }
}

/// Every page of the journal, `limit` entries a page: the entries' numbers and hashes.
async fn journal(instance: &Router, limit: usize) -> Vec<(u64, String)> {
    let mut entries = Vec::new();
    let mut from = 1;
    loop {
        let page = read(instance, &format!("/journal?from={from}&limit={limit}")).await;
        for entry in page["entries"].as_array().unwrap() {
            let number = entry["number"].as_u64().unwrap();
            entries.push((number, entry["hash"].as_str().unwrap().to_owned()));
        }
        match page["next_from"].as_u64() {
            Some(next) => from = next,
            None => return entries,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn listings_audits_and_the_journal_read_under_faults_answer_each_entry_once() {
    let app = spawn_app().await;
    period_with_voids(&app).await;
    let clean_audit = app.get("/series/L/audit").await.body;
    let clean_journal = journal(&app.router, 1_000).await;
    assert_eq!(clean_journal.len(), 1 + VOIDED, "the series and each void");
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.table(), Duration::from_secs(10)).await;
    proxy.set(read_faults(0.2));
    let numbers = listed(&instance, 10).await;
    let expected: Vec<String> = (1..=ORDERS).map(|c| format!("L{c:04}")).collect();
    assert_eq!(numbers, expected);
    assert_eq!(read(&instance, "/series/L/audit").await, clean_audit);
    assert_eq!(journal(&instance, 3).await, clean_journal);
    let counts = proxy.counts();
    assert!(
        counts.throttled * counts.errors_after * counts.lost_after * counts.truncated_after > 0,
        "not every fault happened: {counts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reads_on_a_frozen_endpoint_are_503s_in_time_and_read_whole_after_the_thaw() {
    let app = spawn_app().await;
    period_with_voids(&app).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let timeout = Duration::from_millis(1_500);
    let instance = faulty_instance(&proxy, app.table(), timeout).await;
    proxy.freeze();
    for path in ["/series/L/orders", "/series/L/audit", "/journal"] {
        let started = Instant::now();
        let reply = crate::helpers::get(&instance, path).await;
        assert_eq!(
            reply.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{path}: {}",
            reply.body
        );
        assert!(reply.headers.contains_key("retry-after"), "{path}");
        assert!(
            started.elapsed() < timeout + Duration::from_secs(1),
            "{path}: answered after {:?}",
            started.elapsed()
        );
    }
    proxy.thaw().await;
    assert_eq!(listed(&instance, 10).await.len(), ORDERS);
    assert_eq!(journal(&instance, 4).await.len(), 1 + VOIDED);
    let audit = read(&instance, "/series/L/audit").await;
    assert_eq!(
        (audit["orders"].as_u64(), audit["voided"].as_u64()),
        (Some(ORDERS as u64), Some(VOIDED as u64))
    );
}
