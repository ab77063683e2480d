//! The HTTP API as a test calls it: a request through a router (or over raw TCP), its
//! answer read as JSON, a problem checked against openapi.json, and a request repeated
//! through 503s as a well-behaved client repeats it.

use std::sync::LazyLock;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower::ServiceExt;

/// A response: status, headers and the body as JSON (`Null` when empty).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: String,
    pub headers: axum::http::HeaderMap,
    pub body: Value,
    /// The body as sent, for what JSON values would round.
    pub raw: String,
    /// The request's method and path (without its query).
    pub method: Method,
    pub path: String,
}

impl Reply {
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }
}

pub async fn send(router: &Router, request: Request<Body>) -> Reply {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("the router never fails");
    let status = response.status();
    let headers = response.headers().clone();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| panic!("body is not JSON: {}", String::from_utf8_lossy(&bytes)))
    };
    Reply {
        status,
        content_type,
        headers,
        body,
        raw: String::from_utf8_lossy(&bytes).into_owned(),
        method,
        path,
    }
}

/// The reply is a problem document of `status` and `code`, and openapi.json lists `code`
/// among the answers of that status of the route it was sent to (a code a route answers
/// but does not declare fails here).
pub fn assert_problem(reply: &Reply, status: StatusCode, code: &str) {
    assert_eq!(reply.status, status, "{}", reply.body);
    assert_eq!(reply.code(), code, "{}", reply.body);
    assert_eq!(reply.content_type, "application/problem+json");
    assert_eq!(reply.body["status"], status.as_u16());
    assert!(reply.body["title"].is_string() && reply.body["detail"].is_string());
    static DOCUMENT: LazyLock<Value> =
        LazyLock::new(|| serde_json::from_str(include_str!("../../../openapi.json")).unwrap());
    let segments: Vec<_> = reply.path.split('/').collect();
    let Some((route, item)) = DOCUMENT["paths"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(route, _)| {
            let parts: Vec<_> = route.split('/').collect();
            parts.len() == segments.len()
                && parts
                    .iter()
                    .zip(&segments)
                    .all(|(part, segment)| part.starts_with('{') || part == segment)
        })
    else {
        // No such route, or (below) no such method: the router's own fallback answers.
        return;
    };
    let method = reply.method.as_str().to_ascii_lowercase();
    let Some(operation) = item.get(&method) else {
        return;
    };
    let mut response = &operation["responses"][status.as_str()];
    if let Some(shared) = response["$ref"].as_str() {
        let name = shared.rsplit('/').next().unwrap();
        response = &DOCUMENT["components"]["responses"][name];
    }
    let listed = &response["content"]["application/problem+json"]["schema"]["allOf"][1]["properties"]
        ["code"]["enum"];
    let documented = match listed.as_array() {
        Some(codes) => codes.iter().any(|c| c == code),
        None => response["description"]
            .as_str()
            .is_some_and(|d| d.contains(&format!("`{code}`"))),
    };
    assert!(
        documented,
        "{method} {route} answers {status} `{code}`, which openapi.json does not list"
    );
}

/// Posts until the answer is not a 503, as a well-behaved client (a payment webhook, an
/// ERP) does: a 503 means the outcome is unknown and the request safe to repeat. Every 503
/// must carry `Retry-After` and say why; no answer may be a 500.
pub async fn settle(router: &Router, path: &str, body: &str) -> Reply {
    settle_request(router, Method::POST, path, body).await
}

/// As [`settle`], for any method.
pub async fn settle_request(router: &Router, method: Method, path: &str, body: &str) -> Reply {
    for attempt in 0..200u64 {
        let request = Request::builder()
            .method(method.clone())
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_owned()))
            .unwrap();
        let reply = send(router, request).await;
        assert!(
            reply.status != StatusCode::INTERNAL_SERVER_ERROR,
            "{path}: 500 {}",
            reply.body
        );
        if reply.status != StatusCode::SERVICE_UNAVAILABLE {
            return reply;
        }
        assert!(
            reply.headers.contains_key("retry-after"),
            "503 without Retry-After: {}",
            reply.body
        );
        assert!(
            ["outcome_unknown", "throttled", "contention"].contains(&reply.code()),
            "{}",
            reply.body
        );
        // Backing off as a client does: longer as the same request keeps failing.
        tokio::time::sleep(Duration::from_millis((20 + 5 * attempt).min(500))).await;
    }
    panic!("{path}: still 503 after 200 attempts");
}

pub async fn post_json(router: &Router, path: &str, body: &Value) -> Reply {
    send_json(router, Method::POST, path, body).await
}

/// A request with a JSON body.
pub async fn send_json(router: &Router, method: Method, path: &str, body: &Value) -> Reply {
    send_raw(router, method, path, "application/json", body.to_string()).await
}

pub async fn post_raw(router: &Router, path: &str, content_type: &str, body: String) -> Reply {
    send_raw(router, Method::POST, path, content_type, body).await
}

/// A request whose body is sent as written (JSON that `Value` cannot hold, or no JSON).
pub async fn send_raw(
    router: &Router,
    method: Method,
    path: &str,
    content_type: &str,
    body: String,
) -> Reply {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .unwrap();
    send(router, request).await
}

pub async fn patch(router: &Router, path: &str, body: &Value) -> Reply {
    send_json(router, Method::PATCH, path, body).await
}

pub async fn put_json(router: &Router, path: &str, body: &Value) -> Reply {
    send_json(router, Method::PUT, path, body).await
}

pub async fn get(router: &Router, path: &str) -> Reply {
    let request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .body(Body::empty())
        .unwrap();
    send(router, request).await
}

/// Sends `request` over raw TCP and reads one answer, waiting a minute at most: status,
/// head and JSON body, once the body is whole (by its `content-length`) or the connection
/// ends.
pub async fn exchange(stream: &mut TcpStream, request: &str) -> (u16, String, Value) {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let answer = tokio::time::timeout(Duration::from_secs(60), async {
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
    .expect("an answer within a minute");
    let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    let status = head[9..12].parse().unwrap();
    (
        status,
        head.to_owned(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}
