//! O6 under faults at a fast series' reservation: a block reserved is never lost to a
//! failed write after it, nor to a lost answer of the reservation itself, and a lost
//! answer is never taken for the end of the series' room.

use super::*;

/// A fast series of `name` numbering in one authorised range `1..=to`.
async fn ranged_series(app: &crate::helpers::TestApp, name: &str, to: u64) {
    let body = json!({"format": "K{seq:3}", "reset": "never", "gapless": false,
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
