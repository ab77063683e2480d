//! A fault-injecting HTTP proxy between the AWS SDK and DynamoDB Local, started by the tests
//! themselves, so that they can prove the service keeps its invariants when DynamoDB throttles,
//! fails, loses or garbles answers, or stalls.
//!
//! ```
//! # use tally_testkit::fault_proxy::{FaultProxy, Faults};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! # let dynamodb_local_url = "http://127.0.0.1:8000";
//! let proxy = FaultProxy::start(dynamodb_local_url).await;
//! // ... build an SDK client with `endpoint_url(proxy.endpoint())` ...
//! proxy.set(Faults {
//!     error_after: 0.2,
//!     operations: Some(vec!["TransactWriteItems".into()]),
//!     ..Faults::default()
//! });
//! // ... run the service, then `proxy.counts()` shows the faults really happened ...
//! assert_eq!(proxy.counts().lost_after, 0);
//! # }
//! ```
//!
//! It serves connections with hyper itself rather than `axum::serve`: axum detaches its
//! connection tasks and has to answer every request, while this proxy must be able to close a
//! connection without an answer and take every connection down when it is dropped. How
//! it serves a request (forwards it, or answers with the fault it draws) is `serve.rs`.

mod serve;

use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use serve::{Hangup, accept_loop, until_stopped};

/// The longest the proxy keeps a client waiting on purpose (lost answers, frozen endpoint):
/// longer than any sane client timeout, short enough that nothing hangs for good.
const HOLD_LIMIT: Duration = Duration::from_secs(60);

/// Set it to replay the fault sequence of a run (`start` prints the seed it uses).
const SEED_VARIABLE: &str = "FAULT_PROXY_SEED";

/// Faults drawn for each request. Every draw is independent; when several fire, the first in
/// field order wins, so a request suffers at most one of them (plus latency).
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Chance of a `400 ThrottlingException` answered without forwarding.
    pub throttle: f64,
    /// Chance of a `500 InternalServerError` answered without forwarding.
    pub error_before: f64,
    /// Chance of a `400 TransactionConflictException` answered without forwarding, as
    /// DynamoDB refuses a single-item write while a transaction holds its item.
    pub conflict_before: f64,
    /// Chance of forwarding (the write commits) and then answering `500 InternalServerError`.
    pub error_after: f64,
    /// Chance of forwarding (the write commits) and then staying silent until the client gives
    /// up (at most a minute, after which the connection is closed without an answer).
    pub lost_after: f64,
    /// Chance of forwarding a `TransactWriteItems` (it commits) and then answering
    /// `400 TransactionInProgressException`, as DynamoDB does while a transaction with the
    /// same token still runs. Other operations pass clean of it.
    pub in_progress_after: f64,
    /// Chance of forwarding (the write commits) and then answering DynamoDB's success
    /// with the first half of its body, which the client cannot read; an error answer
    /// passes whole.
    pub truncated_after: f64,
    /// Delay drawn uniformly from this range before the proxy acts on a request.
    pub latency: Option<RangeInclusive<Duration>>,
    /// Operations the faults apply to (`PutItem`, `TransactWriteItems`, ...); the others pass
    /// clean. `None` applies them to every operation.
    pub operations: Option<Vec<String>>,
    /// The most faults injected from this `set` on; then every request passes clean.
    /// `None` sets no limit.
    pub at_most: Option<u64>,
}

/// How often each fault was injected, and how many requests DynamoDB Local answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests forwarded and answered upstream, whatever their client then got.
    pub forwarded: u64,
    pub throttled: u64,
    pub errors_before: u64,
    pub conflicts: u64,
    pub errors_after: u64,
    pub lost_after: u64,
    pub in_progress_after: u64,
    pub truncated_after: u64,
    /// Requests given a non-zero delay.
    pub delayed: u64,
    /// Requests that arrived while the proxy was frozen.
    pub held: u64,
}

/// A request that DynamoDB Local answered and whose answer the client never got (a 500
/// or silence after forwarding, or a client that had given up and hung up before the
/// answer came): what a write it made was for, for tests that account for every number.
#[derive(Clone, Debug)]
pub struct Undelivered {
    pub operation: String,
    pub request: serde_json::Value,
    pub answer: serde_json::Value,
}

/// A request the proxy saw while recording: its operation (`TransactWriteItems`, ...) and
/// its JSON body.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub operation: String,
    pub body: serde_json::Value,
}

/// A proxy on a loopback port; it stops, dropping every connection, when dropped.
pub struct FaultProxy {
    shared: Arc<Shared>,
    address: SocketAddr,
    accept: JoinHandle<()>,
    /// Never sent on: dropping it ends every task that watches it.
    _stop: watch::Sender<()>,
}

impl FaultProxy {
    /// Starts a clean proxy in front of `upstream` (e.g. `http://127.0.0.1:8000`), seeded
    /// from `FAULT_PROXY_SEED` when set, at random otherwise.
    pub async fn start(upstream: &str) -> Self {
        let seed = match std::env::var(SEED_VARIABLE) {
            Ok(value) => value
                .parse()
                .unwrap_or_else(|_| panic!("{SEED_VARIABLE} must be a u64, got {value:?}")),
            Err(_) => rand::rng().random(),
        };
        // The test harness shows this only for failing tests: enough to replay them.
        eprintln!("fault proxy seed: {seed} (replay with {SEED_VARIABLE}={seed})");
        Self::start_seeded(upstream, seed).await
    }

