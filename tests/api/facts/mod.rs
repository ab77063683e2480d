//! A draw's public facts (`GET /draws/{draw_id}/facts`) are right at any moment of a
//! concurrent sale: polled while buyers online and by post, choosers, holders and voids
//! race on several processes, every answer adds up (sold, held and remaining to the
//! draw; entries and voids to sold; odds to the counts); a fresh count lies between the
//! table read back just before it and just after, and published facts are such a count,
//! never older than the bound; once the sale stops a count is the table's exactly.
//! Instant prizes are counts only: a held winning number changes nothing. A poll within
//! the bound reads one item.

mod reads;
mod sale;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

use aws_sdk_dynamodb::types::AttributeValue;
use axum::Router;
use axum::http::{Method, StatusCode};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use crate::helpers::{
    Item, Reply, TestApp, attr_n, fresh_store, get, of_kind, post_json, router, settle,
    settle_request, spawn_app, store_on, tickets_of,
};
use crate::hold_app::clocked_router;
use crate::instant::insider_map;
use jiff::{SignedDuration, Timestamp};
use tally::store::RequestCounter;
use tally::store::draws::Published;
use tally::tickets::FACTS_FRESH;
use tally_domain::ids::DrawId;
use tally_domain::time::{Epoch, from_epoch_millis, parse_rfc3339, rfc3339_millis};

/// The freshness bound in ms.
fn bound_ms() -> i64 {
    i64::try_from(FACTS_FRESH.as_millis()).unwrap()
}

fn now_ms() -> i64 {
    Timestamp::now().epoch_millis()
}

fn read_at_ms(facts: &Value) -> i64 {
    let text = facts["read_at"].as_str().unwrap();
    parse_rfc3339(text).unwrap().epoch_millis()
}

/// The `max-age` an answer's `Cache-Control` gives.
fn max_age(reply: &Reply) -> u64 {
    let value = reply.headers["cache-control"].to_str().unwrap();
    value
        .strip_prefix("public, max-age=")
        .unwrap_or_else(|| panic!("{value}"))
        .parse()
        .unwrap()
}

fn n(value: &Value) -> u64 {
    value
        .as_u64()
        .unwrap_or_else(|| panic!("not a count: {value}"))
}

/// Whether `reply` created what was asked; if not, it must be a documented refusal.
fn created(reply: &Reply, what: &str) -> bool {
    if reply.status == StatusCode::CREATED {
        return true;
    }
    let refused = [
        "numbers_taken",
        "sold_out",
        "tickets_held",
        "tickets_fragmented",
        "holds_full",
    ];
    assert!(
        reply.status == StatusCode::CONFLICT && refused.contains(&reply.code()),
        "{what}: {} {}",
        reply.status,
        reply.body
    );
    false
}
