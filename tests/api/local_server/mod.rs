//! `tally serve` over raw TCP on 127.0.0.1: against slow and careless clients
//! (`slow_clients`), against requests from elsewhere than localhost (`only_localhost`),
//! and as a process, where it finds its table (`process`). Every test bounds its own
//! loops, so it ends whatever the server does.

mod only_localhost;
pub mod process;
mod slow_clients;

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tally::api::{self, AppState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::store_on;

/// Serves the API with these timeouts on a port of its own. The store is never reached:
/// every request here is settled before a handler would call it.
async fn serve(header: Duration, body: Duration, request: Duration) -> SocketAddr {
    let state = AppState {
        request_timeout: request,
        drawing_timeout: request,
        body_timeout: body,
        ..AppState::new(store_on("never-reached", None).await)
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(api::local_server::serve(
        listener,
        api::router(state),
        std::future::pending(),
        header,
    ));
    address
}

const LONG: Duration = Duration::from_secs(120);
/// What a test waits at most for an answer that should come at once.
const PATIENCE: Duration = Duration::from_secs(60);

/// Sends `request` and reads one answer: status, head and JSON body, once the body is
/// whole (by its `content-length`) or the connection ends.
async fn exchange(stream: &mut TcpStream, request: &str) -> (u16, String, Value) {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let answer = tokio::time::timeout(PATIENCE, async {
        loop {
            let text = String::from_utf8_lossy(&received).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                if head.starts_with("HTTP/1.1 1") {
                    return text;
                }
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(str::to_owned)
                    })
                    .and_then(|l| l.parse::<usize>().ok());
                if length.is_some_and(|l| body.len() >= l) {
                    return text;
                }
            }
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return text,
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await
    .expect("an answer within the patience");
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head[9..12].parse().unwrap();
    (
        status,
        head.to_owned(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}
