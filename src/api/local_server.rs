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
//! A few requests never reach the router: hyper answers them itself with an empty body
//! (a URL of 64 KiB or more gets a bare `414`, headers that do not fit its buffer a bare
//! `431`, an unparsable request a bare `400`). Each connection is wrapped so that such an
//! answer goes out as a problem document like every other error.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::middleware;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tracing::warn;

use super::loopback::{LoopbackOnly, only_loopback};

/// How long a client may take to send a request's head (its line and headers) by default;
/// an idle kept-alive connection is closed after as long.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `app` on `listener` until `shutdown` completes, then lets the open connections
/// finish.
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
            .serve_connection(
                TokioIo::new(ProblemStream {
                    inner: stream,
                    pending: Vec::new(),
                }),
                TowerToHyperService::new(app.clone()),
            );
        let connection = connections.watch(connection);
        tokio::spawn(async move {
            // A client that went away or timed out ends only its own connection.
            let _ = connection.await;
        });
    }
    connections.shutdown().await;
    Ok(())
}

/// A connection whose bare error answers from hyper are replaced with problem documents.
struct ProblemStream {
    inner: TcpStream,
    /// A replacement answer not yet fully written.
    pending: Vec<u8>,
}

/// hyper's own error answers: a status line, `content-length: 0`, no body.
fn replacement(head: &[u8]) -> Option<Vec<u8>> {
    let (status, title, code, detail) = if head.starts_with(b"HTTP/1.1 414 ") {
        (
            414,
            "URI Too Long",
            "uri_too_long",
            "the URL is longer than the server accepts (64 KiB)",
        )
    } else if head.starts_with(b"HTTP/1.1 431 ") {
        (
            431,
            "Request Header Fields Too Large",
            "headers_too_large",
            "the request headers are larger than the server accepts",
        )
    } else if head.starts_with(b"HTTP/1.1 400 ") {
        (
            400,
            "Bad Request",
            "malformed_request",
            "the request is not valid HTTP/1.1",
        )
    } else {
        return None;
    };
    let bare = head
        .windows(b"content-length: 0\r\n".len())
        .any(|w| w.eq_ignore_ascii_case(b"content-length: 0\r\n"));
    if !bare {
        return None;
    }
    let body = json!({
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
    })
    .to_string();
    Some(
        format!(
            "HTTP/1.1 {status} {title}\r\ncontent-type: application/problem+json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl ProblemStream {
    /// Writes what is left of a replacement answer.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            let written = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.pending.drain(..written);
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for ProblemStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for ProblemStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(answer) = replacement(buf) {
            self.pending = answer;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hypers_bare_error_answers_are_replaced() {
        let bare = b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let answer = String::from_utf8(replacement(bare).unwrap()).unwrap();
        assert!(answer.starts_with("HTTP/1.1 414 URI Too Long\r\n"));
        assert!(answer.contains("content-type: application/problem+json"));
        assert!(answer.ends_with(r#""code":"uri_too_long","detail":"the URL is longer than the server accepts (64 KiB)","status":414,"title":"URI Too Long","type":"about:blank"}"#));
        // The router's own answers carry a body and pass untouched.
        let own = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\ncontent-length: 162\r\n\r\n";
        assert!(replacement(own).is_none());
        assert!(replacement(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
    }
}
