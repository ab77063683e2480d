//! Every ticket route through the real router: successes and each error code.

mod draws;
mod purchases;
mod stripes;

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::{TestApp, assert_problem, attr_n, of_kind, spawn_app, tickets_of};

async fn create_draw(app: &TestApp, id: &str, total: u64, extra: serde_json::Value) {
    let mut body = json!({"draw_id": id, "total_tickets": total});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    app.create_draw(&body).await;
}
