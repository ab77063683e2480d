//! The operator's command line: `tally export-draw` writes every purchase of a draw as CSV,
//! each void on its side of the freeze, `tally verify-draw --api` checks a drawn draw
//! through a running API.

mod commands;
mod exports;

use std::path::Path;
use std::process::{Command, Output};

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::{TestApp, endpoint, router, spawn_app};
use tally_testkit::fault_proxy::{FaultProxy, Faults};
