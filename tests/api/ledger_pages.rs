//! Pages of a period: a listing's `limit` counts orders (a move among them does not take a
//! page of its own) and a page also ends by weight, `last_number` is the last number
//! issued even after a move, and an audit stopped part way goes on from its cursor to the
//! report a whole audit gives, in memory that holds one page. A cursor goes on only in
//! the series, period and route that gave it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::json;
use tally::api::{self, AppState, audit_page_token};
use tally::orders::{AuditScope, OrderService};
use tally_domain::audit::AuditState;
use tally_domain::chain::GENESIS;
use tally_domain::ids::SeriesId;

use crate::helpers::{assert_problem, fresh_store, get, post_json, put_json, spawn_app};
use crate::ledger::define;

#[tokio::test]
async fn a_listing_of_one_starts_with_an_order_and_last_number_skips_a_move() {
    let app = spawn_app().await;
    define(&app, "M", json!({"format": "M{seq:3}", "reset": "never"})).await;
    // The period opens with a move: 1 to 4 are a declared gap.
    let moved = app
        .patch("/series/M", &json!({"next": 5, "reason": "paper book"}))
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    assert_eq!(moved.body["last_number"], serde_json::Value::Null);
    let numbers = app.post_range("M", 0, 3).await;
    assert_eq!(numbers, ["M005", "M006", "M007"]);
    let first = app.get("/series/M/orders?limit=1").await.body;
    assert_eq!(first["orders"].as_array().unwrap().len(), 1, "{first}");
    assert_eq!(first["orders"][0]["order_number"], "M005");
    assert_eq!(first["moves"][0]["to"], 4);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = app
        .get(&format!("/series/M/orders?limit=1&cursor={cursor}"))
        .await
        .body;
    assert_eq!(second["orders"][0]["order_number"], "M006", "{second}");
    // After a move the last number is the last one issued, not one that was skipped.
    let moved = app
        .patch("/series/M", &json!({"next": 20, "reason": "new book"}))
        .await;
    assert_eq!(
        (&moved.body["last_counter"], &moved.body["last_number"]),
        (&json!(19), &json!("M007")),
        "{}",
        moved.body
    );
    let whole = app.get("/series/M/orders?limit=2").await.body;
    assert_eq!(whole["orders"].as_array().unwrap().len(), 2);
    assert!(whole["next_cursor"].is_string());
    let rest = app
        .get(&format!(
            "/series/M/orders?limit=2&cursor={}",
            whole["next_cursor"].as_str().unwrap()
        ))
        .await
        .body;
    assert_eq!(rest["orders"].as_array().unwrap().len(), 1, "{rest}");
    assert_eq!(rest["moves"][0]["from"], 8, "{rest}");
    assert_eq!(rest["next_cursor"], serde_json::Value::Null);
}

#[tokio::test]
async fn an_audit_stopped_part_way_goes_on_to_the_report_of_a_whole_one() {
    let app = spawn_app().await;
    define(&app, "P", json!({"format": "P{seq:5}", "reset": "never"})).await;
    for from in (0..2_200).step_by(550) {
        app.post_range("P", from, from + 550).await;
    }
    let moved = app
        .patch("/series/P", &json!({"next": 2_301, "reason": "skip"}))
        .await;
    assert_eq!(moved.status, StatusCode::OK);
    app.post_range("P", 2_200, 2_210).await;
    let whole = app.get("/series/P/audit").await.body;
    assert_eq!(
        (whole["complete"].as_bool(), whole["orders"].as_u64()),
        (Some(true), Some(2_210))
    );

    // The same audit in parts, each stopped after its first page.
    let service = OrderService::new(app.store.clone());
    let series = SeriesId::parse("P").unwrap();
    let period = service.period_of(&series, None).await.unwrap();
    let (mut from, mut parts, mut gaps) = (None, 0, Vec::new());
    let last = loop {
        parts += 1;
        let scope = AuditScope {
            from,
            until: Some(Instant::now()),
            ..AuditScope::default()
        };
        let part = service
            .audit_period(period.clone(), scope, &|_| {})
            .await
            .unwrap();
        gaps.extend(part.report.gaps.iter().map(|g| (g.from, g.to)));
        match part.resume {
            Some(state) => from = Some(state),
            None => break part.report,
        }
    };
    assert_eq!(parts, 3);
    assert_eq!(last.orders, 2_210);
    assert_eq!(gaps, [(2_201, 2_300)]);
    let chain = last.chain.unwrap();
    assert_eq!((chain.links, chain.first_break), (2_211, None));
    assert_eq!(
        json!(chain.recomputed_head),
        whole["chain"]["recomputed_head"]
    );

    // Through the API: a cursor goes on; one the API did not give is refused.
    let progress = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = progress.clone();
    let first = service
        .audit_period(
            period.clone(),
            AuditScope {
                until: Some(Instant::now()),
                ..AuditScope::default()
            },
            &move |n| seen.store(n, std::sync::atomic::Ordering::Relaxed),
        )
        .await
        .unwrap();
    assert_eq!(progress.load(std::sync::atomic::Ordering::Relaxed), 1_000);
    let cursor = audit_page_token(&series, &period.1, &first.resume.unwrap());
    let rest = app
        .get(&format!("/series/P/audit?cursor={cursor}"))
        .await
        .body;
    assert_eq!(rest["complete"], true, "{rest}");
    assert_eq!(rest["orders"], 2_210);
    assert_eq!(rest["chain"]["intact"], true);
    assert_eq!(rest["next_cursor"], serde_json::Value::Null);
    let bad = app.get("/series/P/audit?cursor=abc").await;
    assert_problem(&bad, StatusCode::BAD_REQUEST, "invalid_cursor");
}

