//! Serving a connection: each request is forwarded to DynamoDB Local, held while the
//! proxy is frozen, or answered with the fault drawn for it.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rand::RngExt;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};

use super::{Answer, HOLD_LIMIT, Held, Plan, Recorded, Shared, Undelivered};

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::SeqCst);
}

enum Fault {
    Throttle,
    ErrorBefore,
    ConflictBefore,
    ErrorAfter,
    LostAfter,
    InProgressAfter,
    TruncatedAfter,
}

/// Makes hyper close the connection without an answer.
#[derive(Debug)]
pub(super) struct Hangup(String);

impl std::fmt::Display for Hangup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "fault proxy hung up: {}", self.0)
    }
}

impl std::error::Error for Hangup {}

pub(super) async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors or the like: wait rather than spin.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        // Small request and answer pairs: Nagle's algorithm would only add delay.
        let _ = stream.set_nodelay(true);
        let service_state = Arc::clone(&shared);
        let service = service_fn(move |request| Arc::clone(&service_state).handle(request));
        let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
        tokio::spawn(until_stopped(shared.stopped.clone(), connection));
    }
}

/// Runs `work` until it ends or the proxy is dropped.
pub(super) async fn until_stopped<F: Future>(
    mut stopped: watch::Receiver<()>,
    work: F,
) -> Option<F::Output> {
    tokio::select! {
        output = work => Some(output),
        // Nothing is ever sent: this only returns once the sender is dropped.
        _ = stopped.changed() => None,
    }
}

impl Shared {
    async fn handle(self: Arc<Self>, request: Request<Incoming>) -> Answer {
        let (parts, body) = request.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| Hangup(format!("reading the request: {e}")))?
            .to_bytes();
        let operation = parts
            .headers
            .get("x-amz-target")
            .and_then(|v| v.to_str().ok())
            .and_then(|target| target.rsplit_once('.'))
            .map(|(_, operation)| operation.to_owned())
            .unwrap_or_default();
        if let Some(recording) = self.recording.lock().unwrap().as_mut() {
            recording.push(Recorded {
                operation: operation.clone(),
                body: serde_json::from_slice(&body).unwrap_or_default(),
            });
        }
        let target = format!(
            "{}{}",
            self.upstream,
            parts.uri.path_and_query().map_or("/", |p| p.as_str())
        );
        let sent = body.clone();
        let mut upstream = Request::builder()
            .method(parts.method)
            .uri(target)
            .body(Full::new(body))
            .map_err(|e| Hangup(format!("building the upstream request: {e}")))?;
        // The Host header stays the proxy's: it is part of what the SDK signed.
        *upstream.headers_mut() = end_to_end(parts.headers);

        let upstream = match self.hold_if_frozen(&operation, &sent, upstream) {
            Ok(reply) => {
                return match tokio::time::timeout(HOLD_LIMIT, reply).await {
                    Ok(Ok(answer)) => answer,
                    _ => Err(Hangup("held too long".into())),
                };
            }
            Err(request) => *request,
        };

