//! Holds: numbers kept for one buyer while they pay, decided by each hold's deadline
//! against the writer's clock. A hold converts once, only while it lives; released and
//! expired numbers go back on sale; live holds count toward the payer's cap (H1–H4).

mod lifecycle;
mod sales;

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::tickets_of;
use crate::hold_app::HoldApp;
