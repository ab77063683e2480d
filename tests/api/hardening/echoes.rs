//! Values an error shows back: an order body may hold 3 MB of one string, and an answer
//! that repeated it, escaped once by JSON and once more by the Lambda event, would pass
//! Lambda's 6 MB response payload (a 500 from the gateway instead of the 400).

use super::*;
use crate::helpers::send_raw;
use axum::http::Method;

/// The most an error about one value may weigh: a few KiB, whatever was sent.
const SMALL_ANSWER: usize = 4 * 1024;

/// `n` backslashes as a JSON string: twice `n` bytes of body, `n` characters of value.
fn backslashes(n: usize) -> String {
    format!("\"{}\"", "\\\\".repeat(n))
}

#[tokio::test]
async fn a_long_string_where_another_type_belongs_is_a_small_400() {
    let app = spawn_app().await;
    let series = app
        .put(
            "/series/E",
            &json!({"format": "E{seq:4}", "reset": "never", "gapless": false}),
        )
        .await;
    assert_eq!(series.status, StatusCode::CREATED, "{}", series.body);
    // Within the order routes' body limit, with room for the rest of the body.
    let long = backslashes(1_500_000);
    let mut cases = vec![
        (
            Method::POST,
            "/orders/batch",
            format!(r#"{{"series": "E", "source": "shop", "orders": {long}}}"#),
            "invalid_orders".to_owned(),
        ),
        (
            Method::POST,
            "/orders",
            format!(r#"{{"series": "E", "source": "shop", "external_ref": "r", {long}: 1}}"#),
            "invalid_body".to_owned(),
        ),
        (
            Method::PATCH,
            "/series/E",
            format!(r#"{{"next": {long}, "reason": "r"}}"#),
            "invalid_next".to_owned(),
        ),
    ];
    for field in ["start", "max_length", "gapless", "ranges"] {
        cases.push((
            Method::PUT,
            "/series/F",
            format!(r#"{{"format": "F{{seq:4}}", "reset": "never", "{field}": {long}}}"#),
            format!("invalid_{field}"),
        ));
    }
    for (method, path, body, code) in cases {
        assert!(body.len() <= tally::api::MAX_ORDER_BODY_BYTES);
        let reply = send_raw(&app.router, method.clone(), path, "application/json", body).await;
        assert_eq!(
            (reply.status, reply.code()),
            (StatusCode::BAD_REQUEST, code.as_str()),
            "{method} {path}: {:.300}",
            reply.raw
        );
        assert!(
            reply.raw.len() <= SMALL_ANSWER,
            "{method} {path}: {} bytes",
            reply.raw.len()
        );
    }
}

#[tokio::test]
async fn an_invalid_item_of_a_batch_is_shown_back_cut() {
    let app = spawn_app().await;
    let series = app
        .put(
            "/series/B",
            &json!({"format": "B{seq:4}", "reset": "never", "gapless": false}),
        )
        .await;
    assert_eq!(series.status, StatusCode::CREATED, "{}", series.body);
    let long_ref = backslashes(700_000);
    let key = "k".repeat(8_000);
    let batch = format!(
        r#"{{"series": "B", "source": "shop", "orders": [
            {{"external_ref": {long_ref}}},
            {{"external_ref": "ok", "data": {{"{key}": 1, "{key}": 2}}}},
            {{"external_ref": "fine"}}
        ]}}"#
    );
    let reply = post_raw(&app.router, "/orders/batch", "application/json", batch).await;
    assert_eq!(reply.status, StatusCode::OK, "{:.300}", reply.raw);
    assert!(reply.raw.len() <= SMALL_ANSWER, "{} bytes", reply.raw.len());
    let results = reply.body["results"].as_array().unwrap();
    assert_eq!(results[0]["code"], "invalid_external_ref");
    assert_eq!(
        results[0]["external_ref"],
        format!("{}…", "\\".repeat(tally_domain::text::EXCERPT_CHARS))
    );
    assert_eq!(results[1]["code"], "invalid_data");
    // A valid reference is shown whole, and the valid item is numbered.
    assert_eq!(results[1]["external_ref"], "ok");
    assert_eq!(results[2]["status"], "created");
}
