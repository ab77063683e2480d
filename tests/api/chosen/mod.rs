//! N1: numbers buyers choose: all or nothing, once, never sold twice, skipped by the lucky
//! dip without a cancelled transaction per number, counted by the draw and eligible.

mod dips;
mod sales;

use std::collections::{BTreeMap, BTreeSet};

use axum::http::StatusCode;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use tally::store::RequestCounter;
use tally::tickets::{NewDraw, TicketError, TicketService};
use tally_domain::draw::DrawConfig;
use tally_domain::ids::{DrawId, PaymentId};
use tally_domain::purchase::PurchaseRequest;

use crate::faults::{every_fault, twin_payments};
use crate::helpers::{
    TestApp, endpoint, fresh_store, get, settle, spawn_app, store_on, tickets_of,
};
use crate::invariants::sold_tickets;
use crate::winners::bitmap_tickets;
use tally_testkit::fault_proxy::FaultProxy;
use tally_testkit::verifiers::{Verdicts, verifiers_accept};

async fn create(app: &TestApp, body: Value) {
    app.create_draw(&body).await;
}

/// One answer: status, problem code, and the tickets of a success.
type Answer = (StatusCode, String, Option<Vec<u64>>);
