//! Series and order routes, and the numbering rules, through the real router.

use std::sync::Arc;
use tally_domain::access::SourceAccess;
use tally_domain::journal::Operator;

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::{Value, json};
use tally::orders::{ItemOutcome, OrderService};
use tally_domain::ids::{SeriesId, SourceId};
use tally_domain::series::{Reset, SeriesDefinition};

use crate::helpers::{Reply, TestApp, assert_problem, fresh_store, order_input, spawn_app};

async fn put_series(app: &TestApp, id: &str, body: Value) -> Reply {
    app.put(&format!("/series/{id}"), &body).await
}

#[tokio::test]
async fn defining_a_series_is_idempotent_and_conflicts_on_change() {
    let app = spawn_app().await;
    let body = json!({"format": "UABC{yy}{seq:6}", "reset": "yearly", "gapless": true, "start": 1});
    let created = put_series(&app, "UABC", body.clone()).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["format"], "UABC{yy}{seq:6}");
    assert_eq!(created.body["gapless"], true);
    let again = put_series(&app, "UABC", body).await;
    assert_eq!(again.status, StatusCode::OK);
    let changed = put_series(&app, "UABC", json!({"format": "UABC{yy}{seq:7}"})).await;
    assert_problem(&changed, StatusCode::CONFLICT, "series_exists");

    let defaults = put_series(&app, "SO", json!({})).await;
    assert_eq!(defaults.status, StatusCode::CREATED);
    assert_eq!(defaults.body["format"], "{series}{yy}{seq:6}");
    assert_eq!(defaults.body["reset"], "yearly");
    assert_eq!(defaults.body["start"], 1);

    let status = app.get("/series/UABC").await;
    assert_eq!(status.status, StatusCode::OK);
    assert!(status.body["last_counter"].is_null());
    assert!(status.body["period"].as_str().unwrap().len() == 4);
    assert_problem(
        &app.get("/series/none").await,
        StatusCode::NOT_FOUND,
        "series_not_found",
    );
}

#[tokio::test]
async fn invalid_series_definitions_are_rejected() {
    let app = spawn_app().await;
    let cases = [
        (
            json!({"format": "UABC{seq:6}", "reset": "yearly"}),
            "format_missing_date_token",
        ),
        (
            json!({"format": "A{yy}{seq:4}", "reset": "monthly"}),
            "format_missing_date_token",
        ),
        (
            json!({"format": "A{seq:4}{seq:2}", "reset": "never"}),
            "invalid_format",
        ),
        (
            json!({"format": "A {seq:4}", "reset": "never"}),
            "invalid_format",
        ),
        (
            json!({"format": "A{seq:4}", "reset": "weekly"}),
            "invalid_reset",
        ),
        (
            json!({"format": "A{seq:4}", "reset": "never", "start": 0}),
            "invalid_start",
        ),
        (
            json!({"format": "A{seq:4}", "gapless": "yes"}),
            "invalid_gapless",
        ),
        (json!({"format": "A{seq:4}", "start": -5}), "invalid_start"),
        (json!({"format": "A{seq:4}", "colour": 1}), "invalid_body"),
    ];
    for (body, code) in cases {
        assert_problem(
            &put_series(&app, "S1", body).await,
            StatusCode::BAD_REQUEST,
            code,
        );
    }
    // 2^64 does not fit any integer: it still names its field.
    let huge = crate::helpers::send_raw(
        &app.router,
        axum::http::Method::PUT,
        "/series/S1",
        "application/json",
        r#"{"format": "A{seq:4}", "start": 18446744073709551616}"#.into(),
    )
    .await;
    assert_problem(&huge, StatusCode::BAD_REQUEST, "invalid_start");
    assert_problem(
        &put_series(&app, "bad.id", json!({})).await,
        StatusCode::BAD_REQUEST,
        "invalid_series_id",
    );
}

