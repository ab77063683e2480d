//! Bad input is answered in the API's words: the field, what it takes, what it was sent
//! (never serde's `expected u32 at line 1 column 43` or `expected struct PurchaseBody`),
//! and a body that is not a JSON object is refused, even an array serde could read.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::helpers::spawn_app;

/// Words of serde and of Rust time libraries that must not reach a client.
const RUST_WORDS: [&str; 6] = [
    "expected u32",
    "expected u64",
    "struct ",
    "elements",
    "invalid characters",
    "line 1 column",
];

fn detail(body: &Value) -> &str {
    let detail = body["detail"].as_str().unwrap_or_default();
    for words in RUST_WORDS {
        assert!(!detail.contains(words), "{detail}");
    }
    detail
}

#[tokio::test]
async fn a_bad_field_is_named_with_what_it_takes_and_what_it_was_sent() {
    let app = spawn_app().await;
    let created = app
        .post("/draws", &json!({"draw_id": "words", "total_tickets": 100}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let cases = [
        (
            "/draws/words/purchases",
            json!({"payment_id": "p", "quantity": 4_294_967_296u64}),
            "invalid_quantity",
            "`quantity` must be a whole number of at most 4294967295, not 4294967296",
        ),
        (
            "/draws/words/purchases",
            json!({"payment_id": "p", "quantity": "3"}),
            "invalid_quantity",
            "`quantity` must be a whole number, not \"3\"",
        ),
        (
            "/draws/words/purchases",
            json!(["p", 1, null, null]),
            "invalid_body",
            "the body must be a JSON object",
        ),
        (
            "/draws/words/purchases",
            json!({"payment_id": "p", "quantity": 1, "colour": "red"}),
            "invalid_body",
            "`colour` is not a field here; the fields are `payment_id`, `hold_id`, `quantity`, `numbers`, `payer_id`, `token`, `channel`, `amount`",
        ),
        (
            "/draws/words/purchases",
            json!({"payment_id": "p"}),
            "invalid_quantity",
            "`quantity` (a lucky dip) or `numbers` (chosen numbers) is required",
        ),
        (
            "/draws",
            json!({"total_tickets": 5, "closes_at": "tomorrow"}),
            "invalid_closes_at",
            "`closes_at` must be a date and time in RFC 3339, such as 2026-12-24T18:00:00Z, not \"tomorrow\"",
        ),
        (
            "/draws",
            json!({"total_tickets": -5}),
            "invalid_total_tickets",
            "`total_tickets` must be a whole number of 0 or more, not -5",
        ),
    ];
    for (path, body, code, said) in cases {
        let reply = app.post(path, &body).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(reply.code(), code, "{body}");
        assert_eq!(detail(&reply.body), said, "{body}");
    }
    // The array was refused, not read by position: no purchase was made.
    assert_eq!(
        app.get("/draws/words/purchases/p").await.code(),
        "purchase_not_found"
    );
}

#[tokio::test]
async fn a_bad_order_in_a_batch_is_rejected_in_the_same_words() {
    let app = spawn_app().await;
    let defined = app
        .put(
            "/series/W",
            &json!({"format": "W{seq:4}", "reset": "never"}),
        )
        .await;
    assert_eq!(defined.status, StatusCode::CREATED, "{}", defined.body);
    let reply = app
        .post(
            "/orders/batch",
            &json!({"series": "W", "source": "shop", "orders": [
                {"external_ref": 5}, ["r2"], {"external_ref": "r3", "total": 1}, {"external_ref": "r4"}
            ]}),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let results = reply.body["results"].as_array().unwrap();
    let said: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r["status"].as_str().unwrap(), detail(r)))
        .collect();
    assert_eq!(
        said,
        [
            ("rejected", "`external_ref` must be a string, not 5"),
            ("rejected", "the order must be a JSON object"),
            (
                "rejected",
                "`total` is not a field here; the fields are `external_ref`, `data`, `corrects`"
            ),
            ("created", ""),
        ]
    );
}

#[tokio::test]
async fn a_value_out_of_range_is_named_with_the_range_and_the_value_sent() {
    let app = spawn_app().await;
    let created = app
        .post(
            "/draws",
            &json!({"draw_id": "range", "total_tickets": 100, "max_per_purchase": 10}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    let cases = [
        (
            "/draws/range/purchases",
            json!({"payment_id": "p", "quantity": 11}),
            "invalid_quantity",
            "`quantity` must be between 1 and 10 (the draw's `max_per_purchase`), not 11",
        ),
        (
            "/draws/range/purchases",
            json!({"payment_id": "p", "numbers": (1..=11).collect::<Vec<u64>>()}),
            "invalid_numbers",
            "`numbers` must hold 1 to 10 numbers (the draw's `max_per_purchase`), not 11",
        ),
        (
            "/draws/range/holds",
            json!({"hold_id": "h", "payer_id": "a", "numbers": []}),
            "invalid_numbers",
            "`numbers` must hold 1 to 10 numbers (the draw's `max_per_purchase`), not 0",
        ),
        (
            "/draws",
            json!({"total_tickets": 0}),
            "invalid_total_tickets",
            "`total_tickets` must be between 1 and 10000000, not 0",
        ),
        (
            "/draws",
            json!({"total_tickets": 10, "hold_seconds": 5}),
            "invalid_hold_seconds",
            "`hold_seconds` must be between 30 and 3600, not 5",
        ),
        (
            "/draws",
            json!({"total_tickets": 10, "stripes": 11}),
            "invalid_stripes",
            "`stripes` must be between 1 and 1024, and at most `total_tickets`, not 11",
        ),
    ];
    for (path, body, code, said) in cases {
        let reply = app.post(path, &body).await;
        assert_eq!(reply.code(), code, "{body}");
        assert_eq!(detail(&reply.body), said, "{body}");
    }
    let series = app
        .put(
            "/series/R",
            &json!({"format": "R{seq:3}", "reset": "never", "max_length": 300}),
        )
        .await;
    assert_eq!(series.code(), "invalid_max_length");
    assert_eq!(
        detail(&series.body),
        "`max_length` must be between 1 and 256, not 300"
    );
    let limit = app.get("/draws?limit=500").await;
    assert_eq!(
        detail(&limit.body),
        "`limit` must be a whole number from 1 to 100, not \"500\""
    );
}

#[tokio::test]
async fn sold_out_reads_as_a_sentence_and_empty_php_data_gets_a_hint() {
    let app = spawn_app().await;
    app.create_draw(&json!({"draw_id": "small", "total_tickets": 3}))
        .await;
    let two = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "a", "quantity": 2}),
        )
        .await;
    assert_eq!(two.status, StatusCode::CREATED);
    let more = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "b", "quantity": 2}),
        )
        .await;
    assert_eq!(more.code(), "sold_out");
    assert_eq!(detail(&more.body), "only 1 ticket is left: buy at most 1");
    let last = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "c", "quantity": 1}),
        )
        .await;
    assert_eq!(last.status, StatusCode::CREATED);
    let none = app
        .post(
            "/draws/small/purchases",
            &json!({"payment_id": "d", "quantity": 1}),
        )
        .await;
    assert_eq!(none.code(), "sold_out");
    assert_eq!(
        detail(&none.body),
        "the draw is sold out: no ticket is left"
    );

    app.define_series("D", &json!({"format": "D{seq:3}", "reset": "never"}))
        .await;
    let php = app
        .post(
            "/series/D/orders",
            &json!({"source": "shop", "external_ref": "r1", "data": []}),
        )
        .await;
    assert_eq!(php.code(), "invalid_data");
    let said = detail(&php.body);
    assert!(
        said.starts_with("`data` must be a JSON object, not `[]`") && said.contains("stdClass"),
        "{said}"
    );
}
