//! O6 under faults at a fast series' reservation: a block reserved is never lost to a
//! failed write after it, nor to a lost answer of the reservation itself, and a lost
//! answer is never taken for the end of the series' room. A range's low notice is written
//! once, whatever fault meets the transaction that carries it and whichever process wrote
//! it first, and a chunk that passes two ranges' thresholds writes both.

use super::*;
use tally_testkit::fault_proxy::Recorded;

/// A fast series of `name` numbering in one authorised range `1..=to`.
async fn ranged_series(app: &crate::helpers::TestApp, name: &str, to: u64) {
    let body = json!({"format": format!("{name}{{seq:3}}"), "reset": "never", "gapless": false,
                      "range_low_percent": 50,
                      "ranges": [{"from": 1, "to": to, "authority_ref": "CAF-1"}]});
    app.define_series(name, &body).await;
}

/// The order `reference` of source `erp` posted once to `instance` in `series`.
async fn post_once(instance: &Router, series: &str, reference: &str) -> Reply {
    let body = json!({"series": series, "source": "erp", "external_ref": reference});
    post_json(instance, "/orders", &body).await
}

/// The audit of `series` lists no gap below `counter`: every number reserved there was
/// issued (the process may still hold spare ones above it).
async fn assert_no_gap_below(app: &crate::helpers::TestApp, series: &str, counter: u64) {
    let audit = app.get(&format!("/series/{series}/audit")).await.body;
    assert_eq!(audit["complete"], true, "{audit}");
    for gap in audit["gaps"].as_array().unwrap() {
        assert!(gap["from"].as_u64().unwrap() > counter, "{audit}");
    }
}

#[tokio::test]
async fn a_failing_low_notice_write_loses_no_reserved_number() {
    let app = spawn_app().await;
    ranged_series(&app, "KL", 100).await;
    // One batch reserves exactly its 49 counters: the next block passes the low threshold.
    app.post_range("KL", 0, 49).await;
    // The notice goes in the orders' transaction: a failing `PutItem` touches it not.
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;
    proxy.set(Faults {
        throttle: 1.0,
        operations: Some(vec!["PutItem".into()]),
        ..Faults::default()
    });
    for _ in 0..3 {
        let reply = post_once(&instance, "KL", "x").await;
        assert!(
            reply.status.is_success() && reply.body["counter"] == 50
                || reply.status == StatusCode::SERVICE_UNAVAILABLE,
            "{} {}",
            reply.status,
            reply.body
        );
    }
    proxy.set(Faults::default());
    let reply = settle(
        &instance,
        "/orders",
        &json!({"series": "KL", "source": "erp", "external_ref": "x"}).to_string(),
    )
    .await;
    assert!(reply.status.is_success(), "{}", reply.body);
    assert_eq!(reply.body["counter"], 50, "{}", reply.body);
    assert_no_gap_below(&app, "KL", 50).await;
    let marks: Vec<u64> = of_kind(&app.scan().await, "range_low")
        .iter()
        .map(|m| crate::helpers::attr_n(m, "mark"))
        .collect();
    assert_eq!(marks, [50], "the low notice is written once");
}

/// The thresholds of the range marks written, lowest first.
async fn range_marks(app: &crate::helpers::TestApp) -> Vec<u64> {
    let mut marks: Vec<u64> = of_kind(&app.scan().await, "range_low")
        .iter()
        .map(|m| crate::helpers::attr_n(m, "mark"))
        .collect();
    marks.sort_unstable();
    marks
}

/// The batch of orders `references` of source `erp`.
fn batch_of(series: &str, references: std::ops::Range<usize>) -> serde_json::Value {
    let orders: Vec<serde_json::Value> = references
        .map(|i| json!({"external_ref": format!("b{i}")}))
        .collect();
    json!({"series": series, "source": "erp", "orders": orders})
}

