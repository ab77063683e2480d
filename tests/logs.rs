//! The draws' secret permutation keys never reach the logs, at any level. Logging is state
//! of the whole process, so this test runs in a process of its own, with its subscriber
//! installed before anything logs.

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::types::AttributeValue;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use tally::api::{self, AppState};
use tally::domain::ids::DrawId;
use tally::store::{Store, StoreConfig, Timeouts};
use tally::telemetry::LogFormat;
use tower::ServiceExt;

/// Log lines written by the subscriber.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

async fn call(router: &axum::Router, method: &str, path: &str, body: Value) -> StatusCode {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    router.clone().oneshot(request).await.unwrap().status()
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

#[tokio::test]
async fn the_permutation_key_never_reaches_the_logs_even_at_trace() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing::subscriber::set_global_default(tally::telemetry::subscriber(
        "trace",
        LogFormat::Json,
        move || writer.clone(),
    ))
    .unwrap();
    let endpoint = std::env::var("DYNAMODB_ENDPOINT").expect("run through `make test`");
    let table = format!("tally-logs-{}", DrawId::generate());
    let config = StoreConfig::new(table, Some(endpoint), Timeouts::default()).unwrap();
    let store = Store::connect(&config, None).await;
    store.ensure_table().await.unwrap();
    let router = api::router(AppState::new(store.clone()));
    let draw = json!({"draw_id": "secret", "total_tickets": 50});
    assert_eq!(
        call(&router, "POST", "/draws", draw.clone()).await,
        StatusCode::CREATED
    );
    // A repeated create reads the existing item back, key and all.
    assert_eq!(call(&router, "POST", "/draws", draw).await, StatusCode::OK);
    let bought = json!({"payment_id": "p", "quantity": 2, "token": "1234"});
    let path = "/draws/secret/purchases";
    assert_eq!(
        call(&router, "POST", path, bought).await,
        StatusCode::CREATED
    );
    assert_eq!(
        call(&router, "GET", "/draws/secret", json!({})).await,
        StatusCode::OK
    );
    let close = call(&router, "POST", "/draws/secret/close", json!({})).await;
    assert_eq!(close, StatusCode::OK);
    let item = store
        .client()
        .get_item()
        .table_name(store.table())
        .key("pk", AttributeValue::S("DRAW#secret".into()))
        .send()
        .await
        .unwrap();
    let key = match item.item().and_then(|i| i.get("perm_key")) {
        Some(AttributeValue::B(blob)) => blob.as_ref().to_vec(),
        other => panic!("no key: {other:?}"),
    };
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    // The capture works: it holds the SDK's debug lines and Tally's own.
    assert!(text.contains("beginning attempt"), "no SDK lines captured");
    assert!(
        text.contains("purchase committed"),
        "no Tally lines captured"
    );
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let listed = format!("{:?}", &key[..6]).trim_end_matches(']').to_owned();
    for form in [hex.clone(), hex.to_uppercase(), base64(&key), listed] {
        assert!(
            !text.contains(&form),
            "the key appears in the logs as {form}"
        );
    }
    assert!(!text.contains("\"1234\""), "the token appears in the logs");
    store.delete_table().await.unwrap();
}
