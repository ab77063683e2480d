//! W5: draws no insider can steer. The eligible list is frozen at the close and shown from
//! then on; a void after it is recorded and changes nothing; the beacon round is fixed by
//! Tally after the freeze and its value is a verified drand signature; a redraw is asked
//! for with its reason and picked with a round fixed then; once a ticket is sold or held
//! the beacon is never withdrawn or switched. The tests run a drand network
//! whose keys they hold (tests/fixtures/beacon.json, made with py_ecc) and set the
//! service's clock, so that a round is "published" when they say.

mod close;
mod proof;
mod skew;
mod withdrawal;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tally::api::{self, AppState};
use tally::tickets::TicketService;
use tally_domain::hex;
use tally_domain::ids::DrawId;
use tally_domain::winners::{BeaconNetworks, DrawInputs, EligibleSet, Picks};

use tally_testkit::beacon::{GENESIS, fixture, networks_json, published_ms, signature};

use crate::helpers::{TestApp, fresh_store, test_app};
use tally_testkit::verifiers::{Verdicts, verifiers_accept};

/// An API whose ticket service trusts the test network and reads a clock the test sets.
pub struct BeaconApp {
    pub app: TestApp,
    state: AppState,
    clock: Arc<AtomicI64>,
}

impl BeaconApp {
    pub async fn spawn() -> Self {
        let (store, table) = fresh_store(None).await;
        let clock = Arc::new(AtomicI64::new(GENESIS * 1_000));
        let read = clock.clone();
        let networks = BeaconNetworks::with_json(Some(&networks_json())).unwrap();
        let tickets = TicketService::new(store.clone())
            .with_networks(networks)
            .with_clock(Arc::new(move || {
                tally_domain::time::from_epoch_millis(read.load(Ordering::SeqCst)).unwrap()
            }));
        let state = AppState {
            tickets: Arc::new(tickets),
            request_timeout: Duration::from_secs(120),
            drawing_timeout: Duration::from_secs(120),
            ..AppState::new(store.clone())
        };
        Self {
            app: test_app(api::router(state.clone()), store, table),
            state,
            clock,
        }
    }

    /// Sets the service's clock to Unix milliseconds `at`.
    pub fn set_clock(&self, at: i64) {
        self.clock.store(at, Ordering::SeqCst);
    }

    /// A closed draw of `id` on the test network, with 10 instant prizes: 10 payments of
    /// 4 tickets from 5 payers, the second voided before the close, which fixes `prizes`.
    /// Returns the close's answer.
    pub async fn closed_draw(&self, id: &str, prizes: u32) -> Value {
        let app = &self.app;
        let created = app
            .post(
                "/draws",
                &json!({"draw_id": id, "total_tickets": 100, "beacon": {"network": "test"},
                        "instant_wins": [{"prize": "voucher", "count": 10}]}),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        for i in 0..10 {
            let body = json!({"payment_id": format!("p{i}"), "quantity": 4,
                              "payer_id": format!("someone{}@example.com", i % 5)});
            let bought = app.post(&format!("/draws/{id}/purchases"), &body).await;
            assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
        }
        let void = app
            .post(
                &format!("/draws/{id}/purchases/p1/void"),
                &json!({"reason": "refund"}),
            )
            .await;
        assert_eq!(void.status, StatusCode::OK);
        let closed = app
            .post(&format!("/draws/{id}/close"), &json!({"prizes": prizes}))
            .await;
        assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
        assert_eq!(closed.body["prizes"], prizes);
        closed.body
    }
}

/// The tickets of a bitmap answer.
fn listed(eligible: &Value) -> EligibleSet {
    let bitmap = STANDARD
        .decode(eligible["bitmap"].as_str().unwrap())
        .unwrap();
    EligibleSet::from_bitmap(eligible["total_tickets"].as_u64().unwrap(), &bitmap).unwrap()
}
