//! The fault model: between Tally and DynamoDB Local a proxy throttles, fails before and
//! after committing, loses answers after committing, and freezes. Every answer must be a
//! 2xx, a documented 409, or a 503 with `Retry-After` (never a 500, never a hang), and a
//! client that repeats its 503s must end with every payment and order settled exactly
//! once, with the invariants of the table intact.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{Method, StatusCode};
use serde_json::json;
use tally::orders::OrderService;
use tally::store::{AwsEnvironment, Store, StoreConfig, Timeouts};

use crate::helpers::{
    Reply, endpoint, of_kind, post_json, settle, settle_request, spawn_app, tickets_of,
};
use crate::invariants::{numbered_orders, sold_tickets, voids_and_caps};
use tally_testkit::fault_proxy::{FaultProxy, Faults};

/// An amount wider than a 64-bit float can hold.
const AMOUNT: &str = "123456789012345678901234567890";

/// Tight timeouts, so that lost answers and a frozen endpoint cost little test time, yet
/// loose enough that a transaction of DynamoDB Local on a busy two-core machine (it takes
/// a second now and then) is not taken for a lost answer every time.
const TIGHT: Timeouts = Timeouts {
    connect: Duration::from_secs(1),
    attempt: Duration::from_millis(1_500),
    operation: Duration::from_secs(5),
    max_attempts: 3,
};

/// Each kind of fault on a share of every DynamoDB call.
pub fn every_fault(share: f64) -> Faults {
    Faults {
        throttle: share,
        error_before: share,
        error_after: share,
        lost_after: share,
        ..Faults::default()
    }
}

/// Sends `payments` bodies (`body(i)`, whose `payment_id` or else `hold_id` names it) to `path`,
/// each by two instances at once as a retried webhook would be, through the proxy; each
/// repeats its 503s. Every payment's two answers, by payment id.
pub async fn twin_payments(
    proxy: &FaultProxy,
    table: &str,
    path: &'static str,
    payments: usize,
    body: fn(usize) -> serde_json::Value,
) -> BTreeMap<String, Vec<Reply>> {
    let mut tasks = Vec::new();
    for _twin in 0..2 {
        for chunk in 0..8usize {
            let instance = faulty_instance(proxy, table, Duration::from_secs(10)).await;
            tasks.push(tokio::spawn(async move {
                let mut answers = Vec::new();
                for i in (chunk..payments).step_by(8) {
                    let body = body(i);
                    let reply = settle(&instance, path, &body.to_string()).await;
                    let id = body["payment_id"].as_str().or(body["hold_id"].as_str());
                    answers.push((id.unwrap_or("").to_owned(), reply));
                }
                answers
            }));
        }
    }
    let mut answers: BTreeMap<String, Vec<Reply>> = BTreeMap::new();
    for task in tasks {
        for (payment, reply) in task.await.unwrap() {
            answers.entry(payment).or_default().push(reply);
        }
    }
    answers
}

/// Both answers of a twin pair agree: the same tickets, or the same refusal.
pub fn agreed(id: &str, replies: &[Reply]) -> Option<Vec<u64>> {
    let outcomes: Vec<(bool, String, Vec<u64>)> = replies
        .iter()
        .map(|r| {
            let ok = r.status.is_success();
            (
                ok,
                r.code().to_owned(),
                if ok { tickets_of(r) } else { Vec::new() },
            )
        })
        .collect();
    let successes: Vec<&Vec<u64>> = outcomes.iter().filter(|o| o.0).map(|o| &o.2).collect();
    assert!(
        successes.windows(2).all(|w| w[0] == w[1]),
        "{id}: the twins got different numbers: {outcomes:?}"
    );
    successes.first().map(|t| (*t).clone())
}

/// One Lambda instance whose DynamoDB calls go through the proxy.
pub async fn faulty_instance(proxy: &FaultProxy, table: &str, request_timeout: Duration) -> Router {
    faulty_instance_with_orders(proxy, table, request_timeout)
        .await
        .0
}

