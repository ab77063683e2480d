//! The HTTP server of `tally serve`: the same router as on Lambda, on a loopback socket.
//!
//! Behind API Gateway the gateway reads requests; locally this server does, so it bounds
//! what a slow or careless client can hold: the request head must arrive within the
//! header read timeout, or the connection is closed; the body within the body read
//! timeout (`408`, see `deadline.rs`); a body announced larger than the route takes is
//! refused with `413` before it is read, and gets no `100 Continue`.
//!
//! It answers only requests addressed to it on a loopback name, and from a browser only
//! its own pages (`loopback.rs`).
//!
//! Told to stop, it takes no more connections and gives the open ones
//! [`SHUTDOWN_DEADLINE`] to finish; then it drops them, so that a client that stops
//! reading, or sends its head slowly, cannot keep the process alive.
//!
//! A few requests never reach the router, and get hyper's own answer with an empty body,
//! as API Gateway answers such requests with its own: a URL of 64 KiB or more a bare
//! `414`, headers that do not fit its buffer a bare `431`, a request that is not HTTP/1.1
//! a bare `400`.

use std::io;
use std::time::Duration;

use axum::Router;
use axum::middleware;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tracing::warn;

use super::loopback::{LoopbackOnly, only_loopback};

pub use super::loopback::is_loopback_host;

/// How long a client may take to send a request's head (its line and headers) by default;
/// an idle kept-alive connection is closed after as long.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the open connections have to finish once the server is told to stop.
pub const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `shutdown` completes, then lets the open connections
/// finish within [`SHUTDOWN_DEADLINE`].
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    header_read_timeout: Duration,
) -> io::Result<()> {
    let guard = LoopbackOnly {
        port: listener.local_addr()?.port(),
    };
    let app = app.layer(middleware::from_fn_with_state(guard, only_loopback));
    let connections = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(err) => {
                    // Out of file descriptors, or a connection reset before it was
                    // accepted: wait a moment rather than spin.
                    warn!(error = %err, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout)
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let connection = connections.watch(connection);
        tokio::spawn(async move {
            // A client that went away or timed out ends only its own connection.
            let _ = connection.await;
        });
    }
    if tokio::time::timeout(SHUTDOWN_DEADLINE, connections.shutdown())
        .await
        .is_err()
    {
        warn!(
            deadline_ms = SHUTDOWN_DEADLINE.as_millis(),
            "connections still open at the shutdown deadline were dropped"
        );
    }
    Ok(())
}
