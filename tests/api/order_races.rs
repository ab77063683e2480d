//! Four systems post orders at once, with reposts; then the table is read back and the
//! numbering invariants (O1-O5) are checked, for a gapless and a fast series.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use axum::http::{Method, StatusCode};
use jiff::Timestamp;
use serde_json::{Value, json};
use tally::orders::OrderService;
use tally::store::orders::Reservation;
use tally_domain::ids::SeriesId;
use tally_domain::series::{Period, Reset};

use crate::helpers::{TestApp, get, instance, settle, settle_request, spawn_app, store_on};
use crate::invariants::{numbered_orders, spare_numbers};

const SYSTEMS: usize = 4;
const ORDERS: usize = 500;

/// Batch sizes a system cycles through: single posts mixed with batches.
const RUNS: [usize; 6] = [1, 20, 1, 37, 100, 1];

/// (source, ref) -> every number the API answered for it.
type Answers = HashMap<(String, String), Vec<String>>;

async fn define(app: &TestApp, id: &str, gapless: bool) {
    let body =
        json!({"format": format!("{id}{{yy}}{{seq:5}}"), "reset": "yearly", "gapless": gapless});
    let reply = app.put(&format!("/series/{id}"), &body).await;
    assert_eq!(reply.status, StatusCode::CREATED);
}

/// Posts one system's orders; returns the answers and, per batch, its created numbers in
/// request order.
async fn post_system(
    router: axum::Router,
    series: &str,
    source: String,
    refs: Vec<String>,
) -> (Answers, Vec<Vec<u64>>) {
    let mut answers = Answers::new();
    let mut batches = Vec::new();
    let mut rest = refs.as_slice();
    let mut run = 0;
    while !rest.is_empty() {
        let size = RUNS[run % RUNS.len()].min(rest.len());
        run += 1;
        let (now, later) = rest.split_at(size);
        rest = later;
        if size == 1 {
            let body = json!({"series": series, "source": source, "external_ref": now[0], "data": {"ref": now[0]}});
            let reply = settle(&router, "/orders", &body.to_string()).await;
            assert!(reply.status.is_success(), "{}", reply.body);
            let number = reply.body["order_number"].as_str().unwrap().to_owned();
            answers
                .entry((source.clone(), now[0].clone()))
                .or_default()
                .push(number);
        } else {
            let orders: Vec<Value> = now
                .iter()
                .map(|r| json!({"external_ref": r, "data": {"ref": r}}))
                .collect();
            let body = json!({"series": series, "source": source, "orders": orders});
            let reply = settle(&router, "/orders/batch", &body.to_string()).await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            let mut created = Vec::new();
            for (result, r) in reply.body["results"].as_array().unwrap().iter().zip(now) {
                let status = result["status"].as_str().unwrap();
                assert!(status == "created" || status == "existing", "{result}");
                let number = result["order_number"].as_str().unwrap().to_owned();
                if status == "created" {
                    created.push(counter_of(&number));
                }
                answers
                    .entry((source.clone(), r.clone()))
                    .or_default()
                    .push(number);
            }
            batches.push(created);
        }
    }
    (answers, batches)
}

fn counter_of(number: &str) -> u64 {
    number[number.len() - 5..].parse().unwrap()
}

