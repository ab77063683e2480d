//! I2: no answer or log line names an unsold instant-winning number, nor the key of the
//! map, before the winners are drawn, even at TRACE (the SDK's own lines included); the
//! winners reveal the key, the logs never do. Logging is state of the whole process, so
//! this test runs in a process of its own.

mod support;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use tally::api::{self, AppState};
use tally::telemetry::{self, LogFormat};
use tally::tickets::TicketService;
use tally_domain::ids::DrawId;
use tally_domain::instant::InstantKey;
use tally_domain::secret::DeploymentSecret;
use tally_testkit::http::send_json;
use tally_testkit::logs::capture_logs;

/// The ways an unsold winning number `n` could leak: as a ticket of an answer, as an
/// award's key or as a won ticket in a stored item (as the SDK logs them).
/// Whether `text` holds `form` not followed by a digit (`"ticket":1` is not in
/// `"ticket":12`).
fn names(text: &str, form: &str) -> bool {
    text.match_indices(form).any(|(at, _)| {
        !text[at + form.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

fn leaks(n: u64) -> [String; 4] {
    [
        format!("\"ticket\":{n}"),
        format!("#INSTANT#{n}\""),
        format!("\"ticket\":{{\"N\":\"{n}\"}}"),
        format!("ticket: {n}"),
    ]
}

/// Sends a request, checks its status, keeps its answer in `answers` and returns it.
async fn call(
    router: &axum::Router,
    answers: &mut String,
    method: &str,
    path: &str,
    body: Value,
    expected: StatusCode,
) -> String {
    let reply = send_json(router, method.parse().unwrap(), path, &body).await;
    let (status, answer) = (reply.status, reply.raw);
    assert_eq!(status, expected, "{method} {path}: {answer}");
    answers.push_str(&answer);
    answer
}

#[tokio::test]
async fn no_unsold_winning_number_or_map_key_reaches_an_answer_or_a_log_before_the_winners() {
    let captured = capture_logs(|writer| {
        telemetry::subscriber("trace", LogFormat::Json, move || writer.clone())
    });
    let (store, _table) = support::fresh_store(None).await;
    let secret = DeploymentSecret::new(DrawId::generate().as_str().repeat(3).as_bytes()).unwrap();
    let tickets = TicketService::new(store.clone()).with_deployment_secret(secret.clone());
    let router = api::router(AppState {
        tickets: Arc::new(tickets),
        ..AppState::new(store.clone())
    });
    let mut answers = String::new();
    call(
        &router,
        &mut answers,
        "POST",
        "/draws",
        json!({"draw_id": "hidden", "total_tickets": 200, "instant_wins":
            [{"prize": "prize-alpha", "count": 20}, {"prize": "prize-beta", "count": 20}]}),
        StatusCode::CREATED,
    )
    .await;
    let draw = store
        .get_draw(&DrawId::parse("hidden").unwrap())
        .await
        .unwrap()
        .unwrap();
    let key = InstantKey::derive(&secret, &draw.seed);
    let map = draw.instant_wins.as_ref().unwrap().map(&key, 200);
    let winning: Vec<u64> = map.slots().iter().map(|s| s.0).collect();
    let mut sold = BTreeSet::new();
    // One chosen winning number, lucky dips, a void, and every read of the draw.
    let chosen = call(
        &router,
        &mut answers,
        "POST",
        "/draws/hidden/purchases",
        json!({"payment_id": "aim", "numbers": [winning[0]]}),
        StatusCode::CREATED,
    )
    .await;
    assert!(
        chosen.contains("prize-"),
        "the chosen winner learns nothing"
    );
    sold.insert(winning[0]);
    for n in 0..8 {
        let answer = call(
            &router,
            &mut answers,
            "POST",
            "/draws/hidden/purchases",
            json!({"payment_id": format!("dip-{n}"), "quantity": 5}),
            StatusCode::CREATED,
        )
        .await;
        let body: Value = serde_json::from_str(&answer).unwrap();
        sold.extend(
            body["tickets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_u64().unwrap()),
        );
    }
    call(
        &router,
        &mut answers,
        "POST",
        "/draws/hidden/purchases/dip-0/void",
        json!({"reason": "refund"}),
        StatusCode::OK,
    )
    .await;
    for path in [
        "/draws/hidden",
        "/draws/hidden/instant-wins",
        "/draws/hidden/purchases/aim",
        "/draws/hidden/availability",
    ] {
        call(
            &router,
            &mut answers,
            "GET",
            path,
            json!({}),
            StatusCode::OK,
        )
        .await;
    }
    call(
        &router,
        &mut answers,
        "POST",
        "/draws/hidden/close",
        json!({}),
        StatusCode::OK,
    )
    .await;
    call(
        &router,
        &mut answers,
        "GET",
        "/draws/hidden/eligible",
        json!({}),
        StatusCode::OK,
    )
    .await;
    let before = captured.text();
    assert!(
        before.contains("beginning attempt"),
        "no SDK lines captured"
    );
    // The capture holds the purchase that won: the search below reads Tally's lines.
    assert!(
        before.contains("\"instant_wins\":1"),
        "no winning purchase captured"
    );
    let unsold: Vec<u64> = winning
        .iter()
        .copied()
        .filter(|n| !sold.contains(n))
        .collect();
    assert!(unsold.len() > 20, "the test sold too many winners");
    for n in &unsold {
        for form in leaks(*n) {
            assert!(!names(&before, &form), "I2: the logs name {n} as {form}");
            assert!(!names(&answers, &form), "I2: an answer names {n} as {form}");
        }
    }
    let hidden_key = key.reveal();
    assert!(!before.contains(&hidden_key) && !answers.contains(&hidden_key));
    // Drawn, the key and the map are public in the answers, never in the logs.
    let revealed = call(
        &router,
        &mut answers,
        "POST",
        "/draws/hidden/winners",
        json!({"prizes": 1}),
        StatusCode::CREATED,
    )
    .await;
    assert!(revealed.contains(&hidden_key), "the winners hide the key");
    let instant = call(
        &router,
        &mut answers,
        "GET",
        "/draws/hidden/instant-wins",
        json!({}),
        StatusCode::OK,
    )
    .await;
    assert!(instant.contains(&format!("\"ticket\":{}", unsold[0])));
    let text = captured.text();
    assert!(!text.contains(&hidden_key), "the key appears in the logs");
}
