//! O6: single posts, one order per request, from several processes at once (each its own
//! client and service, as warm Lambda instances are). A fast series numbers from blocks
//! each process reserved, at about one request per order; a gapless series moves its
//! counter from the value each process knows, and its processes take turns when they
//! meet. The table is read back: no number twice, no gap in a gapless series, and in a
//! fast series gaps only where the processes still hold spare numbers.

mod cost;
mod races;

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
