//! S1 and the calendar of a series: numbers belong to their series whatever the formats,
//! and periods and date tokens follow the series' time zone and fiscal year.

use std::sync::{Arc, Mutex};
use tally_domain::journal::Operator;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
};
use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::{Value, json};
use tally::orders::{ItemOutcome, OrderService};
use tally::store::StoreError;
use tally_domain::access::SourceAccess;
use tally_domain::ids::{SeriesId, SourceId};
use tally_domain::series::{Calendar, Reset, SeriesDefinition, Timezone};

use crate::helpers::{TestTable, fresh_store, order_input, post_json, spawn_app, store_on};
use crate::invariants::numbered_orders;

/// Posts `count` orders of `source` into `series`, in batches of 10 alternating with single
/// posts; returns every answered number.
async fn post_orders(
    router: axum::Router,
    series: &str,
    source: &str,
    count: usize,
) -> Vec<String> {
    let mut numbers = Vec::new();
    let refs: Vec<String> = (0..count).map(|i| format!("{source}-{i}")).collect();
    for (round, chunk) in refs.chunks(10).enumerate() {
        if round % 2 == 0 {
            let orders: Vec<Value> = chunk.iter().map(|r| json!({"external_ref": r})).collect();
            let reply = post_json(
                &router,
                "/orders/batch",
                &json!({"series": series, "source": source, "orders": orders}),
            )
            .await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            for result in reply.body["results"].as_array().unwrap() {
                assert_eq!(result["status"], "created", "{result}");
                numbers.push(result["order_number"].as_str().unwrap().to_owned());
            }
        } else {
            for r in chunk {
                let reply = post_json(
                    &router,
                    "/orders",
                    &json!({"series": series, "source": source, "external_ref": r}),
                )
                .await;
                assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
                numbers.push(reply.body["order_number"].as_str().unwrap().to_owned());
            }
        }
    }
    numbers
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_series_with_colliding_formats_both_number_every_order() {
    let app = spawn_app().await;
    // A fast series starting at 101 renders Q101, Q102, ... at once; a gapless series
    // with the same format reaches the same texts later. Series of one issuer may not
    // (S2): these are two companies'.
    let fast = json!({"format": "Q{seq:3}", "reset": "never", "gapless": false, "start": 101, "issuer": "shop-a"});
    let gapless =
        json!({"format": "Q{seq:3}", "reset": "never", "gapless": true, "issuer": "shop-b"});
    app.define_series("FASTQ", &fast).await;
    app.define_series("GAPQ", &gapless).await;
    let mut tasks = Vec::new();
    for (series, source) in [("FASTQ", "a"), ("FASTQ", "b"), ("GAPQ", "c"), ("GAPQ", "d")] {
        let router = crate::helpers::router(store_on(app.store.table(), None).await);
        tasks.push(tokio::spawn(async move {
            post_orders(router, series, source, 60).await
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap().len(), 60);
    }
    let items = app.scan().await;
    let counters = |series: &str| {
        let mut c: Vec<u64> = numbered_orders(&items, series)
            .values()
            .map(|n| n.counter)
            .collect();
        c.sort();
        c
    };
    // S1: each series numbered all of its orders, the gapless one without a gap.
    assert_eq!(counters("GAPQ"), (1..=120).collect::<Vec<u64>>());
    let fast_counters = counters("FASTQ");
    assert_eq!(fast_counters.len(), 120);
    assert!(fast_counters.iter().all(|&c| c >= 101));
    // Q101 is an order of both series: across series it is ambiguous, within one it is not.
    let both = app.get("/orders/Q101").await;
    assert_eq!(both.status, StatusCode::CONFLICT, "{}", both.body);
    assert_eq!(both.code(), "ambiguous_order_number");
    let mut candidates: Vec<&str> = both.body["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["series"].as_str().unwrap())
        .collect();
    candidates.sort();
    assert_eq!(candidates, ["FASTQ", "GAPQ"]);
    let own = app.get("/series/GAPQ/orders/Q101").await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.body);
    assert_eq!(
        (own.body["series"].as_str(), own.body["counter"].as_u64()),
        (Some("GAPQ"), Some(101))
    );
    // Q001 only the gapless series has: found across series without naming it.
    let only = app.get("/orders/Q001").await;
    assert_eq!(only.status, StatusCode::OK, "{}", only.body);
    assert_eq!(only.body["series"], "GAPQ");
    assert_eq!(
        app.get("/series/FASTQ/orders/Q001").await.code(),
        "order_not_found"
    );
}

#[tokio::test]
async fn a_series_defined_after_a_lookup_is_found_by_its_number() {
    let app = spawn_app().await;
    app.put(
        "/series/A",
        &json!({"format": "A-{seq:3}", "reset": "never"}),
    )
    .await;
    app.post(
        "/orders",
        &json!({"series": "A", "source": "s", "external_ref": "a1"}),
    )
    .await;
    assert_eq!(app.get("/orders/A-001").await.status, StatusCode::OK);
    // This process has read the registry; a series defined by another process is found.
    let other = crate::helpers::router(store_on(app.store.table(), None).await);
    let request = axum::http::Request::put("/series/B")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(
            r#"{"format": "B-{seq:3}", "reset": "never"}"#,
        ))
        .unwrap();
    assert_eq!(
        crate::helpers::send(&other, request).await.status,
        StatusCode::CREATED
    );
    post_json(
        &other,
        "/orders",
        &json!({"series": "B", "source": "s", "external_ref": "b1"}),
    )
    .await;
    let found = app.get("/orders/B-001").await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    assert_eq!(found.body["external_ref"], "b1");
    assert_eq!(app.get("/orders/C-001").await.code(), "order_not_found");
}

/// A service whose clock the test moves.
fn service_at(
    store: tally::store::Store,
    start: Timestamp,
) -> (OrderService, Arc<Mutex<Timestamp>>) {
    let now = Arc::new(Mutex::new(start));
    let clock = now.clone();
    (
        OrderService::with_clock(store, Arc::new(move || *clock.lock().unwrap())),
        now,
    )
}

async fn number(service: &OrderService, series: &SeriesId, r: &str) -> (String, String) {
    let outcome = service
        .create_orders(
            series,
            &SourceId::parse("erp").unwrap(),
            vec![order_input(r)],
            &SourceAccess::All,
        )
        .await
        .unwrap();
    match &outcome[0] {
        ItemOutcome::Created(o) => (o.order_number.clone(), o.period.clone()),
        other => panic!("{other:?}"),
    }
}

fn utc(y: i16, m: i8, d: i8, h: i8, min: i8) -> Timestamp {
    jiff::tz::Offset::UTC
        .to_timestamp(jiff::civil::date(y, m, d).at(h, min, 0, 0))
        .unwrap()
}

#[tokio::test]
async fn periods_follow_the_time_zone_across_new_year_and_a_change_of_daylight_saving_time() {
    let (store, _table) = fresh_store(None).await;
    let (service, now) = service_at(store, utc(2026, 12, 31, 22, 30));
    let berlin = || Calendar::new(Timezone::parse("Europe/Berlin").unwrap(), 1).unwrap();
    let yearly = SeriesId::parse("YB").unwrap();
    let daily = SeriesId::parse("DB").unwrap();
    for (id, format, reset) in [
        (&yearly, "INV{yy}-{seq:4}", Reset::Yearly),
        (&daily, "D{yyyy}{mm}{dd}-{seq:3}", Reset::Daily),
    ] {
        let definition = SeriesDefinition::new(format, reset, true, 1)
            .unwrap()
            .with_calendar(berlin());
        service
            .define_series(id, definition, &Operator::local())
            .await
            .unwrap();
    }
    // 23:30 in Berlin on 31 December: still 2026.
    assert_eq!(
        number(&service, &yearly, "y1").await,
        ("INV26-0001".into(), "2026".into())
    );
    // 00:30 in Berlin on 1 January 2027 (23:30 UTC): the new year's first invoice.
    *now.lock().unwrap() = utc(2026, 12, 31, 23, 30);
    assert_eq!(
        number(&service, &yearly, "y2").await,
        ("INV27-0001".into(), "2027".into())
    );

    // Summer time ends at 03:00 on 25 October 2026 in Berlin (01:00 UTC).
    *now.lock().unwrap() = utc(2026, 10, 24, 22, 30); // 00:30 on the 25th, summer time
    assert_eq!(
        number(&service, &daily, "d1").await,
        ("D20261025-001".into(), "2026-10-25".into())
    );
    *now.lock().unwrap() = utc(2026, 10, 25, 22, 30); // 23:30 on the 25th, winter time
    assert_eq!(
        number(&service, &daily, "d2").await,
        ("D20261025-002".into(), "2026-10-25".into())
    );
    *now.lock().unwrap() = utc(2026, 10, 25, 23, 30); // 00:30 on the 26th
    assert_eq!(
        number(&service, &daily, "d3").await,
        ("D20261026-001".into(), "2026-10-26".into())
    );
    // Each number reads back to its own period.
    let found = service
        .find_in_series(&daily, "D20261025-002", &SourceAccess::All)
        .await
        .unwrap();
    assert_eq!(found.external_ref.as_str(), "d2");
}

#[tokio::test]
async fn a_fiscal_year_starts_in_its_month_and_is_named_for_the_year_it_ends() {
    let (store, _table) = fresh_store(None).await;
    let (service, now) = service_at(store, utc(2026, 3, 31, 21, 59));
    let fiscal = SeriesId::parse("FYS").unwrap();
    // Fiscal years start on 1 April, in Sydney (UTC+11 in March, +10 from 5 April).
    let calendar = Calendar::new(Timezone::parse("Australia/Sydney").unwrap(), 4).unwrap();
    let definition = SeriesDefinition::new("FY{fy}-{seq:4}", Reset::FiscalYearly, true, 1)
        .unwrap()
        .with_calendar(calendar);
    service
        .define_series(&fiscal, definition, &Operator::local())
        .await
        .unwrap();
    // 08:59 on 1 April in Sydney is fiscal year 2027 already; 08:58 on 31 March is not.
    *now.lock().unwrap() = utc(2026, 3, 30, 21, 58);
    assert_eq!(
        number(&service, &fiscal, "f1").await,
        ("FY2026-0001".into(), "FY2026".into())
    );
    assert_eq!(
        number(&service, &fiscal, "f2").await,
        ("FY2026-0002".into(), "FY2026".into())
    );
    *now.lock().unwrap() = utc(2026, 3, 31, 21, 59);
    assert_eq!(
        number(&service, &fiscal, "f3").await,
        ("FY2027-0001".into(), "FY2027".into())
    );
    let status = service.series_status(&fiscal).await.unwrap();
    assert_eq!(
        (status.period.as_str(), status.last_counter),
        ("FY2027", Some(1))
    );
    let found = service
        .find_in_series(&fiscal, "FY2026-0002", &SourceAccess::All)
        .await
        .unwrap();
    assert_eq!(found.external_ref.as_str(), "f2");
}

#[tokio::test]
async fn time_zones_and_fiscal_months_are_checked_and_shown() {
    let app = spawn_app().await;
    let created = app
        .put(
            "/series/TZ",
            &json!({"format": "T{yy}{mm}{dd}-{fy}-{seq:3}", "reset": "daily", "timezone": "america/new_york", "fiscal_year_start": 10}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["timezone"], "America/New_York");
    assert_eq!(created.body["fiscal_year_start"], 10);
    let check = |reply: crate::helpers::Reply, code: &str| {
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
        assert_eq!(reply.code(), code);
    };
    check(
        app.put("/series/X", &json!({"timezone": "Mars/Olympus"}))
            .await,
        "invalid_timezone",
    );
    check(
        app.put("/series/X", &json!({"fiscal_year_start": 13}))
            .await,
        "invalid_fiscal_year_start",
    );
    check(
        app.put(
            "/series/X",
            &json!({"format": "X{yyyy}{seq:3}", "reset": "fiscal_yearly"}),
        )
        .await,
        "format_missing_date_token",
    );
    check(
        app.put("/series/X", &json!({"reset": "weekly"})).await,
        "invalid_reset",
    );
}

#[tokio::test]
async fn a_table_of_the_earlier_layout_is_refused_with_what_to_do() {
    // A table keyed like the text-keyed layout: the key alone, no period index.
    let table = TestTable::reserve();
    let store = store_on(table.name(), None).await;
    store
        .client()
        .create_table()
        .table_name(store.table())
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let refused = store
        .ensure_table_without_stream()
        .await
        .expect_err("an earlier layout is refused");
    assert!(matches!(refused, StoreError::TableLayout(_)), "{refused:?}");
    let message = refused.to_string();
    assert!(
        message.contains("has no period index") && message.contains("not migrated"),
        "{message}"
    );
}