#[tokio::test]
async fn an_order_gets_the_next_number_and_a_repost_gets_it_back() {
    let app = spawn_app().await;
    put_series(&app, "UABC", json!({"format": "UABC{yy}{seq:6}"})).await;
    let body = json!({"series": "UABC", "source": "erp-1", "external_ref": "PO-7781", "data": {"total": 12.5}});
    let first = app.post("/orders", &body).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let number = first.body["order_number"].as_str().unwrap().to_owned();
    let yy = Timestamp::now().strftime("%y").to_string();
    assert_eq!(number, format!("UABC{yy}000001"));
    assert_eq!(first.body["data"], json!({"total": 12.5}));
    assert_eq!(first.body["source"], "erp-1");

    let repost = app.post("/orders", &body).await;
    assert_eq!(repost.status, StatusCode::OK);
    assert_eq!(repost.body, first.body);
    let changed = app
        .post("/orders", &json!({"series": "UABC", "source": "erp-1", "external_ref": "PO-7781", "data": {"total": 13}}))
        .await;
    assert_problem(&changed, StatusCode::CONFLICT, "idempotency_conflict");

    let second = app
        .post(
            "/orders",
            &json!({"series": "UABC", "source": "shop", "external_ref": "PO-7781"}),
        )
        .await;
    assert_eq!(second.body["order_number"], format!("UABC{yy}000002"));

    assert_eq!(app.get(&format!("/orders/{number}")).await.body, first.body);
    assert_eq!(
        app.get("/sources/erp-1/orders/PO-7781").await.body,
        first.body
    );
    assert_problem(
        &app.get("/orders/UABC99000009").await,
        StatusCode::NOT_FOUND,
        "order_not_found",
    );
    assert_problem(
        &app.get("/sources/erp-1/orders/nope").await,
        StatusCode::NOT_FOUND,
        "order_not_found",
    );
    assert_problem(
        &app.get("/orders/a%23b").await,
        StatusCode::BAD_REQUEST,
        "invalid_order_number",
    );
    let status = app.get("/series/UABC").await.body;
    assert_eq!(status["last_counter"], 2);
    assert_eq!(status["last_number"], format!("UABC{yy}000002"));
}

#[tokio::test]
async fn invalid_orders_are_rejected() {
    let app = spawn_app().await;
    put_series(&app, "S", json!({"format": "S{yy}{seq:3}"})).await;
    let cases = [
        (
            json!({"series": "S", "source": "e", "external_ref": "a#b"}),
            StatusCode::BAD_REQUEST,
            "invalid_external_ref",
        ),
        (
            json!({"series": "S", "source": "e#1", "external_ref": "a"}),
            StatusCode::BAD_REQUEST,
            "invalid_source",
        ),
        (
            json!({"series": "S", "source": "e", "external_ref": "a", "data": [1]}),
            StatusCode::BAD_REQUEST,
            "invalid_data",
        ),
        (
            json!({"series": "S", "source": "e", "external_ref": "a", "data": {"x": "y".repeat(17_000)}}),
            StatusCode::BAD_REQUEST,
            "data_too_large",
        ),
        (
            json!({"series": "S", "source": "e"}),
            StatusCode::BAD_REQUEST,
            "invalid_body",
        ),
        (
            json!({"series": "none", "source": "e", "external_ref": "a"}),
            StatusCode::NOT_FOUND,
            "series_not_found",
        ),
    ];
    for (body, status, code) in cases {
        assert_problem(&app.post("/orders", &body).await, status, code);
    }
}

