//! V1, P1 and D1 one request at a time: voids, per-payer caps, schedules, and the lists
//! (a payer's purchases, the draws); voids against the freeze.

mod caps;
mod lists;
mod schedule;
mod voids;

use std::time::Duration;

use axum::http::StatusCode;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use tally_domain::time::rfc3339_millis;

use crate::helpers::{TestApp, spawn_app, tickets_of};

async fn create(app: &TestApp, body: Value) -> Value {
    let created = app.create_draw(&body).await;
    created.body
}

fn buy(payment: &str, quantity: u64, payer: &str) -> Value {
    json!({"payment_id": payment, "quantity": quantity, "payer_id": payer})
}

fn at(offset: SignedDuration) -> String {
    rfc3339_millis(Timestamp::now() + offset)
}
