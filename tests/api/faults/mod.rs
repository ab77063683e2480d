//! The fault model: between Tally and DynamoDB Local a proxy throttles, fails before and
//! after committing, loses answers after committing, and freezes; single tests have it
//! answer committed transactions as still in progress, answer success in a body cut
//! short, or refuse writes as held by a transaction. Every answer must be a
//! 2xx, a documented 409, or a 503 with `Retry-After` (never a 500, never a hang), and a
//! client that repeats its 503s must end with every payment and order settled exactly
//! once, with the invariants of the table intact.

mod credit_notes;
mod draw_end;
mod endpoint;
mod fast_reservations;
mod imports;
mod orders;
mod reads;
mod tickets;

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
    let store = faulty_store(proxy, table).await;
    let mut state = tally::api::AppState::new(store);
    state.request_timeout = request_timeout;
    let orders = state.orders.clone();
    (tally::api::router(state), orders)
}

/// A store of `table` whose DynamoDB calls go through the proxy.
pub async fn faulty_store(proxy: &FaultProxy, table: &str) -> Store {
    let config = StoreConfig::new(
        table,
        Some(proxy.endpoint()),
        TIGHT,
        AwsEnvironment::default(),
    )
    .unwrap();
    Store::connect(&config, None).await
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
