//! Series and order routes, and the numbering rules, through the real router.

mod posts;
mod series;

use std::sync::Arc;
use tally_domain::access::SourceAccess;
use tally_domain::journal::Operator;

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::{Value, json};
use tally::orders::{ItemOutcome, OrderService};
use tally_domain::ids::{SeriesId, SourceId};
use tally_domain::series::{Reset, SeriesDefinition};

use crate::helpers::{Reply, TestApp, assert_problem, fresh_store, order_input, spawn_app};

async fn put_series(app: &TestApp, id: &str, body: Value) -> Reply {
    app.put(&format!("/series/{id}"), &body).await
}

fn number(outcome: &ItemOutcome) -> String {
    match outcome {
        ItemOutcome::Created(o) | ItemOutcome::Existing(o) => o.order_number.clone(),
        ItemOutcome::Rejected(r) => panic!("rejected: {r:?}"),
    }
}
