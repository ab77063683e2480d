//! Slow and careless clients: a request head sent a header at a time, a trickled body, a
//! body announced larger than the route takes, `Expect: 100-continue`.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use tally::api::{MAX_BODY_BYTES, MAX_ORDER_BODY_BYTES};
use tally_testkit::http::exchange;

use super::{LONG, serve};

/// Sends `head`, then `drip` one piece every 100 ms, while reading. Returns what the
/// server sent, whether it closed the connection, and how many pieces went out before.
async fn drip(address: SocketAddr, head: &str, drip: &[&str]) -> (String, bool, usize) {
    let stream = TcpStream::connect(address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    writer.write_all(head.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let mut sent = 0;
    let mut ticker = tokio::time::interval(Duration::from_millis(100));
    while sent < drip.len() {
        tokio::select! {
            read = reader.read(&mut buffer) => match read {
                Ok(0) | Err(_) => return (String::from_utf8_lossy(&received).into_owned(), true, sent),
                Ok(n) => received.extend_from_slice(&buffer[..n]),
            },
            _ = ticker.tick() => {
                if writer.write_all(drip[sent].as_bytes()).await.is_err() {
                    break;
                }
                sent += 1;
            }
        }
    }
    // Everything was sent: whatever else comes within the patience, then the verdict.
    let closed = loop {
        match tokio::time::timeout(Duration::from_secs(2), reader.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
            Err(_) => break false,
        }
    };
    (
        String::from_utf8_lossy(&received).into_owned(),
        closed,
        sent,
    )
}

#[tokio::test]
async fn a_client_slow_to_send_its_head_is_disconnected() {
    let address = serve(Duration::from_millis(500), LONG, LONG).await;
    let header = "x-slow: 1\r\n";
    let headers = vec![header; 600];
    let head = format!("GET /draws HTTP/1.1\r\nhost: {address}\r\n");
    let slow = (0..3).map(|_| drip(address, &head, &headers));
    for (received, closed, sent) in futures::future::join_all(slow).await {
        // Closed after about five headers; 600 would be a minute.
        assert!(
            closed && sent < headers.len(),
            "{sent} headers sent, closed: {closed}"
        );
        assert!(received.is_empty(), "{received}");
    }
    // A connection that sends nothing is closed too.
    let (_, closed, _) = drip(address, "", &[""; 600]).await;
    assert!(closed);
}

#[tokio::test]
async fn a_trickled_body_is_408_and_closes_the_connection_whichever_timeout_comes_first() {
    let head = "POST /draws HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 600\r\n";
    let body = vec![" "; 600];
    let short = Duration::from_millis(500);
    for address in [
        serve(LONG, short, LONG).await,
        // The request timeout before the body's: still nothing was done, still a 408.
        serve(LONG, LONG, short).await,
    ] {
        let head = format!("{head}host: {address}\r\n\r\n");
        let (received, closed, sent) = drip(address, &head, &body).await;
        assert!(
            closed && sent < body.len(),
            "{sent} bytes sent, closed: {closed}"
        );
        assert!(received.starts_with("HTTP/1.1 408 "), "{received}");
        assert!(received.contains("\"code\":\"body_timeout\""), "{received}");
        assert!(!received.contains("outcome_unknown"), "{received}");
    }
}

#[tokio::test]
async fn a_body_announced_over_the_limit_is_413_before_it_is_read() {
    let address = serve(LONG, LONG, LONG).await;
    let post = |path: &str, length: u64, expect: bool| {
        format!(
            "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n{}\r\n",
            if expect {
                "expect: 100-continue\r\n"
            } else {
                ""
            }
        )
    };
    for (path, length, expect, limit) in [
        ("/orders/batch", 100_000_000, false, MAX_ORDER_BODY_BYTES),
        ("/orders/batch", 4 * 1024 * 1024, true, MAX_ORDER_BODY_BYTES),
        ("/draws", 70_000, false, MAX_BODY_BYTES),
        ("/draws", 70_000, true, MAX_BODY_BYTES),
    ] {
        // No byte of the body is sent: the answer must not wait for it.
        let mut stream = TcpStream::connect(address).await.unwrap();
        let (status, head, body) = exchange(&mut stream, &post(path, length, expect)).await;
        assert_eq!(status, 413, "{path} {length}: {head}");
        assert!(!head.contains("100 Continue"), "{head}");
        assert_eq!(
            (body["code"].as_str(), body["limit"].as_u64()),
            (Some("body_too_large"), Some(limit as u64))
        );
    }
    // Within the limit, a client that waits for `100 Continue` gets it, then its answer.
    let mut stream = TcpStream::connect(address).await.unwrap();
    let body = r#"{"total_tickets": 0}"#;
    let (status, head, _) = exchange(&mut stream, &post("/draws", body.len() as u64, true)).await;
    assert_eq!(status, 100, "{head}");
    let (status, _, answer) = exchange(&mut stream, body).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (400, Some("invalid_total_tickets"))
    );
}