/// Orders with large data end a page by its weight, well before `limit`: a page must fit
/// Lambda's response payload, and the cursor leads to the rest.
#[tokio::test]
async fn a_page_of_orders_with_large_data_ends_by_weight_and_its_cursor_goes_on() {
    const ORDERS: usize = 200;
    let app = spawn_app().await;
    define(&app, "H", json!({"format": "H{seq:4}", "reset": "never"})).await;
    let data = json!({"notes": "x".repeat(15 * 1024)});
    for chunk in 0..2 {
        let orders: Vec<_> = (0..ORDERS / 2)
            .map(|i| json!({"external_ref": format!("r{chunk}-{i}"), "data": data}))
            .collect();
        let batch = json!({"series": "H", "source": "erp", "orders": orders});
        let reply = app.post("/orders/batch", &batch).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    let mut listed = 0;
    let mut pages = 0;
    let mut path = "/series/H/orders?limit=1000".to_owned();
    loop {
        let page = app.get(&path).await;
        assert_eq!(page.status, StatusCode::OK);
        let bytes = page.body.to_string().len();
        assert!(
            bytes <= tally::limits::MAX_PAGE_BYTES + 32 * 1024,
            "{bytes} bytes"
        );
        listed += page.body["orders"].as_array().unwrap().len();
        pages += 1;
        match page.body["next_cursor"].as_str() {
            Some(cursor) => path = format!("/series/H/orders?limit=1000&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(listed, ORDERS);
    assert!(pages >= 2, "one page of {ORDERS} orders of 15 KiB");
}

/// An audit part also ends once it lists `most_listed` gaps and credit notes, after the
/// page that reached it: its answer stays small whatever the period holds.
#[tokio::test]
async fn an_audit_part_ends_once_its_lists_are_full() {
    let app = spawn_app().await;
    define(&app, "Q", json!({"format": "Q{seq:5}", "reset": "never"})).await;
    app.post_range("Q", 0, 500).await;
    let moved = app
        .patch("/series/Q", &json!({"next": 601, "reason": "skip"}))
        .await;
    assert_eq!(moved.status, StatusCode::OK);
    app.post_range("Q", 500, 1_100).await;
    let service = OrderService::new(app.store.clone());
    let series = SeriesId::parse("Q").unwrap();
    let period = service.period_of(&series, None).await.unwrap();
    let scope = |most_listed| AuditScope {
        most_listed,
        ..AuditScope::default()
    };
    let whole = service
        .audit_period(period.clone(), scope(None), &|_| {})
        .await
        .unwrap();
    assert!(whole.resume.is_none());
    let first = service
        .audit_period(period.clone(), scope(Some(1)), &|_| {})
        .await
        .unwrap();
    assert_eq!(first.report.gaps.len(), 1);
    let rest = AuditScope {
        from: Some(first.resume.expect("a part that ended with its list full")),
        ..scope(Some(1))
    };
    let rest = service.audit_period(period, rest, &|_| {}).await.unwrap();
    assert!(rest.resume.is_none());
    assert_eq!(rest.report.orders, 1_100);
}

/// A cursor names a place by counter alone: on another series, another period or the other
/// route it would read as a place there (an audit answering `complete` with the counts it
/// carries), so each is refused.
#[tokio::test]
async fn a_cursor_is_refused_on_another_series_another_period_and_the_other_route() {
    let app = spawn_app().await;
    for id in ["D", "E"] {
        let format = format!("{id}{{yyyy}}{{mm}}{{dd}}-{{seq:3}}");
        define(&app, id, json!({"format": format, "reset": "daily"})).await;
        app.post_range(id, 0, 3).await;
    }
    let first = app.get("/series/D/orders?limit=1").await.body;
    let listing = first["next_cursor"].as_str().unwrap();
    // The state an audit of D's period starts from, as a token of that period.
    let service = OrderService::new(app.store.clone());
    let (series, period) = service
        .period_of(&SeriesId::parse("D").unwrap(), None)
        .await
        .unwrap();
    assert_eq!(first["period"], period.as_str());
    let start = AuditState {
        expected: series.definition.start,
        orders: 0,
        voided: 0,
        links: 0,
        previous: GENESIS,
        broken_at: None,
    };
    let audit = audit_page_token(&series.series_id, &period, &start);
    let next = app
        .get(&format!("/series/D/orders?limit=1&cursor={listing}"))
        .await;
    let second = next.body["orders"][0]["order_number"].as_str().unwrap();
    assert!(second.ends_with("-002"), "{}", next.body);
    let whole = app.get(&format!("/series/D/audit?cursor={audit}")).await;
    assert_eq!(
        (whole.status, &whole.body["orders"]),
        (StatusCode::OK, &json!(3)),
        "{}",
        whole.body
    );
    let other_day = ["2026-01-01", "2026-01-02"]
        .into_iter()
        .find(|day| *day != period.as_str())
        .unwrap();
    for path in [
        format!("/series/E/orders?limit=1&cursor={listing}"),
        format!("/series/D/orders?limit=1&period={other_day}&cursor={listing}"),
        format!("/series/D/audit?cursor={listing}"),
        format!("/series/E/audit?cursor={audit}"),
        format!("/series/D/audit?period={other_day}&cursor={audit}"),
        format!("/series/D/orders?cursor={audit}"),
    ] {
        let reply = app.get(&path).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{path}: {}",
            reply.body
        );
        assert_problem(&reply, StatusCode::BAD_REQUEST, "invalid_cursor");
    }
}

fn utc(day: i8, hour: i8, minute: i8) -> Timestamp {
    jiff::tz::Offset::UTC
        .to_timestamp(jiff::civil::date(2026, 11, day).at(hour, minute, 0, 0))
        .unwrap()
}

/// Paging "the current period" of a daily series past midnight: the next cursor is still
/// the old period's, and read in the new one it would skip that one's first orders.
#[tokio::test]
async fn a_cursor_of_the_current_period_is_refused_once_midnight_moves_it_on() {
    let (store, _table) = fresh_store(None).await;
    let now = Arc::new(Mutex::new(utc(29, 23, 59)));
    let clock = now.clone();
    let orders = OrderService::with_clock(store.clone(), Arc::new(move || *clock.lock().unwrap()));
    let router = api::router(AppState {
        orders: Arc::new(orders),
        request_timeout: Duration::from_secs(120),
        ..AppState::new(store)
    });
    let series = json!({"format": "N{yyyy}{mm}{dd}-{seq:3}", "reset": "daily"});
    assert_eq!(
        put_json(&router, "/series/N", &series).await.status,
        StatusCode::CREATED
    );
    let post = |reference: &'static str| {
        let order = json!({"series": "N", "source": "shop", "external_ref": reference});
        let router = router.clone();
        async move {
            let reply = post_json(&router, "/orders", &order).await;
            assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        }
    };
    post("late-1").await;
    post("late-2").await;
    let first = get(&router, "/series/N/orders?limit=1").await.body;
    assert_eq!(first["period"], "2026-11-29");
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    *now.lock().unwrap() = utc(30, 0, 1);
    post("early-1").await;
    post("early-2").await;
    let moved_on = get(
        &router,
        &format!("/series/N/orders?limit=1&cursor={cursor}"),
    )
    .await;
    assert_problem(&moved_on, StatusCode::BAD_REQUEST, "invalid_cursor");
    // Named, the old period pages on.
    let named = format!("/series/N/orders?limit=1&period=2026-11-29&cursor={cursor}");
    let rest = get(&router, &named).await.body;
    assert_eq!(rest["orders"][0]["external_ref"], "late-2", "{rest}");
}