#[tokio::test]
async fn a_fault_on_the_transaction_carrying_the_low_notice_loses_no_number() {
    let app = spawn_app().await;
    let faults = [
        (
            "KT",
            Faults {
                throttle: 1.0,
                ..Faults::default()
            },
        ),
        (
            "KA",
            Faults {
                error_after: 1.0,
                ..Faults::default()
            },
        ),
        (
            "KS",
            Faults {
                lost_after: 1.0,
                ..Faults::default()
            },
        ),
        (
            "KH",
            Faults {
                throttle: 0.5,
                error_after: 0.2,
                lost_after: 0.2,
                ..Faults::default()
            },
        ),
    ];
    for (series, fault) in faults {
        ranged_series(&app, series, 100).await;
        // Counters 1..=49 are issued: the next order passes the low threshold (50).
        app.post_range(series, 0, 49).await;
        let proxy = FaultProxy::start(&endpoint()).await;
        let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;
        proxy.set(Faults {
            operations: Some(vec!["TransactWriteItems".into()]),
            at_most: Some(4),
            ..fault.clone()
        });
        let reference = format!("{series}-x");
        let body = json!({"series": series, "source": "erp", "external_ref": reference});
        let body = body.to_string();
        let reply = settle(&instance, "/orders", &body).await;
        assert!(reply.status.is_success(), "{series}: {}", reply.body);
        assert_eq!(reply.body["counter"], 50, "{series}: {}", reply.body);
        // A fault drawn at a share of one always reaches the notice's transaction.
        let certain = [fault.throttle, fault.error_after, fault.lost_after].contains(&1.0);
        let counts = proxy.counts();
        assert!(
            !certain || counts.throttled + counts.errors_after + counts.lost_after > 0,
            "{series}: no fault reached the notice's transaction"
        );
        proxy.set(Faults::default());
        let next = post_once(&instance, series, &format!("{series}-y")).await;
        assert_eq!(next.body["counter"], 51, "{series}: {}", next.body);
        assert_no_gap_below(&app, series, 51).await;
    }
    assert_eq!(
        range_marks(&app).await,
        [50, 50, 50, 50],
        "one notice per series"
    );
}

#[tokio::test]
async fn a_process_that_does_not_know_the_notice_written_sends_its_orders_once() {
    let app = spawn_app().await;
    ranged_series(&app, "KN", 100).await;
    // Another process numbers 1..=50 and writes the notice at 50.
    app.post_range("KN", 0, 50).await;
    assert_eq!(range_marks(&app).await, [50]);
    let proxy = FaultProxy::start(&endpoint()).await;
    let fresh = faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;
    proxy.record();
    let reply = post_once(&fresh, "KN", "x").await;
    let recorded = proxy.recorded();
    assert!(reply.status.is_success(), "{}", reply.body);
    assert_eq!(reply.body["counter"], 51, "{}", reply.body);
    let operations: Vec<&str> = recorded.iter().map(|r| r.operation.as_str()).collect();
    let transactions: Vec<&Recorded> = recorded
        .iter()
        .filter(|r| r.operation == "TransactWriteItems")
        .collect();
    // The notice it read is not sent again: one transaction, without the mark.
    assert_eq!(transactions.len(), 1, "{operations:?}");
    assert!(
        !transactions[0].body.to_string().contains("#RANGE#"),
        "{}",
        transactions[0].body
    );
    let next = post_once(&fresh, "KN", "y").await;
    assert_eq!(next.body["counter"], 52, "{}", next.body);
    assert_no_gap_below(&app, "KN", 52).await;
    assert_eq!(
        range_marks(&app).await,
        [50],
        "the low notice is written once"
    );
}

/// One process through `proxy`, with the service's own timeouts: an attempt of three
/// seconds outlasts a delay of two at the proxy.
async fn patient_instance(proxy: &FaultProxy, table: &str) -> Router {
    let endpoint = Some(proxy.endpoint());
    let config = StoreConfig::new(
        table,
        endpoint,
        Timeouts::default(),
        AwsEnvironment::default(),
    );
    let store = Store::connect(&config.unwrap(), None).await;
    let mut state = tally::api::AppState::new(store);
    state.request_timeout = Duration::from_secs(10);
    tally::api::router(state)
}