/// While the systems post: an operator moves the counter 200 ahead once the series has
/// 300 orders, and voids its first five orders. Returns the last number the move skips.
async fn move_and_void(router: axum::Router, series: String) -> u64 {
    let mut skipped_to = None;
    for _ in 0..2_000 {
        let status = get(&router, &format!("/series/{series}")).await.body;
        let last = status["last_counter"].as_u64().unwrap_or(0);
        if last < 300 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        }
        let next = last + 200;
        let body = json!({"next": next, "reason": "numbers kept for the paper invoices"});
        let path = format!("/series/{series}");
        let reply = settle_request(&router, Method::PATCH, &path, &body.to_string()).await;
        match reply.status {
            StatusCode::OK => {
                skipped_to = Some(next - 1);
                break;
            }
            // The systems passed the target first: aim further.
            StatusCode::CONFLICT => assert_eq!(reply.code(), "move_not_forward"),
            other => panic!("move answered {other}: {}", reply.body),
        }
    }
    let listed = get(&router, &format!("/series/{series}/orders?limit=5")).await;
    for order in listed.body["orders"].as_array().unwrap() {
        let number = order["order_number"].as_str().unwrap();
        let path = format!("/series/{series}/orders/{number}/void");
        let reply = settle(&router, &path, r#"{"reason": "cancelled"}"#).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    skipped_to.expect("the move was made")
}

/// G1 and C1 after a run: the audit finds every order, the five voids, the declared move
/// (ending at `skipped_to`) as the only gap in a gapless series, and an intact chain.
/// Returns the declared gap.
async fn check_audit(app: &TestApp, series: &str, skipped_to: u64, gapless: bool) -> (u64, u64) {
    let audit = app.get(&format!("/series/{series}/audit")).await.body;
    assert_eq!(audit["orders"], SYSTEMS * ORDERS, "{audit}");
    assert_eq!(audit["voided"], 5);
    let gaps = audit["gaps"].as_array().unwrap();
    let declared: Vec<(u64, u64)> = gaps
        .iter()
        .filter(|g| g["cause"] == "declared_move")
        .map(|g| (g["from"].as_u64().unwrap(), g["to"].as_u64().unwrap()))
        .collect();
    assert_eq!(declared.len(), 1, "{audit}");
    assert_eq!(declared[0].1, skipped_to);
    if gapless {
        assert_eq!(gaps.len(), 1, "{audit}");
        assert_eq!(audit["chain"]["intact"], true, "{audit}");
        assert_eq!(audit["chain"]["links"], SYSTEMS * ORDERS + 1);
    }
    declared[0]
}

/// What the systems did: every answer, the created numbers of every batch, the declared
/// gap's end, and the order services of their instances.
struct Run {
    answers: Answers,
    batches: Vec<Vec<u64>>,
    skipped_to: u64,
    services: Vec<Arc<OrderService>>,
}

/// Runs the four systems, each with a second instance that reposts 10% of its orders at
/// the same time, and an operator who moves the counter and voids orders.
async fn run_systems(app: &TestApp, series: &str) -> Run {
    let operator = crate::helpers::router(store_on(app.store.table(), None).await);
    let operator = tokio::spawn(move_and_void(operator, series.to_owned()));
    let mut tasks = Vec::new();
    let mut services = Vec::new();
    for system in 0..SYSTEMS {
        let source = format!("sys-{system}");
        let refs: Vec<String> = (0..ORDERS).map(|k| format!("o-{k}")).collect();
        let reposts: Vec<String> = refs.iter().filter(|r| r.ends_with('3')).cloned().collect();
        for list in [refs, reposts] {
            let (router, service) = instance(store_on(app.store.table(), None).await);
            services.push(service);
            let (series, source) = (series.to_owned(), source.clone());
            tasks.push(tokio::spawn(async move {
                post_system(router, &series, source, list).await
            }));
        }
    }
    let mut answers = Answers::new();
    let mut batches = Vec::new();
    for task in tasks {
        let (a, b) = task.await.unwrap();
        for (key, numbers) in a {
            answers.entry(key).or_default().extend(numbers);
        }
        batches.extend(b);
    }
    Run {
        answers,
        batches,
        skipped_to: operator.await.unwrap(),
        services,
    }
}

/// Reads the series' orders back; checks O1, O3, O4 and the answers; returns the counters.
async fn check_table(app: &TestApp, series: &str, answers: &Answers) -> Vec<u64> {
    let orders = numbered_orders(&app.scan().await, series);
    let yy = Timestamp::now().strftime("%y").to_string();
    assert_eq!(orders.len(), SYSTEMS * ORDERS);
    for (key, numbered) in &orders {
        let number = &numbered.number;
        // O3: prefix, year, at least five digits.
        assert!(
            number.starts_with(&format!("{series}{yy}")) && number.len() == series.len() + 7,
            "{number}"
        );
        assert_eq!(counter_of(number), numbered.counter);
        let answered = &answers[key];
        assert!(
            answered.iter().all(|n| n == number),
            "{key:?}: answered {answered:?}, stored {number}"
        );
    }
    assert_eq!(answers.len(), SYSTEMS * ORDERS);
    let mut counters: Vec<u64> = orders.values().map(|n| n.counter).collect();
    counters.sort();
    counters
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_systems_fill_a_gapless_series_without_gaps_or_repeats() {
    let app = spawn_app().await;
    define(&app, "G", true).await;
    let Run {
        answers,
        batches,
        skipped_to,
        ..
    } = run_systems(&app, "G").await;
    let counters = check_table(&app, "G", &answers).await;
    let moved = check_audit(&app, "G", skipped_to, true).await;
    // O2: exactly 1..=M but the declared move.
    let expected: Vec<u64> = (1..=(SYSTEMS * ORDERS) as u64 + moved.1 + 1 - moved.0)
        .filter(|c| !(moved.0..=moved.1).contains(c))
        .collect();
    assert_eq!(counters, expected);
    // O5: within a batch, new orders are numbered in request order.
    for created in &batches {
        assert!(created.windows(2).all(|w| w[0] < w[1]), "{created:?}");
    }
    // A repost later still gets the original number.
    let again = app.post("/orders", &json!({"series": "G", "source": "sys-2", "external_ref": "o-13", "data": {"ref": "o-13"}})).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(
        again.body["order_number"],
        answers[&("sys-2".to_owned(), "o-13".to_owned())][0]
    );
}

/// O6: the instances number from blocks; what a crash would leave is what they hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_systems_fill_a_fast_series_with_gaps_only_from_failures() {
    let app = spawn_app().await;
    define(&app, "F", false).await;
    // A failure: an instance reserves a block, then dies before writing any order.
    let period =
        Period::parse(Reset::Yearly, &Timestamp::now().strftime("%Y").to_string()).unwrap();
    let series = SeriesId::parse("F").unwrap();
    let injected_last = match app
        .store
        .reserve_numbers(&series, &period, 1, 7, 1)
        .await
        .unwrap()
    {
        Reservation::Reserved { last, .. } => last,
        Reservation::Refused(counter) => panic!("{counter:?}"),
    };
    let injected: Vec<u64> = (injected_last - 6..=injected_last).collect();
    let Run {
        answers,
        batches,
        skipped_to,
        services,
    } = run_systems(&app, "F").await;
    let moved = check_audit(&app, "F", skipped_to, false).await;
    let counters = check_table(&app, "F", &answers).await;
    for created in &batches {
        assert!(created.windows(2).all(|w| w[0] < w[1]), "{created:?}");
    }
    // O2 (fast) and O6: never a repeat; the gaps are the injected block and the numbers
    // the instances still hold (a repost that raced its original gave its number back).
    let used: BTreeSet<u64> = counters.iter().copied().collect();
    assert_eq!(used.len(), counters.len());
    let max = *counters.last().unwrap();
    let (spare, _) = spare_numbers(&services);
    assert!(used.is_disjoint(&spare), "a spare number was used");
    assert!(
        injected.iter().all(|c| !used.contains(c)),
        "an injected number was used"
    );
    let unexplained: Vec<u64> = (1..=max)
        .filter(|c| !used.contains(c) && !(moved.0..=moved.1).contains(c))
        .filter(|c| !injected.contains(c) && !spare.contains(c))
        .collect();
    assert!(
        unexplained.is_empty(),
        "gaps not explained by failures: {unexplained:?}"
    );
}
