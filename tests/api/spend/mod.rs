//! Prices, spend limits across draws (M1) and self-exclusion (X1): each decided in the
//! transaction that commits a sale, on the payer's one item across draws, under
//! concurrency and through faults; the table is read back and checked.

mod charges;
mod limits;

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use jiff::{SignedDuration, Timestamp};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use tally_domain::time::rfc3339_millis;

use crate::faults::{every_fault, faulty_instance};
use crate::helpers::{Item, TestApp, endpoint, of_kind, scan, settle, settle_request, spawn_app};
use crate::helpers::{attr_n, attr_s};
use tally_testkit::fault_proxy::FaultProxy;

const PRICE: u64 = 100;

async fn priced_draws(app: &TestApp, draws: &[&str]) {
    for draw in draws {
        app.create_draw(
            &json!({"draw_id": draw, "total_tickets": 1_000, "max_per_purchase": 5,
                                "ticket_price": PRICE, "currency": "GBP"}),
        )
        .await;
    }
}

/// Each payer's non-void spend in GBP, and the day's count on the payer's item, as the
/// table holds them.
fn spend_on_record(items: &[Item]) -> BTreeMap<String, (u64, u64)> {
    let mut spend: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for purchase in of_kind(items, "purchase") {
        let payer = attr_s(purchase, "payer_id").to_owned();
        let void = purchase.get("status").is_some();
        if !void && purchase.contains_key("amount") {
            assert_eq!(attr_s(purchase, "currency"), "GBP");
            spend.entry(payer).or_default().0 += attr_n(purchase, "amount");
        }
    }
    let today = Timestamp::now().strftime("%Y-%m-%d").to_string();
    for payer in of_kind(items, "payer") {
        let Some(day) = payer.get("spend_GBP_day").and_then(|v| v.as_m().ok()) else {
            continue;
        };
        if day["window"].as_s().unwrap() == &today {
            let counted = day["amount"].as_n().unwrap().parse().unwrap();
            spend
                .entry(attr_s(payer, "payer_id").to_owned())
                .or_default()
                .1 = counted;
        }
    }
    spend
}
