//! What the law asks of numbers: a length and characters checked when a series is
//! defined and when it numbers (refused, never issued), exact-width counters that run
//! out instead of growing, and a validation code shown in every number and fixed once the
//! series numbers.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::helpers::assert_problem;
use crate::helpers::spawn_app;
use crate::invariants::numbered_orders;

fn order(series: &str, reference: &str) -> Value {
    json!({"series": series, "source": "erp", "external_ref": reference})
}

fn statuses(reply: &crate::helpers::Reply) -> Vec<(String, String)> {
    reply.body["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", reply.body))
        .iter()
        .map(|r| {
            (
                r["order_number"].as_str().unwrap_or("").to_owned(),
                r["code"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn india_sixteen_characters_refuse_a_format_too_long_and_accept_one_that_fits() {
    let app = spawn_app().await;
    let india = |format: &str| {
        json!({"format": format, "reset": "fiscal_yearly", "fiscal_year_start": 4,
               "max_length": 16, "allowed_characters": "A-Za-z0-9/-"})
    };
    // `INV/2027-28/000001` is 18 characters: the first number already breaks the rule.
    let long = app
        .put("/series/GST", &india("INV/{fy}-{yy}/{seq:6}"))
        .await;
    assert_problem(&long, StatusCode::BAD_REQUEST, "number_too_long");
    assert_eq!(long.body["max_length"], 16);
    assert_eq!(long.body["number"].as_str().unwrap().len(), 18);
    let underscore = app.put("/series/GST", &india("INV_{fy}/{seq:4}")).await;
    assert_problem(
        &underscore,
        StatusCode::BAD_REQUEST,
        "character_not_allowed",
    );
    assert_eq!(underscore.body["character"], "_");
    // `INV/2027/000001`: 15 characters of letters, digits and `/`.
    let fits = app.put("/series/GST", &india("INV/{fy}/{seq:6}")).await;
    assert_eq!(fits.status, StatusCode::CREATED, "{}", fits.body);
    assert_eq!(fits.body["max_length"], 16);
    let numbered = app.post("/orders", &order("GST", "a")).await;
    assert_eq!(numbered.status, StatusCode::CREATED);
    let number = numbered.body["order_number"].as_str().unwrap();
    assert!(number.len() <= 16 && number.starts_with("INV/"), "{number}");
    // A format change is held to the same rules.
    let change = app
        .patch("/series/GST", &json!({"format": "INV/{fy}/{mm}/{seq:6}"}))
        .await;
    assert_problem(&change, StatusCode::BAD_REQUEST, "number_too_long");
}

#[tokio::test]
async fn an_exact_width_series_runs_out_instead_of_growing() {
    let app = spawn_app().await;
    // Bulgaria: exactly ten digits. Here two, from 97, so that it runs out at once.
    let body = json!({"format": "{seq:2!}", "reset": "never", "start": 97,
                      "allowed_characters": "0-9"});
    app.define_series("BG", &body).await;
    let batch = json!({"series": "BG", "source": "erp", "orders": [
        {"external_ref": "a"}, {"external_ref": "b"}, {"external_ref": "c"}, {"external_ref": "d"}
    ]});
    let reply = app.post("/orders/batch", &batch).await;
    let expected: Vec<(String, String)> =
        [("97", ""), ("98", ""), ("99", ""), ("", "series_exhausted")]
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string()))
            .collect();
    assert_eq!(statuses(&reply), expected);
    let single = app.post("/orders", &order("BG", "e")).await;
    assert_problem(&single, StatusCode::CONFLICT, "series_exhausted");
    let too_wide = json!({"format": "{seq:2!}", "reset": "never", "start": 100});
    assert_problem(
        &app.put("/series/BG2", &too_wide).await,
        StatusCode::BAD_REQUEST,
        "invalid_start",
    );

    // A growing counter meets `max_length` the same way, in a fast series too.
    let fast = json!({"format": "Q{seq:1}", "reset": "never", "gapless": false, "start": 8,
                      "max_length": 2});
    app.define_series("Q", &fast).await;
    let batch = json!({"series": "Q", "source": "erp", "orders": [
        {"external_ref": "q1"}, {"external_ref": "q2"}, {"external_ref": "q3"}
    ]});
    let reply = app.post("/orders/batch", &batch).await;
    let codes: Vec<String> = statuses(&reply).into_iter().map(|(_, c)| c).collect();
    assert_eq!(codes, ["", "", "series_exhausted"]);
    // Nothing was issued past the width: every stored number fits.
    let items = app.scan().await;
    let stored: Vec<String> = numbered_orders(&items, "BG")
        .into_values()
        .chain(numbered_orders(&items, "Q").into_values())
        .map(|n| n.number)
        .collect();
    assert_eq!(stored.len(), 5);
    assert!(stored.iter().all(|n| n.len() == 2), "{stored:?}");
}

#[tokio::test]
async fn a_validation_code_is_rendered_and_frozen_once_the_series_numbers() {
    let app = spawn_app().await;
    let missing = json!({"format": "{code}-{seq:1}", "reset": "never"});
    assert_problem(
        &app.put("/series/FT", &missing).await,
        StatusCode::BAD_REQUEST,
        "validation_code_required",
    );
    let body = json!({"format": "{code}-{seq:1}", "reset": "never", "validation_code": "AAAA1111"});
    app.define_series("FT", &body).await;
    // Before the first number, the code may still change (a typo).
    let fixed = app
        .patch("/series/FT", &json!({"validation_code": "CSDF7T5H"}))
        .await;
    assert_eq!(fixed.status, StatusCode::OK, "{}", fixed.body);
    assert_eq!(fixed.body["validation_code"], "CSDF7T5H");
    let first = app.post("/orders", &order("FT", "a")).await;
    assert_eq!(first.body["order_number"], "CSDF7T5H-1", "{}", first.body);
    let frozen = app
        .patch("/series/FT", &json!({"validation_code": "ZZZZ9999"}))
        .await;
    assert_problem(&frozen, StatusCode::CONFLICT, "code_in_use");
    // The same code again changes nothing; the number is found by its text.
    let same = app
        .patch("/series/FT", &json!({"validation_code": "CSDF7T5H"}))
        .await;
    assert_eq!(same.status, StatusCode::OK);
    let found = app.get("/orders/CSDF7T5H-1").await;
    assert_eq!(found.body["external_ref"], "a", "{}", found.body);
    let again = app.post("/orders", &order("FT", "b")).await;
    assert_eq!(again.body["order_number"], "CSDF7T5H-2");
    let bad = json!({"format": "X{seq:1}", "reset": "never", "validation_code": "no-dash"});
    assert_problem(
        &app.put("/series/X", &bad).await,
        StatusCode::BAD_REQUEST,
        "invalid_validation_code",
    );
}

#[tokio::test]
async fn a_rule_that_refuses_the_format_itself_is_named() {
    let app = spawn_app().await;
    let body = json!({"format": "A.{seq:3}", "reset": "never", "allowed_characters": "A-Z0-9"});
    let reply = app.put("/series/DOT", &body).await;
    assert_problem(&reply, StatusCode::BAD_REQUEST, "character_not_allowed");
    assert!(
        reply.body["detail"].as_str().unwrap().contains("A.001"),
        "{}",
        reply.body
    );
    let bad_rule = json!({"format": "A{seq:3}", "reset": "never", "allowed_characters": "z-a"});
    assert_problem(
        &app.put("/series/R", &bad_rule).await,
        StatusCode::BAD_REQUEST,
        "invalid_allowed_characters",
    );
    let bad_max = json!({"format": "A{seq:3}", "reset": "never", "max_length": 0});
    assert_problem(
        &app.put("/series/R", &bad_max).await,
        StatusCode::BAD_REQUEST,
        "invalid_max_length",
    );
}