#[tokio::test]
async fn a_batch_numbers_in_request_order_and_reports_each_item() {
    let app = spawn_app().await;
    put_series(
        &app,
        "B",
        json!({"format": "B-{seq:4}", "reset": "never", "gapless": false}),
    )
    .await;
    app.post(
        "/orders",
        &json!({"series": "B", "source": "wh", "external_ref": "known"}),
    )
    .await;
    let batch = json!({"series": "B", "source": "wh", "orders": [
        {"external_ref": "r1", "data": {"n": 1}},
        {"external_ref": "bad ref"},
        {"external_ref": "r2"},
        {"external_ref": "known"},
        {"external_ref": "r1", "data": {"n": 1}},
        {"external_ref": "r1", "data": {"n": 2}},
        {"external_ref": 7},
        {"external_ref": "r3", "data": "text"},
        {"external_ref": "r4", "extra": true},
        {"external_ref": "r5"}
    ]});
    let reply = app.post("/orders/batch", &batch).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let results = reply.body["results"].as_array().unwrap();
    let view: Vec<(String, String, String)> = results
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap().to_owned(),
                r["order_number"].as_str().unwrap_or("").to_owned(),
                r["code"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let row = |s: &str, n: &str, c: &str| (s.to_owned(), n.to_owned(), c.to_owned());
    assert_eq!(
        view,
        vec![
            row("created", "B-0002", ""),
            row("rejected", "", "invalid_external_ref"),
            row("created", "B-0003", ""),
            row("existing", "B-0001", ""),
            row("existing", "B-0002", ""),
            row("rejected", "", "idempotency_conflict"),
            row("rejected", "", "invalid_order"),
            row("rejected", "", "invalid_data"),
            row("rejected", "", "invalid_order"),
            row("created", "B-0004", ""),
        ]
    );
    assert_eq!(results[1]["external_ref"], "bad ref");
    assert_eq!(results[9]["index"], 9);
    let empty = app
        .post(
            "/orders/batch",
            &json!({"series": "B", "source": "wh", "orders": []}),
        )
        .await;
    assert_problem(&empty, StatusCode::BAD_REQUEST, "invalid_batch_size");
    let orders: Vec<Value> = (0..1_001)
        .map(|i| json!({"external_ref": format!("x{i}")}))
        .collect();
    let huge = app
        .post(
            "/orders/batch",
            &json!({"series": "B", "source": "wh", "orders": orders}),
        )
        .await;
    assert_problem(&huge, StatusCode::BAD_REQUEST, "invalid_batch_size");
}

#[tokio::test]
async fn a_legacy_start_continues_and_a_wide_counter_grows() {
    let app = spawn_app().await;
    put_series(
        &app,
        "L",
        json!({"format": "UABC{yy}{seq:6}", "start": 999_999}),
    )
    .await;
    let yy = Timestamp::now().strftime("%y").to_string();
    let a = app
        .post(
            "/orders",
            &json!({"series": "L", "source": "erp", "external_ref": "a"}),
        )
        .await;
    let b = app
        .post(
            "/orders",
            &json!({"series": "L", "source": "erp", "external_ref": "b"}),
        )
        .await;
    assert_eq!(a.body["order_number"], format!("UABC{yy}999999"));
    assert_eq!(b.body["order_number"], format!("UABC{yy}1000000"));
}

fn number(outcome: &ItemOutcome) -> String {
    match outcome {
        ItemOutcome::Created(o) | ItemOutcome::Existing(o) => o.order_number.clone(),
        ItemOutcome::Rejected(r) => panic!("rejected: {r:?}"),
    }
}

#[tokio::test]
async fn a_yearly_series_restarts_at_new_year_and_a_never_series_keeps_counting() {
    let (store, _table) = fresh_store(None).await;
    let now = Arc::new(std::sync::Mutex::new(
        jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(2026, 12, 31).at(23, 59, 59, 0))
            .unwrap(),
    ));
    let clock_now = now.clone();
    let service = OrderService::with_clock(store, Arc::new(move || *clock_now.lock().unwrap()));
    let yearly = SeriesId::parse("Y").unwrap();
    let never = SeriesId::parse("N").unwrap();
    let source = SourceId::parse("erp").unwrap();
    for (id, format, reset, gapless) in [
        (&yearly, "UABC{yy}{seq:6}", Reset::Yearly, true),
        (&never, "UNEV{yy}{seq:6}", Reset::Never, false),
    ] {
        let definition = SeriesDefinition::new(format, reset, gapless, 1).unwrap();
        service
            .define_series(id, definition, &Operator::local())
            .await
            .unwrap();
    }
    let last_2026 = service
        .create_orders(
            &yearly,
            &source,
            vec![order_input("y1"), order_input("y2")],
            &SourceAccess::All,
        )
        .await
        .unwrap();
    let never_2026 = service
        .create_orders(&never, &source, vec![order_input("n1")], &SourceAccess::All)
        .await
        .unwrap();
    assert_eq!(number(&last_2026[1]), "UABC26000002");
    assert_eq!(number(&never_2026[0]), "UNEV26000001");
    *now.lock().unwrap() = jiff::tz::Offset::UTC
        .to_timestamp(jiff::civil::date(2027, 1, 1).at(0, 0, 1, 0))
        .unwrap();
    let first_2027 = service
        .create_orders(
            &yearly,
            &source,
            vec![order_input("y3")],
            &SourceAccess::All,
        )
        .await
        .unwrap();
    let never_2027 = service
        .create_orders(&never, &source, vec![order_input("n2")], &SourceAccess::All)
        .await
        .unwrap();
    assert_eq!(number(&first_2027[0]), "UABC27000001");
    assert_eq!(number(&never_2027[0]), "UNEV27000002");
    let status = service.series_status(&yearly).await.unwrap();
    assert_eq!(
        (status.period.as_str(), status.last_counter),
        ("2027", Some(1))
    );
}

