//! An API whose ticket service reads a clock the test moves, on a table of its own, with
//! more instances on the same table and a clock that runs by itself: what the tests of
//! holds share.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use jiff::Timestamp;
use serde_json::Value;
use tally::api::{self, AppState};
use tally::store::Store;
use tally::tickets::TicketService;
use tally_domain::time::Epoch;
use tally_testkit::fault_proxy::FaultProxy;

use crate::helpers::{Reply, TestApp, TestTable, fresh_store, send, store_on, test_app};

/// The API on `store`, its ticket service reading `clock` (Unix ms).
pub fn clocked_router(store: Store, clock: &Arc<AtomicI64>) -> axum::Router {
    let read = clock.clone();
    let tickets = TicketService::new(store.clone()).with_clock(Arc::new(move || {
        tally_domain::time::from_epoch_millis(read.load(Ordering::SeqCst)).unwrap()
    }));
    api::router(AppState {
        tickets: Arc::new(tickets),
        request_timeout: Duration::from_secs(120),
        drawing_timeout: Duration::from_secs(120),
        ..AppState::new(store)
    })
}

/// The clock of a [`HoldApp`] moving on by a second every `every`, until stopped.
pub struct Ticker {
    running: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Ticker {
    pub fn start(app: Arc<HoldApp>, every: Duration) -> Self {
        let running = Arc::new(AtomicBool::new(true));
        let still = running.clone();
        let task = tokio::spawn(async move {
            while still.load(Ordering::SeqCst) {
                app.advance(1);
                tokio::time::sleep(every).await;
            }
        });
        Self { running, task }
    }

    pub async fn stop(self) {
        self.running.store(false, Ordering::SeqCst);
        self.task.await.unwrap();
    }
}

/// An API whose ticket service reads a clock the test moves.
pub struct HoldApp {
    pub app: TestApp,
    clock: Arc<AtomicI64>,
}

impl HoldApp {
    pub async fn spawn() -> Self {
        let (store, table) = fresh_store(None).await;
        let clock = Arc::new(AtomicI64::new(Timestamp::now().epoch_millis()));
        Self {
            app: test_app(clocked_router(store.clone(), &clock), store, table),
            clock,
        }
    }

    /// As [`Self::spawn`], on a table with the stream of `template.yaml`.
    pub async fn spawn_with_stream() -> Self {
        let table = TestTable::reserve();
        let store = store_on(table.name(), None).await;
        store.ensure_table().await.expect("create the test table");
        let clock = Arc::new(AtomicI64::new(Timestamp::now().epoch_millis()));
        Self {
            app: test_app(clocked_router(store.clone(), &clock), store, table),
            clock,
        }
    }

    /// Another instance (its own caches) on the same table, reading the same clock.
    pub async fn instance(&self) -> axum::Router {
        let store = store_on(self.app.store.table(), None).await;
        clocked_router(store, &self.clock)
    }

    /// Another instance whose DynamoDB calls go through `proxy`, reading the same clock.
    pub async fn instance_through(&self, proxy: &FaultProxy) -> axum::Router {
        let store = crate::faults::faulty_store(proxy, self.app.store.table()).await;
        clocked_router(store, &self.clock)
    }

    /// This instance's router and `more` other instances on the same table.
    pub async fn routers(&self, more: usize) -> Vec<axum::Router> {
        let mut routers = vec![self.app.router.clone()];
        for _ in 0..more {
            routers.push(self.instance().await);
        }
        routers
    }

    /// Moves the service's clock on by `seconds`.
    pub fn advance(&self, seconds: i64) {
        self.clock.fetch_add(seconds * 1_000, Ordering::SeqCst);
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.app.post(path, &body).await
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.app.get(path).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        let request = Request::builder()
            .method(Method::DELETE)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::empty())
            .unwrap();
        send(&self.app.router, request).await
    }

    pub async fn draw(&self, body: Value) {
        let created = self.post("/draws", body).await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    }
}
