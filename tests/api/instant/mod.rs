//! Instant wins (I1–I3): prizes fixed on numbers at creation, won at once by the purchase
//! that buys the number, exactly once, whatever runs concurrently; never shown before; the
//! map and every award recomputed by both verifiers after the winners.
//!
//! Holds never reveal a prize: holding, reading, releasing and letting expire winning
//! numbers answers nothing a losing number would not; a paid hold wins like any purchase.

mod holds;
mod sales;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use tally::store::Store;
use tally_domain::ids::DrawId;
use tally_domain::instant::InstantKey;
use tally_domain::secret::DeploymentSecret;

use crate::faults::{every_fault, twin_payments};
use crate::helpers::{
    Item, TestApp, attr_n, attr_s, endpoint, of_kind, settle, spawn_app, store_on, tickets_of,
};
use crate::hold_app::HoldApp;
use crate::invariants::sold_tickets;
use crate::winners::bitmap_tickets;
use tally_testkit::fault_proxy::FaultProxy;
use tally_testkit::verifiers::{Verdicts, verifiers_accept};

/// The map as an insider holding the deployment secret computes it: winning ticket to
/// prize. Tests use it to aim at winning numbers; nothing in the API shows it before
/// the winners.
pub async fn insider_map(store: &Store, draw: &str) -> BTreeMap<u64, String> {
    let draw = store
        .get_draw(&DrawId::parse(draw).unwrap())
        .await
        .unwrap()
        .unwrap();
    let instant = draw.instant_wins.as_ref().unwrap();
    let key = InstantKey::derive(&DeploymentSecret::local(), &draw.seed);
    let map = instant.map(&key, draw.config.total_tickets());
    map.slots()
        .iter()
        .map(|&(ticket, entry)| (ticket, instant.prizes()[entry].prize.clone()))
        .collect()
}

/// The prizes an answer lists: ticket to prize (none when it has no such field).
fn wins_of(body: &Value, field: &str) -> BTreeMap<u64, String> {
    body[field]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|w| {
            (
                w["ticket"].as_u64().unwrap(),
                w["prize"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// What `tickets` of one purchase win on `map`.
fn own_wins(tickets: &[u64], map: &BTreeMap<u64, String>) -> BTreeMap<u64, String> {
    tickets
        .iter()
        .filter_map(|t| map.get(t).map(|p| (*t, p.clone())))
        .collect()
}

/// Award items as stored: winning ticket to (payment, status).
fn stored_awards(items: &[Item]) -> BTreeMap<u64, (String, String)> {
    let mut awards = BTreeMap::new();
    for award in of_kind(items, "instant_win") {
        let Some(AttributeValue::L(wins)) = award.get("wins") else {
            panic!("an award without wins: {award:?}");
        };
        let status = match award.get("status") {
            Some(AttributeValue::S(s)) => s.clone(),
            _ => "active".to_owned(),
        };
        for win in wins {
            let ticket = attr_n(win.as_m().unwrap(), "ticket");
            let payment = attr_s(award, "payment_id").to_owned();
            let earlier = awards.insert(ticket, (payment, status.clone()));
            assert!(earlier.is_none(), "I1: ticket {ticket} awarded twice");
        }
    }
    awards
}

/// I1 on the table: every sold winning number is awarded once, to the purchase that holds
/// it, and no other number is.
fn assert_awards_follow_sales(
    items: &[Item],
    map: &BTreeMap<u64, String>,
    sold: &BTreeMap<String, Vec<u64>>,
) {
    let awards = stored_awards(items);
    let owner: BTreeMap<u64, &String> = sold
        .iter()
        .flat_map(|(payment, tickets)| tickets.iter().map(move |t| (*t, payment)))
        .collect();
    for (ticket, (payment, _)) in &awards {
        assert!(map.contains_key(ticket), "I1: {ticket} wins nothing");
        assert_eq!(owner.get(ticket), Some(&payment), "I1: {ticket}'s award");
    }
    for ticket in map.keys().filter(|t| owner.contains_key(t)) {
        assert!(awards.contains_key(ticket), "I1: sold {ticket} not awarded");
    }
}