#[tokio::test]
async fn a_fast_batch_of_a_thousand_costs_one_counter_update() {
    let counter = tally::store::RequestCounter::default();
    let (store, _table) = fresh_store(Some(counter.clone())).await;
    let service = OrderService::new(store.clone());
    let series = SeriesId::parse("K").unwrap();
    let definition = SeriesDefinition::new("K{seq:5}", Reset::Never, false, 1).unwrap();
    service
        .define_series(&series, definition, &Operator::local())
        .await
        .unwrap();
    let inputs: Vec<_> = (0..1_000).map(|i| order_input(&format!("k-{i}"))).collect();
    let (requests, units) = (counter.get(), store.write_meter().table_units());
    let outcomes = service
        .create_orders(
            &series,
            &SourceId::parse("bulk").unwrap(),
            inputs,
            &SourceAccess::All,
        )
        .await
        .unwrap();
    let numbers: Vec<String> = outcomes.iter().map(number).collect();
    assert_eq!(numbers.first().unwrap(), "K00001");
    assert_eq!(numbers.last().unwrap(), "K01000");
    // 10 reads of existing references, 1 counter update, 20 transactions of 50 orders.
    assert_eq!(counter.get() - requests, 31);
    // 1 WCU for the counter, 2 per transaction item (2 items per order); the number
    // items enter the period index and the index of number texts, one unit each.
    assert_eq!(store.write_meter().table_units() - units, 1 + 4 * 1_000);
    assert_eq!(store.write_meter().index_units(), 2 * 1_000);
}

#[tokio::test]
async fn a_batch_conflict_names_the_order_that_holds_the_reference() {
    let app = spawn_app().await;
    for id in ["UABC", "UXYZ"] {
        let body = json!({"format": format!("{id}{{yy}}{{seq:6}}"), "reset": "yearly"});
        assert_eq!(put_series(&app, id, body).await.status, StatusCode::CREATED);
    }
    let first = app
        .post(
            "/orders",
            &json!({"series": "UABC", "source": "erp", "external_ref": "PO-7781"}),
        )
        .await;
    let number = first.body["order_number"].as_str().unwrap().to_owned();
    let batch = json!({"series": "UXYZ", "source": "erp", "orders": [{"external_ref": "PO-7781"}]});
    let reply = app.post("/orders/batch", &batch).await;
    let result = &reply.body["results"][0];
    assert_eq!(result["code"], "idempotency_conflict", "{}", reply.body);
    // The caller may act as the source, so it may read that order by its reference.
    let detail = result["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!("taken by order {number} of series UABC"))
            && detail.contains("PO-7781"),
        "{detail}"
    );
}