        let (fault, delay) = self.draw(&operation);
        if let Some(delay) = delay.filter(|d| !d.is_zero()) {
            bump(&self.counters.delayed);
            tokio::time::sleep(delay).await;
        }
        match fault {
            None => self.forward_detached(&operation, &sent, upstream).await,
            Some(Fault::Throttle) => {
                bump(&self.counters.throttled);
                Ok(dynamodb_error(
                    StatusCode::BAD_REQUEST,
                    "ThrottlingException",
                    "Rate of requests exceeds the allowed throughput.",
                ))
            }
            Some(Fault::ErrorBefore) => {
                bump(&self.counters.errors_before);
                Ok(internal_server_error())
            }
            Some(Fault::ConflictBefore) => {
                bump(&self.counters.conflicts);
                Ok(dynamodb_error(
                    StatusCode::BAD_REQUEST,
                    "TransactionConflictException",
                    "Transaction is ongoing for the item",
                ))
            }
            Some(Fault::ErrorAfter) => {
                bump(&self.counters.errors_after);
                let answer = self.forward_detached(&operation, &sent, upstream).await?;
                self.record_undelivered(operation, &sent, answer).await;
                Ok(internal_server_error())
            }
            Some(Fault::LostAfter) => {
                bump(&self.counters.lost_after);
                let answer = self.forward_detached(&operation, &sent, upstream).await?;
                self.record_undelivered(operation, &sent, answer).await;
                // hyper drops this future as soon as the client closes the connection.
                tokio::time::sleep(HOLD_LIMIT).await;
                Err(Hangup("answer lost on purpose".into()))
            }
            Some(Fault::InProgressAfter) => {
                bump(&self.counters.in_progress_after);
                let answer = self.forward_detached(&operation, &sent, upstream).await?;
                self.record_undelivered(operation, &sent, answer).await;
                Ok(dynamodb_error(
                    StatusCode::BAD_REQUEST,
                    "TransactionInProgressException",
                    "Transaction is ongoing for the given ClientRequestToken.",
                ))
            }
            Some(Fault::TruncatedAfter) => {
                let answer = self.forward_detached(&operation, &sent, upstream).await?;
                if !answer.status().is_success() {
                    return Ok(answer);
                }
                bump(&self.counters.truncated_after);
                let (mut parts, body) = answer.into_parts();
                let body = body
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                self.note_undelivered(operation, &sent, &body);
                // Its own length, so that the body arrives whole: only its reader fails.
                parts.headers.remove(header::CONTENT_LENGTH);
                parts.headers.remove("x-amz-crc32");
                let half = body.slice(..body.len() / 2);
                Ok(Response::from_parts(parts, Full::new(half)))
            }
        }
    }

    pub(super) async fn record_undelivered(
        &self,
        operation: String,
        request: &Bytes,
        answer: Response<Full<Bytes>>,
    ) {
        let answer = answer
            .into_body()
            .collect()
            .await
            .map(|body| body.to_bytes())
            .unwrap_or_default();
        self.note_undelivered(operation, request, &answer);
    }

    fn note_undelivered(&self, operation: String, request: &Bytes, answer: &Bytes) {
        let json = |bytes: &[u8]| serde_json::from_slice(bytes).unwrap_or_default();
        self.undelivered.lock().unwrap().push(Undelivered {
            operation,
            request: json(request),
            answer: json(answer),
        });
    }

    /// Queues the request while frozen (the receiver gets its answer on thaw); gives it back
    /// otherwise. Checking and queueing under one lock keeps `thaw` from missing a request.
    fn hold_if_frozen(
        &self,
        operation: &str,
        sent: &Bytes,
        request: Request<Full<Bytes>>,
    ) -> Result<oneshot::Receiver<Answer>, Box<Request<Full<Bytes>>>> {
        let mut freeze = self.freeze.lock().unwrap();
        if !freeze.frozen {
            return Err(Box::new(request));
        }
        bump(&self.counters.held);
        let (reply, answer) = oneshot::channel();
        freeze.held.push(Held {
            operation: operation.to_owned(),
            sent: sent.clone(),
            request,
            reply,
        });
        Ok(answer)
    }

    fn draw(&self, operation: &str) -> (Option<Fault>, Option<Duration>) {
        let mut plan = self.plan.lock().unwrap();
        let Plan {
            faults,
            rng,
            injected,
        } = &mut *plan;
        if let Some(operations) = &faults.operations
            && !operations.iter().any(|o| o == operation)
        {
            return (None, None);
        }
        // Every draw is made whatever fires, so a seed replays the same sequence.
        let throttle = rng.random_bool(faults.throttle);
        let error_before = rng.random_bool(faults.error_before);
        let error_after = rng.random_bool(faults.error_after);
        let lost_after = rng.random_bool(faults.lost_after);
        let in_progress_after = rng.random_bool(faults.in_progress_after);
        let conflict_before = rng.random_bool(faults.conflict_before);
        let truncated_after = rng.random_bool(faults.truncated_after);
        let delay = faults.latency.clone().map(|range| rng.random_range(range));
        if faults.at_most.is_some_and(|most| *injected >= most) {
            return (None, delay);
        }
        let fault = [
            (throttle, Fault::Throttle),
            (error_before, Fault::ErrorBefore),
            (conflict_before, Fault::ConflictBefore),
            (error_after, Fault::ErrorAfter),
            (lost_after, Fault::LostAfter),
            (
                in_progress_after && operation == "TransactWriteItems",
                Fault::InProgressAfter,
            ),
            (truncated_after, Fault::TruncatedAfter),
        ]
        .into_iter()
        .find_map(|(fired, fault)| fired.then_some(fault));
        *injected += u64::from(fault.is_some());
        (fault, delay)
    }

    /// Forwards in a task of its own, so that the request reaches DynamoDB Local even when its
    /// client stops waiting, as it would over a real network.
    /// Forwards `request` in a task of its own, so that it lands even if the client gives
    /// up; an answer that nobody waits for any more (hyper dropped the handler when the
    /// client hung up, after its own timeout say) is recorded as undelivered.
    async fn forward_detached(
        self: &Arc<Self>,
        operation: &str,
        sent: &Bytes,
        request: Request<Full<Bytes>>,
    ) -> Answer {
        let (reply, answer) = oneshot::channel();
        let shared = Arc::clone(self);
        let (operation, sent) = (operation.to_owned(), sent.clone());
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        let work = async move {
            let answer = shared.forward(request).await;
            if let Err(Ok(answer)) = reply.send(answer) {
                shared.record_undelivered(operation, &sent, answer).await;
            }
            shared.in_flight.fetch_sub(1, Ordering::SeqCst);
        };
        tokio::spawn(until_stopped(self.stopped.clone(), work));
        answer
            .await
            .unwrap_or_else(|_| Err(Hangup("the proxy stopped".into())))
    }

    pub(super) async fn forward(&self, request: Request<Full<Bytes>>) -> Answer {
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| Hangup(format!("forwarding: {e}")))?;
            let (mut parts, body) = response.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|e| Hangup(format!("reading the upstream answer: {e}")))?
                .to_bytes();
            parts.headers = end_to_end(parts.headers);
            Ok(Response::from_parts(parts, Full::new(body)))
        };
        let answer = tokio::time::timeout(HOLD_LIMIT, exchange)
            .await
            .unwrap_or_else(|_| Err(Hangup("DynamoDB Local did not answer".into())));
        if answer.is_ok() {
            bump(&self.counters.forwarded);
        }
        answer
    }
}