/// [`faulty_instance`], with its order service, whose spare numbers a test reads.
pub async fn faulty_instance_with_orders(
    proxy: &FaultProxy,
    table: &str,
    request_timeout: Duration,
) -> (Router, Arc<OrderService>) {
    let config = StoreConfig::new(
        table,
        Some(proxy.endpoint()),
        TIGHT,
        AwsEnvironment::default(),
    )
    .unwrap();
    let store = Store::connect(&config, None).await;
    let mut state = tally::api::AppState::new(store);
    state.request_timeout = request_timeout;
    let orders = state.orders.clone();
    (tally::api::router(state), orders)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sell_out_under_faults_settles_every_payment_exactly_once() {
    const TOTAL: u64 = 300;
    const PAYMENTS: usize = 120;
    let app = spawn_app().await;
    let draw = json!({"draw_id": "faulty", "total_tickets": TOTAL, "max_per_purchase": 5});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.04));
    let answers = twin_payments(
        &proxy,
        app.store.table(),
        "/draws/faulty/purchases",
        PAYMENTS,
        |i| json!({"payment_id": format!("pay-{i}"), "quantity": 1 + i % 5}),
    )
    .await;
    let counts = proxy.counts();
    assert!(
        counts.throttled > 0
            && counts.errors_before > 0
            && counts.errors_after > 0
            && counts.lost_after > 0,
        "not every fault happened: {counts:?}"
    );
    // Each payment: both twins got the same tickets, or both were told it sold out.
    let mut sold = BTreeMap::new();
    for (payment, replies) in &answers {
        let tickets: Vec<Option<Vec<u64>>> = replies
            .iter()
            .map(|r| match (r.status, r.code()) {
                (StatusCode::CREATED | StatusCode::OK, _) => Some(tickets_of(r)),
                (StatusCode::CONFLICT, "sold_out") => None,
                (status, code) => panic!("{payment}: {status} {code}"),
            })
            .collect();
        assert_eq!(tickets[0], tickets[1], "{payment}: the twins disagree");
        if let Some(tickets) = &tickets[0] {
            sold.insert(payment.clone(), tickets.clone());
        }
    }
    // The table holds exactly what the answers said: T1, T2, T3, T4, T5.
    assert_eq!(sold_tickets(&app.scan().await, TOTAL), sold);
    let draw = app.get("/draws/faulty").await.body;
    assert_eq!(draw["sold"], sold.values().map(Vec::len).sum::<usize>());
    assert_eq!(draw["sold"], TOTAL, "the draw did not sell out");
}

