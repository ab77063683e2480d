//! The ids other systems bring: references with `/` (Odoo's `SO/2026/0001`), payment
//! ids with `.` and `:`, and where each goes (keys, paths, cursors): a `/` travels as
//! `%2F` in a path, also where API Gateway hands the function the path decoded.

use axum::http::StatusCode;
use serde_json::json;

use crate::events::invoke;
use crate::helpers::{assert_problem, spawn_app};

#[tokio::test]
async fn a_reference_with_slashes_is_numbered_and_read_back_by_its_encoded_path() {
    let app = spawn_app().await;
    let reply = invoke(&app.router, "put-series.json").await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let order = json!({"series": "UABC", "source": "erp-1", "external_ref": "SO/2026/0001"});
    let posted = app.post("/orders", &order).await;
    assert_eq!(posted.status, StatusCode::CREATED, "{}", posted.body);
    assert_eq!(posted.body["external_ref"], "SO/2026/0001");
    let again = app.post("/orders", &order).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["order_number"], posted.body["order_number"]);

    // The `/` travels as `%2F`; unencoded, the path has more segments than the route.
    let read = app.get("/sources/erp-1/orders/SO%2F2026%2F0001").await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body, posted.body);
    let split = app.get("/sources/erp-1/orders/SO/2026/0001").await;
    assert_problem(&split, StatusCode::NOT_FOUND, "route_not_found");

    // API Gateway hands the function the path decoded, with the route it matched and
    // the parameters it took: the order is found all the same.
    let routed = invoke(&app.router, "get-order-by-ref-slash.json").await;
    assert_eq!(routed.status, StatusCode::OK, "{}", routed.body);
    assert_eq!(routed.body, posted.body);

    // A batch takes them too, and ids of dots alone are refused.
    let batch = json!({"series": "UABC", "source": "erp-1", "orders": [
        {"external_ref": "SO/2026/0002"}, {"external_ref": ".."}, {"external_ref": "a#1"}
    ]});
    let reply = app.post("/orders/batch", &batch).await;
    let codes: Vec<&str> = reply.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap_or("none"))
        .collect();
    assert_eq!(
        codes,
        ["none", "invalid_external_ref", "invalid_external_ref"],
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn a_reference_taken_in_another_series_names_the_order_and_series_holding_it() {
    let app = spawn_app().await;
    for (id, format) in [("A", "A{seq:4}"), ("B", "B{seq:4}")] {
        let reply = app
            .define_series(id, &json!({"format": format, "reset": "never"}))
            .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }
    let first = app
        .post(
            "/series/A/orders",
            &json!({"source": "erp-1", "external_ref": "PO-1"}),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    let elsewhere = app
        .post(
            "/series/B/orders",
            &json!({"source": "erp-1", "external_ref": "PO-1"}),
        )
        .await;
    assert_problem(&elsewhere, StatusCode::CONFLICT, "idempotency_conflict");
    let detail = elsewhere.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("taken by order A0001 of series A") && detail.contains("across all series"),
        "{detail}"
    );
    let other_body = app
        .post(
            "/series/A/orders",
            &json!({"source": "erp-1", "external_ref": "PO-1", "data": {"x": 1}}),
        )
        .await;
    assert_problem(&other_body, StatusCode::CONFLICT, "idempotency_conflict");
    let detail = other_body.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("taken by order A0001 of series A with another body"),
        "{detail}"
    );
}

#[tokio::test]
async fn payment_ids_with_dots_and_colons_buy_read_void_and_page() {
    let app = spawn_app().await;
    let draw = app
        .create_draw(&json!({"draw_id": "d", "total_tickets": 100, "max_per_payer": 50}))
        .await;
    assert_eq!(draw.status, StatusCode::CREATED, "{}", draw.body);
    let ids = ["GPA.3371-4401-8860:1", "pi_3Q.x:2"];
    for id in ids {
        let body = json!({"payment_id": id, "quantity": 2, "payer_id": "ann"});
        let bought = app.post("/draws/d/purchases", &body).await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
        let read = app.get(&format!("/draws/d/purchases/{id}")).await;
        assert_eq!(read.body["payment_id"], id, "{}", read.body);
        let encoded = app
            .get(&format!("/draws/d/purchases/{}", id.replace(':', "%3A")))
            .await;
        assert_eq!(encoded.body, read.body);
    }
    // A page of one, then the next from its cursor: the cursor carries the dotted id.
    let first = app.get("/draws/d/payers/ann/purchases?limit=1").await;
    let cursor = first.body["cursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let next = app
        .get(&format!(
            "/draws/d/payers/ann/purchases?limit=1&cursor={cursor}"
        ))
        .await;
    assert_eq!(next.status, StatusCode::OK, "{}", next.body);
    let mut paid: Vec<&str> = [&first, &next]
        .iter()
        .map(|page| page.body["purchases"][0]["payment_id"].as_str().unwrap())
        .collect();
    paid.sort_unstable();
    assert_eq!(paid, ["GPA.3371-4401-8860:1", "pi_3Q.x:2"]);
    let voided = app
        .post(
            "/draws/d/purchases/pi_3Q.x:2/void",
            &json!({"reason": "refund"}),
        )
        .await;
    assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    for refused in ["..", "a/b", "a#b"] {
        let body = json!({"payment_id": refused, "quantity": 1, "payer_id": "ann"});
        let reply = app.post("/draws/d/purchases", &body).await;
        assert_problem(&reply, StatusCode::BAD_REQUEST, "invalid_payment_id");
    }
}