/// The headers without the hop-by-hop ones, which describe one connection and must not be
/// passed on to the next.
fn end_to_end(mut headers: HeaderMap) -> HeaderMap {
    for name in [
        header::CONNECTION,
        header::TRANSFER_ENCODING,
        header::TE,
        header::TRAILER,
        header::UPGRADE,
        header::PROXY_AUTHORIZATION,
        header::PROXY_AUTHENTICATE,
    ] {
        headers.remove(name);
    }
    headers.remove("keep-alive");
    headers.remove("proxy-connection");
    headers
}

fn internal_server_error() -> Response<Full<Bytes>> {
    dynamodb_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "InternalServerError",
        "Internal server error",
    )
}

/// An error answer shaped as DynamoDB's own.
fn dynamodb_error(status: StatusCode, name: &str, message: &str) -> Response<Full<Bytes>> {
    let body = serde_json::json!({
        "__type": format!("com.amazonaws.dynamodb.v20120810#{name}"),
        "message": message,
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-amz-json-1.0"),
    );
    headers.insert(
        "x-amzn-requestid",
        HeaderValue::from_str(&request_id()).expect("an alphanumeric request id"),
    );
    response
}

/// 52 upper-case letters and digits, like DynamoDB's request ids. Drawn from the thread's
/// generator, not the seeded one, so that they do not shift the fault sequence.
fn request_id() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    (0..52)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}
