//! The browser verifier's WebAssembly: the check of a published draw from the domain
//! crate, the very function `tally verify-draw` calls, so the page and the command cannot
//! disagree.
//!
//! The page calls `check` with the answers' texts (`GET /draws/{id}/winners`, `/eligible`,
//! the draw's answer kept from the close or null, the networks it trusts besides
//! quicknet or null) and reads back the report as JSON:
//! `{"passed", "steps": [{"id", "title", "outcome", "detail"}]}`.

use tally_domain::winners::{BeaconNetworks, check_answers};
use wasm_bindgen::prelude::wasm_bindgen;

/// Checks the draw; returns the report as JSON text.
#[wasm_bindgen]
pub fn check(
    winners: &str,
    eligible: &str,
    draw: Option<String>,
    networks: Option<String>,
) -> String {
    let report = match BeaconNetworks::with_json(networks.as_deref()) {
        Ok(trusted) => {
            let report = check_answers(winners, eligible, draw.as_deref(), &trusted);
            serde_json::json!({"passed": report.passed(), "steps": report.steps})
        }
        Err(e) => serde_json::json!({"passed": false, "steps": [{"id": "network",
            "title": "The networks you trust are well formed", "outcome": "fail",
            "detail": e.to_string()}]}),
    };
    report.to_string()
}
