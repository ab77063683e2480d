//! An endpoint that freezes or dies: a 503 in time, and a repeat that settles.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_endpoint_is_answered_with_a_503_in_time_and_a_repeat_settles() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "frozen", "total_tickets": 100});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let timeout = Duration::from_secs(3);
    let instance = faulty_instance(&proxy, app.store.table(), timeout).await;
    proxy.freeze();
    let purchase = json!({"payment_id": "cold", "quantity": 2});
    let started = Instant::now();
    let reply = post_json(&instance, "/draws/frozen/purchases", &purchase).await;
    let took = started.elapsed();
    assert_eq!(
        reply.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        reply.body
    );
    assert_eq!(reply.code(), "outcome_unknown");
    assert!(reply.headers.contains_key("retry-after"));
    assert!(
        took < timeout + Duration::from_secs(2),
        "answered after {took:?}"
    );
    // DynamoDB comes back and processes what it held; the client repeats.
    proxy.thaw().await;
    let settled = settle(&instance, "/draws/frozen/purchases", &purchase.to_string()).await;
    assert!(settled.status.is_success(), "{}", settled.body);
    let held = sold_tickets(&app.scan().await, 100);
    assert_eq!(held.len(), 1);
    assert_eq!(held["cold"], tickets_of(&settled));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_endpoint_is_a_503_and_a_repeat_on_another_instance_settles() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "killed", "total_tickets": 100});
    app.create_draw(&draw).await;
    let series = json!({"format": "K{seq:4}", "reset": "never", "gapless": true});
    assert!(app.put("/series/K", &series).await.status.is_success());
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(3)).await;
    let before = json!({"payment_id": "before", "quantity": 2});
    let bought = post_json(&instance, "/draws/killed/purchases", &before).await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    // DynamoDB goes away: its port refuses connections.
    drop(proxy);
    let after = json!({"payment_id": "after", "quantity": 3});
    let order = json!({"series": "K", "source": "erp", "external_ref": "PO-1"});
    for (path, body) in [("/draws/killed/purchases", &after), ("/orders", &order)] {
        let started = Instant::now();
        let reply = post_json(&instance, path, body).await;
        assert_eq!(
            reply.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{path}: {}",
            reply.body
        );
        assert_eq!(reply.code(), "outcome_unknown", "{path}");
        assert!(reply.headers.contains_key("retry-after"), "{path}");
        assert!(started.elapsed() < TIGHT.operation, "{path}");
    }
    // The client repeats on an instance that reaches DynamoDB.
    let settled = settle(&app.router, "/draws/killed/purchases", &after.to_string()).await;
    assert_eq!(settled.status, StatusCode::CREATED, "{}", settled.body);
    let numbered = settle(&app.router, "/orders", &order.to_string()).await;
    assert_eq!(numbered.status, StatusCode::CREATED, "{}", numbered.body);
    assert_eq!(numbered.body["order_number"], "K0001");
    let held = sold_tickets(&app.scan().await, 100);
    assert_eq!(held.len(), 2);
    assert_eq!(held["after"], tickets_of(&settled));
}
