//! What a single post costs in requests, and a repeated post.

use super::*;

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