    /// Starts a clean proxy whose fault draws follow `seed`.
    pub async fn start_seeded(upstream: &str, seed: u64) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fault proxy to a loopback port");
        let address = listener.local_addr().expect("the proxy's address");
        let (stop, stopped) = watch::channel(());
        let shared = Arc::new(Shared {
            upstream: upstream.trim_end_matches('/').to_owned(),
            client: Client::builder(TokioExecutor::new()).build_http(),
            plan: Mutex::new(Plan {
                faults: Faults::default(),
                rng: StdRng::seed_from_u64(seed),
                injected: 0,
            }),
            freeze: Mutex::new(Freeze::default()),
            counters: Counters::default(),
            undelivered: Mutex::new(Vec::new()),
            in_flight: AtomicU64::new(0),
            recording: Mutex::new(None),
            stopped,
        });
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Self {
            shared,
            address,
            accept,
            _stop: stop,
        }
    }

    /// The URL to give the SDK as its endpoint.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Where the proxy listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Replaces the faults applied to the requests that arrive from now on.
    pub fn set(&self, faults: Faults) {
        for (name, p) in [
            ("throttle", faults.throttle),
            ("error_before", faults.error_before),
            ("conflict_before", faults.conflict_before),
            ("error_after", faults.error_after),
            ("lost_after", faults.lost_after),
            ("in_progress_after", faults.in_progress_after),
            ("truncated_after", faults.truncated_after),
        ] {
            assert!((0.0..=1.0).contains(&p), "{name} is not a probability: {p}");
        }
        if let Some(latency) = &faults.latency {
            assert!(!latency.is_empty(), "empty latency range {latency:?}");
        }
        let mut plan = self.shared.plan.lock().unwrap();
        plan.faults = faults;
        plan.injected = 0;
    }

    /// From now on the proxy acts like a stopped process: it reads requests but neither
    /// forwards nor answers them.
    pub fn freeze(&self) {
        self.shared.freeze.lock().unwrap().frozen = true;
    }

    /// Forwards the held requests one by one in arrival order, free of faults, their answers
    /// going to the clients still waiting; then lets requests through again. When it returns,
    /// every held request has been answered by DynamoDB Local.
    pub async fn thaw(&self) {
        let shared = Arc::clone(&self.shared);
        let drain = async move {
            loop {
                let held = {
                    let mut freeze = shared.freeze.lock().unwrap();
                    if freeze.held.is_empty() {
                        freeze.frozen = false;
                        return;
                    }
                    std::mem::take(&mut freeze.held)
                };
                for held in held {
                    // The client may have given up; the request is processed all the same,
                    // and its answer recorded as undelivered.
                    let answer = shared.forward(held.request).await;
                    if let Err(Ok(answer)) = held.reply.send(answer) {
                        shared
                            .record_undelivered(held.operation, &held.sent, answer)
                            .await;
                    }
                }
            }
        };
        // Spawned so that the held requests land even if the caller stops waiting.
        let task = tokio::spawn(until_stopped(self.shared.stopped.clone(), drain));
        task.await.expect("the thaw task does not panic");
    }

    /// Every answer the clients did not get, in the order DynamoDB Local gave them, once the
    /// requests still forwarded have their answers (for at most `HOLD_LIMIT`).
    pub async fn undelivered(&self) -> Vec<Undelivered> {
        let waited = tokio::time::timeout(HOLD_LIMIT, async {
            while self.shared.in_flight.load(Ordering::SeqCst) > 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        let _ = waited.await;
        self.shared.undelivered.lock().unwrap().clone()
    }

    pub fn record(&self) {
        *self.shared.recording.lock().unwrap() = Some(Vec::new());
    }

    /// The requests recorded since [`Self::record`], in arrival order; recording stops.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.shared
            .recording
            .lock()
            .unwrap()
            .take()
            .unwrap_or_default()
    }

    pub fn counts(&self) -> Counts {
        let c = &self.shared.counters;
        let read = |counter: &AtomicU64| counter.load(Ordering::SeqCst);
        Counts {
            forwarded: read(&c.forwarded),
            throttled: read(&c.throttled),
            errors_before: read(&c.errors_before),
            conflicts: read(&c.conflicts),
            errors_after: read(&c.errors_after),
            lost_after: read(&c.lost_after),
            in_progress_after: read(&c.in_progress_after),
            truncated_after: read(&c.truncated_after),
            delayed: read(&c.delayed),
            held: read(&c.held),
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        // Closes the port at once; the connection and forwarding tasks end when `_stop` drops.
        self.accept.abort();
    }
}

struct Shared {
    /// Scheme and authority of DynamoDB Local, without a trailing slash.
    upstream: String,
    client: Client<HttpConnector, Full<Bytes>>,
    plan: Mutex<Plan>,
    freeze: Mutex<Freeze>,
    counters: Counters,
    undelivered: Mutex<Vec<Undelivered>>,
    /// Requests forwarded in tasks of their own whose answers have not come yet.
    in_flight: AtomicU64,
    /// The requests seen, while recording.
    recording: Mutex<Option<Vec<Recorded>>>,
    stopped: watch::Receiver<()>,
}

struct Plan {
    faults: Faults,
    rng: StdRng,
    /// Faults injected since the last `set`.
    injected: u64,
}

#[derive(Default)]
struct Freeze {
    frozen: bool,
    held: Vec<Held>,
}

type Answer = Result<Response<Full<Bytes>>, Hangup>;

struct Held {
    operation: String,
    sent: Bytes,
    request: Request<Full<Bytes>>,
    reply: oneshot::Sender<Answer>,
}

#[derive(Default)]
struct Counters {
    forwarded: AtomicU64,
    throttled: AtomicU64,
    errors_before: AtomicU64,
    conflicts: AtomicU64,
    errors_after: AtomicU64,
    lost_after: AtomicU64,
    in_progress_after: AtomicU64,
    truncated_after: AtomicU64,
    delayed: AtomicU64,
    held: AtomicU64,
}
