//! O6: single posts, one order per request, from several processes at once (each its own
//! client and service, as warm Lambda instances are). A fast series numbers from blocks
//! each process reserved, at about one request per order; a gapless series moves its
//! counter from the value each process knows, and its processes take turns when they
//! meet. The table is read back: no number twice, no gap in a gapless series, and in a
//! fast series gaps only where the processes still hold spare numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tally_domain::journal::Operator;

use axum::Router;
use axum::http::StatusCode;
use serde_json::json;
use tally::orders::{ItemOutcome, OrderService};
use tally::store::{RequestCounter, RequestCounts, Store};
use tally_domain::access::SourceAccess;
use tally_domain::ids::{SeriesId, SourceId};
use tally_domain::series::{Reset, SeriesDefinition};

use crate::faults::{every_fault, faulty_instance_with_orders};
use crate::helpers::{
    TestApp, endpoint, fresh_store, instance, order_input, scan, settle, spawn_app, store_on,
};
use crate::invariants::{numbered_orders, spare_numbers};
use tally_testkit::fault_proxy::{FaultProxy, Faults};

/// What single posts cost, all writers together.
#[derive(Debug)]
pub struct SingleCost {
    pub orders: u64,
    pub requests: RequestCounts,
    pub table_units: u64,
    /// Each request's time, sorted.
    pub latencies: Vec<Duration>,
}

impl SingleCost {
    pub fn requests_per_order(&self) -> f64 {
        self.requests.total() as f64 / self.orders as f64
    }

    pub fn units_per_order(&self) -> f64 {
        self.table_units as f64 / self.orders as f64
    }

    /// Shown with the test's output (`--nocapture`).
    fn report(&self, label: &str) {
        let at = |p: f64| self.latencies[((self.latencies.len() - 1) as f64 * p) as usize];
        eprintln!(
            "{label}: {:.3} requests/order ({}), {:.2} WCU/order, latency p50 {:?} p99 {:?}",
            self.requests_per_order(),
            self.requests,
            self.units_per_order(),
            at(0.5),
            at(0.99)
        );
    }
}

/// `writers` processes post `per_writer` orders each, one per request, to `series`;
/// each posts again what it was told to post again. Returns the cost and the services.
pub async fn post_singles(
    table: &str,
    series: &SeriesId,
    writers: usize,
    per_writer: usize,
) -> (SingleCost, Vec<Arc<OrderService>>) {
    let counter = RequestCounter::default();
    let mut stores: Vec<Store> = Vec::new();
    let mut services = Vec::new();
    for _ in 0..writers {
        let store = store_on(table, Some(counter.clone())).await;
        services.push(Arc::new(OrderService::new(store.clone())));
        stores.push(store);
    }
    let mut tasks = Vec::new();
    for (writer, service) in services.iter().enumerate() {
        let (service, series) = (service.clone(), series.clone());
        let source = SourceId::parse(&format!("w{writer}")).unwrap();
        tasks.push(tokio::spawn(async move {
            let mut created = 0u64;
            let mut latencies = Vec::new();
            for k in 0..per_writer {
                for _ in 0..10 {
                    let at = Instant::now();
                    let outcome = service
                        .create_orders(
                            &series,
                            &source,
                            vec![order_input(&format!("o-{k}"))],
                            &SourceAccess::All,
                        )
                        .await
                        .unwrap()
                        .pop()
                        .unwrap();
                    latencies.push(at.elapsed());
                    match outcome {
                        ItemOutcome::Created(_) => created += 1,
                        ItemOutcome::Existing(_) => {}
                        ItemOutcome::Rejected(r) if r.code.is_retryable() => continue,
                        other => panic!("{other:?}"),
                    }
                    break;
                }
            }
            (created, latencies)
        }));
    }
    let mut orders = 0;
    let mut latencies = Vec::new();
    for task in tasks {
        let (created, times) = task.await.unwrap();
        orders += created;
        latencies.extend(times);
    }
    latencies.sort();
    let cost = SingleCost {
        orders,
        requests: counter.snapshot(),
        table_units: stores.iter().map(|s| s.write_meter().table_units()).sum(),
        latencies,
    };
    (cost, services)
}

async fn define(store: &Store, id: &str, gapless: bool) -> SeriesId {
    let series = SeriesId::parse(id).unwrap();
    let definition =
        SeriesDefinition::new(&format!("{id}{{yy}}{{seq:6}}"), Reset::Yearly, gapless, 1).unwrap();
    OrderService::new(store.clone())
        .define_series(&series, definition, &Operator::local())
        .await
        .unwrap();
    series
}

