//! What the tests that read log lines share: a subscriber installed for the whole
//! process, writing JSON lines to memory (logging is state of the whole process, so each
//! such test runs in a process of its own), tables of their own, and the forms a secret
//! takes in a line. Each test binary uses a part of it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::types::AttributeValue;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use tally::domain::ids::DrawId;
use tally::store::{AwsEnvironment, RequestCounter, Store, StoreConfig, Timeouts};
use tally::telemetry::LogFormat;
use tower::ServiceExt;

/// Log lines written by the subscriber.
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// Installs Tally's subscriber for the whole process, in JSON at `directives`, before
/// anything logs; returns what it writes.
pub fn capture_logs(directives: &str) -> Captured {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing::subscriber::set_global_default(tally::telemetry::subscriber(
        directives,
        LogFormat::Json,
        move || writer.clone(),
    ))
    .unwrap();
    captured
}

/// Sends a JSON request through `router`; returns the status and the body's text.
pub async fn send(
    router: &axum::Router,
    method: &str,
    path: &str,
    body: Value,
) -> (StatusCode, String) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

/// A store on a new table `tally-<name>-<id>`, with its stream, in the DynamoDB Local of
/// `make test`; the test deletes it at its end.
pub async fn fresh_store(name: &str, counter: Option<RequestCounter>) -> Store {
    let endpoint = std::env::var("DYNAMODB_ENDPOINT").expect("run through `make test`");
    let table = format!("tally-{name}-{}", DrawId::generate());
    let config = StoreConfig::new(
        table,
        Some(endpoint),
        Timeouts::default(),
        AwsEnvironment::default(),
    )
    .unwrap();
    let store = Store::connect(&config, counter).await;
    store.ensure_table().await.unwrap();
    store
}

/// The forms a secret could take in a log line or an answer: hex in either case, base64
/// (as DynamoDB's JSON writes a binary attribute) and the start of a byte list (as `Debug`
/// prints one).
pub fn forms(secret: &[u8]) -> Vec<String> {
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    let listed = format!("{:?}", &secret[..6])
        .trim_end_matches(']')
        .to_owned();
    vec![
        hex.clone(),
        hex.to_uppercase(),
        STANDARD.encode(secret),
        listed,
    ]
}

/// The stored item of draw `draw_id`, secrets and all.
pub async fn draw_item(store: &Store, draw_id: &str) -> HashMap<String, AttributeValue> {
    store
        .client()
        .get_item()
        .table_name(store.table())
        .key("pk", AttributeValue::S(format!("DRAW#{draw_id}")))
        .send()
        .await
        .unwrap()
        .item
        .expect("the draw is stored")
}

/// The binary attribute `name` of `item` (a draw's `seed`, its `perm_key`).
pub fn binary(item: &HashMap<String, AttributeValue>, name: &str) -> Vec<u8> {
    match item.get(name) {
        Some(AttributeValue::B(blob)) => blob.as_ref().to_vec(),
        other => panic!("no {name}: {other:?}"),
    }
}
