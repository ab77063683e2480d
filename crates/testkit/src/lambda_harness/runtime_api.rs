//! A local Lambda runtime API (the `2018-06-01` protocol a bootstrap polls): it hands out
//! one event, then holds every later poll of `next` open, and reports each call with the
//! moment it arrived. A poll is answered only when its caller releases it, so that the
//! cold-start bench can read the process's memory while the bootstrap waits. It also
//! stands in for EventBridge (`POST /`), taking every event the events function publishes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// The request id of the one event.
pub const REQUEST_ID: &str = "8476a536-e9f4-11e8-9739-2dfe598c3fcd";

/// A call of the bootstrap, in the order it arrived.
pub enum RuntimeCall {
    /// A poll for the next event; answered once `release` is sent (with the event the
    /// first time), held open forever if it is dropped.
    Next {
        at: Instant,
        release: oneshot::Sender<()>,
    },
    /// The function's answer to the event.
    Response { at: Instant, body: Bytes },
    /// The function failed on the event.
    Error { body: Bytes },
    /// The function failed before its first poll.
    InitError { body: Bytes },
}

struct Shared {
    event: Bytes,
    function_arn: String,
    calls: mpsc::UnboundedSender<RuntimeCall>,
    polls: std::sync::atomic::AtomicUsize,
}

/// A runtime API listening on a free loopback port until dropped.
pub struct RuntimeApi {
    pub address: SocketAddr,
    pub calls: mpsc::UnboundedReceiver<RuntimeCall>,
    server: JoinHandle<()>,
}

impl Drop for RuntimeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl RuntimeApi {
    /// Serves `event` to the function named by `function_arn`.
    pub async fn start(event: Bytes, function_arn: String) -> Result<Self, String> {
        let (calls, receiver) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            event,
            function_arn,
            calls,
            polls: Default::default(),
        });
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route(
                "/2018-06-01/runtime/invocation/{request_id}/response",
                post(response),
            )
            .route(
                "/2018-06-01/runtime/invocation/{request_id}/error",
                post(error),
            )
            .route("/2018-06-01/runtime/init/error", post(init_error))
            .route("/", post(put_events))
            .with_state(shared);
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("cannot listen on loopback: {e}"))?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            address,
            calls: receiver,
            server,
        })
    }
}

async fn next(State(shared): State<Arc<Shared>>) -> Response {
    let at = Instant::now();
    let (release, released) = oneshot::channel();
    let first = shared
        .polls
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        == 0;
    if shared
        .calls
        .send(RuntimeCall::Next { at, release })
        .is_err()
        || released.await.is_err()
    {
        return std::future::pending().await;
    }
    if !first {
        return std::future::pending().await;
    }
    let deadline = SystemTime::now() + Duration::from_secs(15);
    let deadline_ms = deadline
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let headers = [
        (header::CONTENT_TYPE, "application/json".to_owned()),
        (name("lambda-runtime-aws-request-id"), REQUEST_ID.to_owned()),
        (name("lambda-runtime-deadline-ms"), deadline_ms.to_string()),
        (
            name("lambda-runtime-invoked-function-arn"),
            shared.function_arn.clone(),
        ),
        (
            name("lambda-runtime-trace-id"),
            "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=0".to_owned(),
        ),
    ];
    let mut answer = shared.event.clone().into_response();
    for (name, value) in headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            answer.headers_mut().insert(name, value);
        }
    }
    answer
}

fn name(name: &'static str) -> HeaderName {
    HeaderName::from_static(name)
}

async fn response(
    State(shared): State<Arc<Shared>>,
    Path(_request_id): Path<String>,
    body: Bytes,
) -> StatusCode {
    let at = Instant::now();
    let _ = shared.calls.send(RuntimeCall::Response { at, body });
    StatusCode::ACCEPTED
}

async fn error(
    State(shared): State<Arc<Shared>>,
    Path(_request_id): Path<String>,
    body: Bytes,
) -> StatusCode {
    let _ = shared.calls.send(RuntimeCall::Error { body });
    StatusCode::ACCEPTED
}

async fn init_error(State(shared): State<Arc<Shared>>, body: Bytes) -> StatusCode {
    let _ = shared.calls.send(RuntimeCall::InitError { body });
    StatusCode::ACCEPTED
}

/// EventBridge's `PutEvents`: every entry taken.
async fn put_events(body: Bytes) -> Response {
    let entries = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|request| request["Entries"].as_array().map(Vec::len))
        .unwrap_or(0);
    let taken: Vec<_> = (0..entries)
        .map(|i| serde_json::json!({"EventId": format!("cold-start-{i}")}))
        .collect();
    let answer = serde_json::json!({"FailedEntryCount": 0, "Entries": taken});
    (
        [(header::CONTENT_TYPE, "application/x-amz-json-1.1")],
        answer.to_string(),
    )
        .into_response()
}
