//! Orders under faults: gapless and fast imports, voids and a move of the counter.

use super::*;

/// An amount wider than a 64-bit float can hold.
const AMOUNT: &str = "123456789012345678901234567890";

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

#[tokio::test]
async fn a_fast_order_whose_transaction_stays_in_progress_leaves_its_numbers_in_doubt() {
    let app = spawn_app().await;
    let definition = json!({"format": "IP{seq:5}", "reset": "never", "gapless": false});
    app.define_series("IP", &definition).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(20)).await;
    // Every attempt of every transaction commits and is answered "still in progress".
    proxy.set(Faults {
        in_progress_after: 1.0,
        operations: Some(vec!["TransactWriteItems".into()]),
        ..Faults::default()
    });
    let first = json!({"series": "IP", "source": "s", "external_ref": "a"}).to_string();
    let unknown = crate::helpers::send_raw(
        &instance,
        Method::POST,
        "/orders",
        "application/json",
        first.clone(),
    )
    .await;
    assert_eq!(
        unknown.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        unknown.body
    );
    assert!(proxy.counts().in_progress_after > 0);
    // The numbers that transaction took are in doubt: the next order neither fails on
    // them nor takes one twice.
    proxy.set(Faults::default());
    let second = json!({"series": "IP", "source": "s", "external_ref": "b"}).to_string();
    let next = settle(&instance, "/orders", &second).await;
    assert_eq!(next.status, StatusCode::CREATED, "{}", next.body);
    let again = settle(&instance, "/orders", &first).await;
    assert!(again.status.is_success(), "{}", again.body);
    let stored = numbered_orders(&app.scan().await, "IP");
    assert_eq!(stored.len(), 2);
    let answered = [&again.body["order_number"], &next.body["order_number"]];
    for numbered in stored.values() {
        assert!(answered.contains(&&json!(numbered.number)), "{stored:?}");
    }
}

/// DynamoDB answered success in a body cut short: the order may exist, so the answer is a
/// `503` to repeat, never a `500`; the repeat answers the order the write made.
#[tokio::test]
async fn an_unreadable_success_answer_is_an_unknown_outcome_that_a_repeat_settles() {
    let app = spawn_app().await;
    for (series, gapless) in [("TG", true), ("TF", false)] {
        let definition =
            json!({"format": format!("{series}{{seq:5}}"), "reset": "never", "gapless": gapless});
        app.define_series(series, &definition).await;
        let proxy = FaultProxy::start(&endpoint()).await;
        let instance = faulty_instance(&proxy, app.store.table(), Duration::from_secs(20)).await;
        proxy.set(Faults {
            truncated_after: 1.0,
            operations: Some(vec!["TransactWriteItems".into()]),
            ..Faults::default()
        });
        let body = json!({"series": series, "source": series, "external_ref": "a"}).to_string();
        let unknown = crate::helpers::send_raw(
            &instance,
            Method::POST,
            "/orders",
            "application/json",
            body.clone(),
        )
        .await;
        assert_eq!(
            (unknown.status, unknown.code()),
            (StatusCode::SERVICE_UNAVAILABLE, "outcome_unknown"),
            "{series}: {}",
            unknown.body
        );
        assert_eq!(proxy.counts().truncated_after, 1);
        proxy.set(Faults::default());
        let again = settle(&instance, "/orders", &body).await;
        assert_eq!(again.status, StatusCode::OK, "{series}: {}", again.body);
        let stored = numbered_orders(&app.scan().await, series);
        let numbers: Vec<&str> = stored.values().map(|n| n.number.as_str()).collect();
        assert_eq!(numbers, [again.body["order_number"].as_str().unwrap()]);
    }
}
