//! Single posts from many tasks and instances, under faults and a frozen endpoint.

use super::*;

/// Instances that each post single orders from several tasks at once, through the API.
/// Returns, per (source, reference), every number answered.
async fn post_from_instances(
    instances: &[Router],
    series: &str,
    tasks_per_instance: usize,
    orders_per_task: usize,
) -> BTreeMap<(String, String), Vec<String>> {
    let mut tasks = Vec::new();
    for (i, router) in instances.iter().enumerate() {
        for t in 0..tasks_per_instance {
            let (router, series) = (router.clone(), series.to_owned());
            let source = format!("i{i}t{t}");
            tasks.push(tokio::spawn(async move {
                let mut answers = Vec::new();
                for k in 0..orders_per_task {
                    let reference = format!("o-{k}");
                    let body =
                        json!({"series": series, "source": source, "external_ref": reference});
                    let reply = settle(&router, "/orders", &body.to_string()).await;
                    assert!(reply.status.is_success(), "{}", reply.body);
                    let number = reply.body["order_number"].as_str().unwrap().to_owned();
                    answers.push(((source.clone(), reference), number));
                }
                answers
            }));
        }
    }
    let mut answered: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for task in tasks {
        for (key, number) in task.await.unwrap() {
            answered.entry(key).or_default().push(number);
        }
    }
    answered
}

/// O1, O4 and O6 read back from the table: every reference has one order, whose number
/// every answer named; no counter twice; a gapless series has every counter from 1 and
/// an intact chain, a fast one gaps only where an instance holds spare numbers. The audit
/// lists those gaps as reserved and unused (G1).
async fn check_numbering(
    app: &TestApp,
    series: &str,
    gapless: bool,
    answered: &BTreeMap<(String, String), Vec<String>>,
    services: &[Arc<OrderService>],
    abandoned: &BTreeSet<u64>,
) {
    let stored = numbered_orders(&app.scan().await, series);
    assert_eq!(stored.len(), answered.len());
    for (key, numbered) in &stored {
        assert!(
            answered[key].iter().all(|n| *n == numbered.number),
            "{key:?}: answered {:?}, stored {}",
            answered[key],
            numbered.number
        );
    }
    let used: BTreeSet<u64> = stored.values().map(|n| n.counter).collect();
    assert_eq!(used.len(), stored.len(), "O1");
    let last = *used.last().unwrap();
    let gaps: BTreeSet<u64> = (1..=last).filter(|c| !used.contains(c)).collect();
    let audit = app.get(&format!("/series/{series}/audit")).await.body;
    assert_eq!(audit["orders"], stored.len(), "{audit}");
    if gapless {
        assert!(gaps.is_empty(), "O2: gaps {gaps:?}");
        assert_eq!(audit["chain"]["intact"], true, "C1: {audit}");
        assert_eq!(audit["gaps"].as_array().map(Vec::len), Some(0), "{audit}");
        return;
    }
    let (spare, doubtful) = spare_numbers(services);
    assert!(used.is_disjoint(&spare), "a spare number was used");
    let unexplained: Vec<u64> = gaps
        .iter()
        .filter(|c| !spare.contains(c) && !doubtful.contains(c) && !abandoned.contains(c))
        .copied()
        .collect();
    assert!(
        unexplained.is_empty(),
        "gaps {unexplained:?} not held: spare {spare:?}, doubtful {doubtful:?}, abandoned {abandoned:?}"
    );
    for gap in audit["gaps"].as_array().unwrap() {
        assert_eq!(gap["cause"], "reserved_unused", "G1: {gap}");
    }
}