/// Posts one source's orders in batches; re-posts a batch on 503 and the items rejected
/// for a retryable reason. Returns each reference's answered numbers.
async fn import_source(
    instance: Router,
    series: &str,
    source: &str,
    orders: usize,
) -> BTreeMap<String, Vec<String>> {
    let mut answered: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let refs: Vec<String> = (0..orders).map(|i| format!("{source}-{i}")).collect();
    for batch in refs.chunks(20) {
        let mut pending: Vec<String> = batch.to_vec();
        for _ in 0..50 {
            if pending.is_empty() {
                break;
            }
            // Written as text: a JSON value in Rust would round the amount to a float.
            let items: Vec<String> = pending
                .iter()
                .map(|r| format!(r#"{{"external_ref": "{r}", "data": {{"amount": {AMOUNT}}}}}"#))
                .collect();
            let body = format!(
                r#"{{"series": "{series}", "source": "{source}", "orders": [{}]}}"#,
                items.join(",")
            );
            let reply = settle(&instance, "/orders/batch", &body).await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            let mut again = Vec::new();
            for (result, reference) in reply.body["results"]
                .as_array()
                .unwrap()
                .iter()
                .zip(&pending)
            {
                match result["status"].as_str().unwrap() {
                    "created" | "existing" => answered
                        .entry(reference.clone())
                        .or_default()
                        .push(result["order_number"].as_str().unwrap().to_owned()),
                    "rejected" if result["code"] == "contention" => again.push(reference.clone()),
                    other => panic!("{reference}: {other} {result}"),
                }
            }
            pending = again;
        }
        assert!(pending.is_empty(), "orders left unnumbered: {pending:?}");
    }
    answered
}

async fn import_under_faults(gapless: bool) {
    const SOURCES: usize = 4;
    // About 80 DynamoDB calls: with a 16% share of lost or failed-after-commit answers,
    // every run meets both.
    const ORDERS: usize = 100;
    let app = spawn_app().await;
    let definition = json!({"format": "F{seq:6}", "reset": "never", "gapless": gapless});
    app.define_series("F", &definition).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.08));
    let mut tasks = Vec::new();
    for source in 0..SOURCES {
        let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(20)).await;
        tasks.push(tokio::spawn(async move {
            import_source(instance, "F", &format!("src{source}"), ORDERS).await
        }));
    }
    let mut answered = BTreeMap::new();
    for task in tasks {
        answered.extend(task.await.unwrap());
    }
    assert!(proxy.counts().errors_after + proxy.counts().lost_after > 0);
    let stored = numbered_orders(&app.scan().await, "F");
    assert_eq!(stored.len(), SOURCES * ORDERS);
    for ((source, reference), numbered) in &stored {
        assert!(reference.starts_with(source.as_str()));
        // O4: every answer for a reference named the number stored for it.
        assert!(
            answered[reference].iter().all(|n| *n == numbered.number),
            "{reference}: answered {:?}, stored {}",
            answered[reference],
            numbered.number
        );
    }
    let mut counters: Vec<u64> = stored.values().map(|n| n.counter).collect();
    counters.sort();
    if gapless {
        // O2: exactly 1..=M, whatever failed.
        assert_eq!(
            counters,
            (1..=(SOURCES * ORDERS) as u64).collect::<Vec<_>>()
        );
    }
    // Data is kept as sent, even a number wider than any float.
    let order = app.get("/sources/src0/orders/src0-0").await;
    assert!(
        order
            .raw
            .contains(&format!(r#""data":{{"amount": {AMOUNT}}}"#)),
        "{}",
        order.raw
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gapless_import_under_faults_keeps_every_number_once_and_no_gap() {
    import_under_faults(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fast_import_under_faults_keeps_every_number_once() {
    import_under_faults(false).await;
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_close_under_faults_is_repeated_until_closed_and_then_nothing_sells() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "shut", "total_tickets": 2_000, "stripes": 200});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await;
    let bought = post_json(
        &instance,
        "/draws/shut/purchases",
        &json!({"payment_id": "before", "quantity": 3}),
    )
    .await;
    assert_eq!(bought.status, StatusCode::CREATED);
    proxy.set(Faults {
        error_before: 0.2,
        error_after: 0.2,
        ..Faults::default()
    });
    let mut interrupted = 0;
    let closed = loop {
        let reply = post_json(&instance, "/draws/shut/close", &json!({})).await;
        assert_ne!(
            reply.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{}",
            reply.body
        );
        match reply.status {
            StatusCode::OK => break reply,
            StatusCode::SERVICE_UNAVAILABLE => {
                interrupted += 1;
                // Half closed: the draw never reads "closed" before every stripe is.
                let seen = app.get("/draws/shut").await.body;
                assert_ne!(seen["status"], "open");
                assert!(interrupted < 50);
            }
            other => panic!("close answered {other}: {}", reply.body),
        }
    };
    assert!(interrupted > 0, "no close was interrupted");
    assert_eq!(closed.body["status"], "closed");
    // W5: the close froze the list once, as the list served from then on.
    assert_eq!(closed.body["eligible_count"], 3, "{}", closed.body);
    proxy.set(Faults::default());
    let eligible = app.get("/draws/shut/eligible").await.body;
    assert_eq!(eligible["eligible_digest"], closed.body["eligible_digest"]);
    assert_eq!(
        app.get("/draws/shut").await.body["frozen_at"],
        closed.body["frozen_at"]
    );
    // Every stripe refuses now, on this instance and on a new one.
    for (i, seller) in [&instance, &app.router].into_iter().enumerate() {
        let late = post_json(
            seller,
            "/draws/shut/purchases",
            &json!({"payment_id": format!("after-{i}"), "quantity": 1}),
        )
        .await;
        assert_eq!(late.code(), "draw_closed", "{}", late.body);
    }
    assert_eq!(sold_tickets(&app.scan().await, 2_000).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn voids_and_a_move_under_faults_settle_once_and_keep_the_chain() {
    const BEFORE: usize = 60;
    let app = spawn_app().await;
    let definition = json!({"format": "VF{seq:5}", "reset": "never", "gapless": true});
    app.define_series("VF", &definition).await;
    let orders: Vec<serde_json::Value> = (0..BEFORE)
        .map(|i| json!({"external_ref": format!("v{i}")}))
        .collect();
    let created = app
        .post(
            "/orders/batch",
            &json!({"series": "VF", "source": "vf", "orders": orders}),
        )
        .await;
    assert_eq!(created.status, StatusCode::OK);
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.1));
    // Twin operators void the same twenty orders and make the same move, while a source
    // goes on importing through the faults.
    let mut operators = Vec::new();
    for _twin in 0..2 {
        let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(20)).await;
        operators.push(tokio::spawn(async move {
            let mut voided_at = Vec::new();
            for counter in 1..=20 {
                let path = format!("/series/VF/orders/VF{counter:05}/void");
                let reply = settle(&instance, &path, r#"{"reason": "duplicate"}"#).await;
                assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
                voided_at.push(reply.body["voided_at"].as_str().unwrap().to_owned());
            }
            let body = r#"{"next": 1000, "reason": "skip to the new range"}"#;
            let moved = settle_request(&instance, Method::PATCH, "/series/VF", body).await;
            assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
            voided_at
        }));
    }
    let importer = faulty_instance(&proxy, app.store.table(), Duration::from_secs(20)).await;
    let imported = tokio::spawn(async move { import_source(importer, "VF", "late", 40).await });
    let twins: Vec<Vec<String>> = futures::future::join_all(operators)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    // Each void happened once: both twins were answered the same void.
    assert_eq!(twins[0], twins[1]);
    assert_eq!(imported.await.unwrap().len(), 40);
    let counts = proxy.counts();
    assert!(counts.errors_after + counts.lost_after > 0, "{counts:?}");
    let audit = app.get("/series/VF/audit").await.body;
    assert_eq!(
        (audit["orders"].as_u64(), audit["voided"].as_u64()),
        (Some(100), Some(20)),
        "{audit}"
    );
    let gaps = audit["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1, "{audit}");
    assert_eq!(
        (&gaps[0]["cause"], &gaps[0]["to"]),
        (&json!("declared_move"), &json!(999))
    );
    assert_eq!(audit["chain"]["intact"], true, "{audit}");
    assert_eq!(numbered_orders(&app.scan().await, "VF").len(), 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn voids_winners_and_redraws_under_faults_settle_exactly_once() {
    const TOTAL: u64 = 120;
    const CAP: u64 = 12;
    let app = spawn_app().await;
    let draw = json!({"draw_id": "fv", "total_tickets": TOTAL, "max_per_purchase": 5,
                      "max_per_payer": CAP});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.05));
    let twins = [
        faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await,
        faulty_instance(&proxy, app.store.table(), Duration::from_secs(10)).await,
    ];
    // Every request is sent by two instances at once and repeated until it settles.
    let both = |path: String, body: serde_json::Value| {
        let twins = twins.clone();
        async move {
            let body = body.to_string();
            tokio::join!(
                settle(&twins[0], &path, &body),
                settle(&twins[1], &path, &body)
            )
        }
    };
    let mut bought = Vec::new();
    for i in 0..30 {
        let body = json!({"payment_id": format!("p{i}"), "quantity": 1 + i % 5,
                          "payer_id": format!("payer-{}", i % 4)});
        let (a, b) = both("/draws/fv/purchases".into(), body).await;
        match (a.code(), b.code()) {
            ("", "") => {
                assert_eq!(tickets_of(&a), tickets_of(&b), "p{i}: the twins disagree");
                bought.push(format!("p{i}"));
            }
            ("payer_limit", "payer_limit") | ("sold_out", "sold_out") => {}
            (x, y) => panic!("p{i}: {x} / {y}: {} {}", a.body, b.body),
        }
    }
    for payment in bought.iter().step_by(3) {
        let (a, b) = both(
            format!("/draws/fv/purchases/{payment}/void"),
            json!({"reason": "refund"}),
        )
        .await;
        assert_eq!((a.status, b.status), (StatusCode::OK, StatusCode::OK));
        assert_eq!((&a.body["status"], &a.body), (&json!("void"), &b.body));
    }
    let (closed, _) = both("/draws/fv/close".into(), json!({})).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let (a, b) = both("/draws/fv/winners".into(), json!({"prizes": 3})).await;
    assert!(
        a.status.is_success() && b.status.is_success(),
        "{} {}",
        a.body,
        b.body
    );
    assert_eq!(a.body, b.body, "the twins got different winners");
    let (a, b) = both(
        "/draws/fv/winners/1/redraw".into(),
        json!({"reason": "no answer"}),
    )
    .await;
    assert!(
        a.status.is_success() && b.status.is_success(),
        "{} {}",
        a.body,
        b.body
    );
    assert_eq!(a.body, b.body, "the twins redrew differently");
    // A void after the freeze is recorded once and changes no winner.
    let (late, again) = both(
        format!("/draws/fv/purchases/{}/void", bought[1]),
        json!({"reason": "late"}),
    )
    .await;
    assert_eq!((late.status, &late.body), (StatusCode::OK, &again.body));
    let counts = proxy.counts();
    assert!(counts.errors_after + counts.lost_after > 0, "{counts:?}");
    proxy.set(Faults::default());

    // Exactly once: one pick per prize and one redraw, voids counted once, caps held.
    let items = app.scan().await;
    sold_tickets(&items, TOTAL);
    let voided = voids_and_caps(&items, "fv", CAP);
    assert_eq!(of_kind(&items, "pick").len(), 4);
    let winners = app.get("/draws/fv/winners").await.body;
    // The same winners as answered; the late void may have flagged one of them since.
    let unflagged = |prizes: &serde_json::Value| {
        let mut prizes = prizes.clone();
        for prize in prizes.as_array_mut().unwrap() {
            prize.as_object_mut().unwrap().remove("voided");
        }
        prizes
    };
    assert_eq!(unflagged(&winners["prizes"]), unflagged(&a.body["prizes"]));
    assert_eq!(winners["proof"]["picks"], a.body["proof"]["picks"]);
    assert_eq!(winners["history"].as_array().unwrap().len(), 1);
    let late: Vec<u64> = tickets_of(&late);
    assert_eq!(
        winners["proof"]["late_voids"].as_array().unwrap().len(),
        late.len()
    );
    for prize in winners["prizes"].as_array().unwrap() {
        let ticket = prize["ticket"].as_u64().unwrap();
        // Voided before the freeze: never a winner; after it: flagged.
        assert_eq!(prize["voided"], late.contains(&ticket));
        assert!(!voided.contains(&ticket) || late.contains(&ticket));
    }
}
