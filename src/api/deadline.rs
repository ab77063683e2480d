//! How long a request may take. Two clocks start when API Gateway received the request
//! (its `timeEpoch`; when the router has the request's head, without one): the body must
//! have arrived within the body read timeout, and the answer must be ready within the
//! request timeout. Counted from API Gateway's clock, a cold start's initialisation
//! (reading the deployment secret, say) is inside the timeout, which so stays within the
//! 30 s API Gateway waits. A handler reads its whole body before it does anything, so
//! a request cut off while its body is still being read changed nothing: `408`, and the
//! connection is closed. Cut off later, its outcome is unknown: `503 outcome_unknown`.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use lambda_http::request::RequestContext;
use tokio::time::Instant;
use tracing::warn;

use super::problem::{Code, Problem};
use super::{AppState, routes};

/// Answers `408` when the body is still arriving at the body read timeout (or at the
/// request timeout, if that is shorter), `503 outcome_unknown` when a request outlives
/// the request timeout (the drawing timeout for the routes that compute an eligible
/// list). The request's work stops there; whatever it committed stays, and repeating it
/// is safe.
pub(super) async fn deadline(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let drawing = request
        .extensions()
        .get::<MatchedPath>()
        .is_some_and(|path| routes::is_drawing(request.method(), path.as_str()));
    let timeout = if drawing {
        state.drawing_timeout
    } else {
        state.request_timeout
    };
    let started = received_at(&request).unwrap_or_else(Instant::now);
    let (request, body) = BodyProgress::track(request);
    let mut work = std::pin::pin!(next.run(request));
    let body_timeout = state.body_timeout.min(timeout);
    if let Ok(response) = tokio::time::timeout_at(started + body_timeout, &mut work).await {
        return response;
    }
    if body.is_arriving() {
        warn!(
            timeout_ms = body_timeout.as_millis() as u64,
            "request body timed out"
        );
        let mut response = Problem::new(Code::BodyTimeout, format!(
                "the request body did not arrive within {} ms, so nothing was done; send the request again",
                body_timeout.as_millis()
            ),
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    match tokio::time::timeout_at(started + timeout, &mut work).await {
        Ok(response) => response,
        Err(_) => {
            warn!(timeout_ms = timeout.as_millis() as u64, "request timed out");
            Problem::outcome_unknown(
                "the request did not finish in time, so whether it took effect is unknown; repeat it as it was, which is always safe",
            )
            .into_response()
        }
    }
}

/// How long API Gateway's HTTP API waits for an integration's answer: a request received
/// longer ago is a stored event (a test's, `sam local invoke`'s), whose clocks start now.
pub const GATEWAY_WAIT: Duration = Duration::from_secs(30);

/// When API Gateway received the request, as an instant of this process: `None` without
/// a gateway's context, or for a moment ahead of this process's clock or more than
/// [`GATEWAY_WAIT`] ago.
fn received_at(request: &Request) -> Option<Instant> {
    let RequestContext::ApiGatewayV2(context) = request.extensions().get::<RequestContext>()?
    else {
        return None;
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
    let received = Duration::from_millis(u64::try_from(context.time_epoch).ok()?);
    let ago = now
        .checked_sub(received)
        .filter(|ago| *ago <= GATEWAY_WAIT)?;
    Instant::now().checked_sub(ago)
}

/// A body is unread (0) until a handler polls it, then arriving until it is whole.
const ARRIVING: u8 = 1;
const RECEIVED: u8 = 2;

/// Whether a request's body was read: not yet, still arriving, or whole.
#[derive(Clone, Default)]
struct BodyProgress(Arc<AtomicU8>);

impl BodyProgress {
    /// The request with its body watched, and the progress to look at.
    fn track(request: Request) -> (Request, Self) {
        let progress = Self::default();
        let request = request.map(|inner| {
            Body::new(WatchedBody {
                inner,
                progress: progress.clone(),
            })
        });
        (request, progress)
    }

    /// A handler is waiting for more of the body. A body never read (a route that takes
    /// none) is not arriving: its handler is at work.
    fn is_arriving(&self) -> bool {
        self.0.load(Ordering::Relaxed) == ARRIVING
    }
}

/// A body that records how far it was read.
struct WatchedBody {
    inner: Body,
    progress: BodyProgress,
}

impl http_body::Body for WatchedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        let whole = matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_))))
            || self.inner.is_end_stream();
        let state = if whole { RECEIVED } else { ARRIVING };
        self.progress.0.store(state, Ordering::Relaxed);
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