async fn race_single_posts(gapless: bool) {
    let app = spawn_app().await;
    let definition = json!({"format": "R{seq:6}", "reset": "never", "gapless": gapless});
    app.define_series("R", &definition).await;
    let mut routers = Vec::new();
    let mut services = Vec::new();
    for _ in 0..4 {
        let (router, service) = instance(store_on(app.store.table(), None).await);
        routers.push(router);
        services.push(service);
    }
    let answered = post_from_instances(&routers, "R", 4, 30).await;
    // A repost from another instance answers the same number and numbers nothing.
    let again = json!({"series": "R", "source": "i0t0", "external_ref": "o-7"});
    let reply = settle(&routers[3], "/orders", &again.to_string()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.body["order_number"],
        answered[&("i0t0".to_owned(), "o-7".to_owned())][0]
    );
    check_numbering(&app, "R", gapless, &answered, &services, &BTreeSet::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn single_posts_from_many_tasks_of_several_instances_fill_a_gapless_series() {
    race_single_posts(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn single_posts_from_many_tasks_of_several_instances_fill_a_fast_series_from_blocks() {
    race_single_posts(false).await;
}

async fn single_posts_under_faults(gapless: bool) {
    let app = spawn_app().await;
    let definition = json!({"format": "U{seq:6}", "reset": "never", "gapless": gapless});
    app.define_series("U", &definition).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.08));
    let mut routers = Vec::new();
    let mut services = Vec::new();
    for _ in 0..4 {
        let (router, service) =
            faulty_instance_with_orders(&proxy, app.store.table(), Duration::from_secs(20)).await;
        routers.push(router);
        services.push(service);
    }
    let answered = post_from_instances(&routers, "U", 2, 25).await;
    let counts = proxy.counts();
    assert!(counts.errors_after + counts.lost_after > 0, "{counts:?}");
    proxy.set(Faults::default());
    let abandoned = lost_reservations(&proxy).await;
    check_numbering(&app, "U", gapless, &answered, &services, &abandoned).await;
}

/// The blocks reserved by an `ADD` whose answer was lost, or came after the SDK had given
/// up on it (the SDK's repeat reserved another): no process knows them, so they stay unused.
async fn lost_reservations(proxy: &FaultProxy) -> BTreeSet<u64> {
    let mut lost = BTreeSet::new();
    for undelivered in proxy.undelivered().await {
        if undelivered.operation != "UpdateItem" {
            continue;
        }
        let count = &undelivered.request["ExpressionAttributeValues"][":count"]["N"];
        let last = &undelivered.answer["Attributes"]["last"]["N"];
        if let (Some(count), Some(last)) = (count.as_str(), last.as_str()) {
            let (count, last): (u64, u64) = (count.parse().unwrap(), last.parse().unwrap());
            lost.extend(last + 1 - count..=last);
        }
    }
    lost
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gapless_single_posts_under_faults_keep_every_number_once_and_no_gap() {
    single_posts_under_faults(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fast_single_posts_under_faults_leave_gaps_only_in_spare_numbers() {
    single_posts_under_faults(false).await;
}

/// A post whose transaction a frozen endpoint held answers `503`; the endpoint then
/// commits it. The repost answers that order, and its number is neither reused nor
/// skipped: in a fast series the process tried it again as doubtful and dropped it once
/// its write found it taken.
async fn a_post_held_by_a_frozen_endpoint(gapless: bool) {
    let app = spawn_app().await;
    let definition = json!({"format": "Z{seq:4}", "reset": "never", "gapless": gapless});
    app.define_series("Z", &definition).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let (router, service) =
        faulty_instance_with_orders(&proxy, app.store.table(), Duration::from_secs(3)).await;
    let order =
        |reference: &str| json!({"series": "Z", "source": "erp", "external_ref": reference});
    for reference in ["a", "b"] {
        let reply = settle(&router, "/orders", &order(reference).to_string()).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }
    proxy.freeze();
    let held = crate::helpers::post_json(&router, "/orders", &order("c")).await;
    assert_eq!(
        held.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        held.body
    );
    proxy.thaw().await;
    let again = settle(&router, "/orders", &order("c").to_string()).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["order_number"], "Z0003");
    let next = settle(&router, "/orders", &order("d").to_string()).await;
    assert_eq!(next.body["order_number"], "Z0004", "{}", next.body);
    let (spare, doubtful) = spare_numbers(&[service]);
    assert!(!spare.contains(&3) && doubtful.is_empty());
    // The only gaps are the numbers the process still holds.
    let audit = app.get("/series/Z/audit").await.body;
    assert_eq!(audit["orders"], 4, "{audit}");
    let gaps: BTreeSet<u64> = audit["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["from"].as_u64().unwrap()..=g["to"].as_u64().unwrap())
        .collect();
    assert_eq!(gaps, spare, "{audit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fast_post_held_by_a_frozen_endpoint_keeps_its_number_once() {
    a_post_held_by_a_frozen_endpoint(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gapless_post_held_by_a_frozen_endpoint_keeps_its_number_once() {
    a_post_held_by_a_frozen_endpoint(true).await;
}

/// A fast post whose write was throttled every time answers `503`; its number was never
/// written, so the repost gets it: no gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fast_post_throttled_away_gives_its_number_to_the_repost() {
    let app = spawn_app().await;
    let definition = json!({"format": "T{seq:4}", "reset": "never", "gapless": false});
    app.define_series("T", &definition).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let (router, _) =
        faulty_instance_with_orders(&proxy, app.store.table(), Duration::from_secs(10)).await;
    let order =
        |reference: &str| json!({"series": "T", "source": "erp", "external_ref": reference});
    let first = settle(&router, "/orders", &order("a").to_string()).await;
    assert_eq!(first.body["order_number"], "T0001", "{}", first.body);
    proxy.set(Faults {
        throttle: 1.0,
        operations: Some(vec!["TransactWriteItems".into()]),
        ..Faults::default()
    });
    let refused = crate::helpers::post_json(&router, "/orders", &order("b")).await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.body
    );
    proxy.set(Faults::default());
    let again = settle(&router, "/orders", &order("b").to_string()).await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    assert_eq!(again.body["order_number"], "T0002");
}