/// Every counter of `series` as stored, ascending, each once (O1).
async fn stored_counters(store: &Store, series: &str) -> Vec<u64> {
    let mut counters: Vec<u64> = numbered_orders(&scan(store).await, series)
        .into_values()
        .map(|n| n.counter)
        .collect();
    counters.sort_unstable();
    counters
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fast_single_posts_from_four_processes_cost_about_one_request_each() {
    let (store, _table) = fresh_store(None).await;
    let series = define(&store, "FS", false).await;
    let (cost, services) = post_singles(store.table(), &series, 4, 100).await;
    cost.report("fast, 4 writers");
    assert_eq!(cost.orders, 400);
    // O1 and O6: no number twice; every gap is a number some process still holds.
    let counters = stored_counters(&store, "FS").await;
    let used: BTreeSet<u64> = counters.iter().copied().collect();
    assert_eq!(used.len(), 400);
    let (spare, _) = spare_numbers(&services);
    let last = *counters.last().unwrap();
    let gaps: BTreeSet<u64> = (1..=last).filter(|c| !used.contains(c)).collect();
    assert!(gaps.is_subset(&spare), "gaps {gaps:?}, spare {spare:?}");
    assert!(used.is_disjoint(&spare));
    assert!(cost.requests_per_order() <= 1.15, "{cost:?}");
    // Two items in a transaction: 4 units; reservations add one each.
    assert!(cost.units_per_order() <= 4.4, "{cost:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gapless_single_posts_from_four_processes_cost_at_most_two_requests_each() {
    let (store, _table) = fresh_store(None).await;
    let series = define(&store, "GS", true).await;
    let (cost, _) = post_singles(store.table(), &series, 4, 100).await;
    cost.report("gapless, 4 writers");
    assert_eq!(cost.orders, 400);
    // O2: exactly 1..=400.
    assert_eq!(
        stored_counters(&store, "GS").await,
        (1..=400).collect::<Vec<u64>>()
    );
    assert!(cost.requests_per_order() <= 2.0, "{cost:?}");
    // Three items in a transaction: 6 units.
    assert!(cost.units_per_order() <= 6.6, "{cost:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gapless_single_posts_of_one_process_cost_one_request_each() {
    let (store, _table) = fresh_store(None).await;
    let series = define(&store, "G1", true).await;
    let (cost, _) = post_singles(store.table(), &series, 1, 100).await;
    cost.report("gapless, 1 writer");
    assert_eq!(
        stored_counters(&store, "G1").await,
        (1..=100).collect::<Vec<u64>>()
    );
    // The series and the counter are read once; then one transaction per order.
    assert_eq!(cost.requests.of("TransactWriteItems"), 100, "{cost:?}");
    assert_eq!(cost.requests.total(), 102, "{cost:?}");
}

/// O4 without a read first: a single post's write finds a repeat by the reference's
/// condition, then reads the order's credit notes; the number it tried goes back to the
/// process's spare numbers, and the next order gets it.
#[tokio::test]
async fn a_repeated_single_post_is_found_by_its_write_and_keeps_no_number() {
    let counter = RequestCounter::default();
    let (store, _table) = fresh_store(Some(counter.clone())).await;
    let series = define(&store, "RP", false).await;
    let service = OrderService::new(store.clone());
    let source = SourceId::parse("erp").unwrap();
    let created = |outcome: Vec<ItemOutcome>| match outcome.into_iter().next() {
        Some(ItemOutcome::Created(order)) => order,
        other => panic!("{other:?}"),
    };
    let first = created(
        service
            .create_orders(&series, &source, vec![order_input("a")], &SourceAccess::All)
            .await
            .unwrap(),
    );
    // The second block (of two) leaves the process a spare number.
    let second = created(
        service
            .create_orders(&series, &source, vec![order_input("b")], &SourceAccess::All)
            .await
            .unwrap(),
    );
    let before = counter.snapshot();
    let again = service
        .create_orders(&series, &source, vec![order_input("a")], &SourceAccess::All)
        .await
        .unwrap();
    match &again[0] {
        ItemOutcome::Existing(order) => assert_eq!(order.order_number, first.order_number),
        other => panic!("{other:?}"),
    }
    let sent = counter.snapshot().since(&before);
    assert_eq!(
        (
            sent.of("TransactWriteItems"),
            sent.of("BatchGetItem"),
            sent.total()
        ),
        (1, 1, 2),
        "{sent}"
    );
    let next = created(
        service
            .create_orders(&series, &source, vec![order_input("c")], &SourceAccess::All)
            .await
            .unwrap(),
    );
    assert_eq!((first.counter, second.counter, next.counter), (1, 2, 3));
}

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
    let abandoned = lost_reservations(&proxy);
    check_numbering(&app, "U", gapless, &answered, &services, &abandoned).await;
}

/// The blocks reserved by an `ADD` whose answer was lost (the SDK's repeat reserved
/// another): no process knows them, so they stay unused.
fn lost_reservations(proxy: &FaultProxy) -> BTreeSet<u64> {
    let mut lost = BTreeSet::new();
    for undelivered in proxy.undelivered() {
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
