//! The draws' secret permutation keys never reach the logs, at any level, nor do their
//! seeds before the winners are drawn, nor the deployment secret, in logs or in answers
//! (E2). Logging is state of the
//! whole process, so this test runs in a process of its own, with its subscriber installed
//! before anything logs.

mod support;

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use tally::api::{self, AppState};
use tally::telemetry::{self, LogFormat};
use tally::tickets::TicketService;
use tally_domain::ids::DrawId;
use tally_domain::secret::DeploymentSecret;
use tally_testkit::dynamodb::{attr_b, item};
use tally_testkit::http::send_json;
use tally_testkit::logs::{capture_logs, forms};

/// A payer id: personal, never logged.
const PAYER: &str = "payer-q7x2k9";

/// Sends a request; returns its status, and keeps the body in `answers`.
async fn call(
    router: &axum::Router,
    method: &str,
    path: &str,
    body: Value,
    answers: &mut String,
) -> StatusCode {
    let reply = send_json(router, method.parse().unwrap(), path, &body).await;
    let (status, answer) = (reply.status, reply.raw);
    answers.push_str(&answer);
    status
}

#[tokio::test]
async fn the_permutation_key_and_the_seed_before_the_draw_never_reach_the_logs_even_at_trace() {
    let captured = capture_logs(|writer| {
        telemetry::subscriber("trace", LogFormat::Json, move || writer.clone())
    });
    let (store, _table) = support::fresh_store(None).await;
    let secret_text = DrawId::generate().as_str().repeat(3);
    let secret = DeploymentSecret::new(secret_text.as_bytes()).unwrap();
    let fingerprint_key = secret.derive("token-fingerprint", b"secret");
    let tickets = TicketService::new(store.clone()).with_deployment_secret(secret);
    let router = api::router(AppState {
        tickets: Arc::new(tickets),
        ..AppState::new(store.clone())
    });
    let mut answers = String::new();
    let draw = json!({"draw_id": "secret", "total_tickets": 50, "max_per_payer": 10});
    let declared = [
        ("POST", "/draws", draw.clone(), StatusCode::CREATED),
        // A repeated create reads the existing item back, key, seed and all.
        ("POST", "/draws", draw, StatusCode::OK),
        (
            "PATCH",
            "/draws/secret",
            json!({"beacon": {"network": "quicknet"}}),
            StatusCode::OK,
        ),
        // Declared on a draw that sells, the beacon stays: never withdrawn.
        (
            "PATCH",
            "/draws/secret",
            json!({"beacon": null}),
            StatusCode::CONFLICT,
        ),
    ];
    for (method, path, body, expected) in declared {
        assert_eq!(
            call(&router, method, path, body, &mut answers).await,
            expected,
            "{method} {path}"
        );
    }
    // A live quicknet round cannot be signed here: the beacon is taken off the item by
    // hand, and the draw goes on without one.
    store
        .client()
        .update_item()
        .table_name(store.table())
        .key("pk", AttributeValue::S("DRAW#secret".into()))
        .update_expression("REMOVE beacon, beacon_fixed")
        .send()
        .await
        .unwrap();
    let steps = [
        (
            "POST",
            "/draws/secret/purchases",
            json!({"payment_id": "p", "quantity": 2, "token": "1234", "payer_id": PAYER}),
            StatusCode::CREATED,
        ),
        (
            "POST",
            "/draws/secret/purchases",
            json!({"payment_id": "q", "quantity": 3, "payer_id": "bob"}),
            StatusCode::CREATED,
        ),
        (
            "POST",
            "/draws/secret/purchases/q/void",
            json!({"reason": "refund"}),
            StatusCode::OK,
        ),
        ("GET", "/draws/secret", json!({}), StatusCode::OK),
        ("GET", "/draws", json!({}), StatusCode::OK),
        (
            "GET",
            "/draws/secret/payers/payer-q7x2k9/purchases",
            json!({}),
            StatusCode::OK,
        ),
        (
            "PUT",
            "/payers/payer-q7x2k9/limits",
            json!({"limits": {"GBP": {"day": 300}}}),
            StatusCode::OK,
        ),
        ("POST", "/draws/secret/close", json!({}), StatusCode::OK),
        ("GET", "/draws/secret/eligible", json!({}), StatusCode::OK),
    ];
    for (method, path, body, expected) in steps {
        assert_eq!(
            call(&router, method, path, body, &mut answers).await,
            expected,
            "{method} {path}"
        );
    }
    let item = item(store.client(), store.table(), "DRAW#secret")
        .await
        .expect("the draw is stored");
    let (key, seed) = (attr_b(&item, "perm_key"), attr_b(&item, "seed"));
    let before_draw = captured.text();
    // The capture works: it holds the SDK's debug lines and Tally's own.
    assert!(
        before_draw.contains("beginning attempt"),
        "no SDK lines captured"
    );
    assert!(
        before_draw.contains("purchase committed"),
        "no Tally lines captured"
    );
    for form in forms(&seed) {
        assert!(
            !before_draw.contains(&form),
            "the seed appears in the logs as {form}"
        );
        assert!(
            !answers.contains(&form),
            "the seed appears in an answer as {form}"
        );
    }
    // Drawn, the seed is public: the winners carry it, the logs still do not.
    let drawn = json!({"prizes": 1});
    let mut revealed = String::new();
    assert_eq!(
        call(
            &router,
            "POST",
            "/draws/secret/winners",
            drawn,
            &mut revealed
        )
        .await,
        StatusCode::CREATED
    );
    assert!(
        revealed.contains(&forms(&seed)[0]),
        "the winners do not reveal the seed"
    );
    let text = captured.text();
    assert!(text.contains("winners drawn"), "no winners line captured");
    for form in forms(&key) {
        assert!(
            !text.contains(&form),
            "the key appears in the logs as {form}"
        );
        assert!(
            !answers.contains(&form) && !revealed.contains(&form),
            "the key appears in an answer as {form}"
        );
    }
    for form in forms(&seed) {
        assert!(
            !text.contains(&form),
            "the seed appears in the logs as {form}"
        );
    }
    assert!(!text.contains("\"1234\""), "the token appears in the logs");
    // Nor a payer id, in a body or in a path.
    assert!(!text.contains(PAYER), "a payer id appears in the logs");
    assert!(
        text.contains("/payers/{payer_id}/limits"),
        "no path with a payer captured"
    );
    // Nor the deployment secret, nor the key it gives this draw's fingerprints.
    for form in forms(&fingerprint_key).into_iter().chain([secret_text]) {
        assert!(
            !text.contains(&form) && !answers.contains(&form) && !revealed.contains(&form),
            "the deployment secret or its key appears as {form}"
        );
    }
}