#[tokio::test]
async fn a_notice_written_after_the_process_read_it_absent_goes_again_without_it() {
    let app = spawn_app().await;
    ranged_series(&app, "KR", 100).await;
    app.post_range("KR", 0, 49).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let slow = patient_instance(&proxy, app.store.table()).await;
    // Its orders' transaction waits two seconds at the proxy.
    let two = Duration::from_secs(2);
    proxy.set(Faults {
        latency: Some(two..=two),
        operations: Some(vec!["TransactWriteItems".into()]),
        ..Faults::default()
    });
    proxy.record();
    let first = tokio::spawn(async move { post_once(&slow, "KR", "x").await });
    // Once it has read the series, reserved 50 and read the notice absent, another
    // process numbers 51 and writes the notice.
    let deadline = Instant::now() + Duration::from_secs(10);
    while proxy.counts().forwarded < 3 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let other = app
        .post(
            "/orders",
            &json!({"series": "KR", "source": "erp", "external_ref": "y"}),
        )
        .await;
    assert_eq!(other.body["counter"], 51, "{}", other.body);
    let first = first.await.unwrap();
    assert_eq!(first.body["counter"], 50, "{}", first.body);
    let transactions: Vec<String> = proxy
        .recorded()
        .iter()
        .filter(|r| r.operation == "TransactWriteItems")
        .map(|r| r.body.to_string())
        .collect();
    let carried: Vec<bool> = transactions.iter().map(|t| t.contains("#RANGE#")).collect();
    assert_eq!(
        carried,
        [true, false],
        "cancelled for the notice, then sent without it"
    );
    assert_no_gap_below(&app, "KR", 51).await;
    assert_eq!(
        range_marks(&app).await,
        [50],
        "the low notice is written once"
    );
}

#[tokio::test]
async fn a_chunk_passing_two_ranges_low_thresholds_writes_both_notices() {
    let app = spawn_app().await;
    // Range 1..=10 passes its low share at 5, range 11..=12 at 11.
    let body = json!({"format": "K{seq:3}", "reset": "never", "gapless": false,
                      "range_low_percent": 50,
                      "ranges": [{"from": 1, "to": 10, "authority_ref": "CAF-1"},
                                 {"from": 11, "to": 12, "authority_ref": "CAF-2"}]});
    app.define_series("K2", &body).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;
    // A batch reserves all of the first range and writes none of it: the process keeps
    // 1..=10, past the first threshold, with its notice unwritten.
    proxy.set(Faults {
        throttle: 1.0,
        operations: Some(vec!["TransactWriteItems".into()]),
        ..Faults::default()
    });
    let failed = post_json(&instance, "/orders/batch", &batch_of("K2", 0..10)).await;
    assert!(
        !failed.body.to_string().contains("\"order_number\""),
        "{}",
        failed.body
    );
    proxy.set(Faults::default());
    // One chunk: the ten kept and the whole second range.
    let reply = settle(
        &instance,
        "/orders/batch",
        &batch_of("K2", 0..12).to_string(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let numbers: Vec<String> = reply.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["order_number"].as_str().unwrap_or("none").to_owned())
        .collect();
    let expected: Vec<String> = (1..=12).map(|c| format!("K{c:03}")).collect();
    assert_eq!(numbers, expected, "{}", reply.body);
    assert_eq!(
        range_marks(&app).await,
        [5, 11],
        "each range's notice is written"
    );
}

#[tokio::test]
async fn a_lost_reservation_answer_is_not_taken_for_the_range_used_up() {
    let app = spawn_app().await;
    ranged_series(&app, "KE", 10).await;
    app.post_range("KE", 0, 9).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;
    // The reservation commits, its answer is lost, and the SDK sends it again.
    proxy.set(Faults {
        error_after: 1.0,
        operations: Some(vec!["UpdateItem".into()]),
        at_most: Some(1),
        ..Faults::default()
    });
    let reply = settle(
        &instance,
        "/orders",
        &json!({"series": "KE", "source": "erp", "external_ref": "last"}).to_string(),
    )
    .await;
    assert_eq!(proxy.counts().errors_after, 1);
    assert!(reply.status.is_success(), "{} {}", reply.status, reply.body);
    assert_eq!(reply.body["counter"], 10, "{}", reply.body);
    assert_no_gap_below(&app, "KE", 10).await;
}
