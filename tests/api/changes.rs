//! Voids, moves and format changes: numbers keep their place, gaps are declared, and a
//! format applies to the periods that have not started.

use std::sync::{Arc, Mutex};
use tally_domain::journal::Operator;

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::json;
use tally::orders::{ItemOutcome, OrderError, OrderService, SeriesChange};
use tally_domain::access::SourceAccess;
use tally_domain::ids::{SeriesId, SourceId};
use tally_domain::order::Reason;
use tally_domain::series::{Reset, SeriesDefinition};

use crate::helpers::assert_problem;
use crate::helpers::{TestApp, fresh_store, order_input, spawn_app};
use crate::ledger::define;

/// Every page of a period's listing: (orders' counters, moves' (from, to)).
async fn list_all(app: &TestApp, series: &str, limit: usize) -> (Vec<u64>, Vec<(u64, u64)>, usize) {
    let mut counters = Vec::new();
    let mut moves = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let mut path = format!("/series/{series}/orders?period=all&limit={limit}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let page = app.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        pages += 1;
        for o in page.body["orders"].as_array().unwrap() {
            counters.push(o["counter"].as_u64().unwrap());
        }
        for m in page.body["moves"].as_array().unwrap() {
            moves.push((m["from"].as_u64().unwrap(), m["to"].as_u64().unwrap()));
        }
        match page.body["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (counters, moves, pages),
        }
    }
}

#[tokio::test]
async fn a_void_keeps_its_number_and_a_repost_answers_the_voided_order() {
    let app = spawn_app().await;
    define(&app, "V", json!({"format": "V-{seq:4}", "reset": "never"})).await;
    let numbers = app.post_range("V", 0, 3).await;
    assert_eq!(numbers, ["V-0001", "V-0002", "V-0003"]);
    let void = json!({"reason": "customer cancelled"});
    let voided = app.post("/series/V/orders/V-0002/void", &void).await;
    assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    assert_eq!(voided.body["status"], "void");
    assert_eq!(voided.body["void_reason"], "customer cancelled");
    // Voiding again with the same reason answers the same void; another reason conflicts.
    let again = app.post("/series/V/orders/V-0002/void", &void).await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(again.body["voided_at"], voided.body["voided_at"]);
    let other = app
        .post("/series/V/orders/V-0002/void", &json!({"reason": "typo"}))
        .await;
    assert_problem(&other, StatusCode::CONFLICT, "already_voided");
    assert_eq!(other.body["reason"], "customer cancelled");
    // Posting its reference again answers the voided order, never a new number.
    let repost = app
        .post(
            "/orders",
            &json!({"series": "V", "source": "src-V", "external_ref": "r1", "data": {"i": 1}}),
        )
        .await;
    assert_eq!(repost.status, StatusCode::OK, "{}", repost.body);
    assert_eq!(
        (
            repost.body["order_number"].as_str(),
            repost.body["status"].as_str()
        ),
        (Some("V-0002"), Some("void"))
    );
    let batch = app
        .post("/orders/batch", &json!({"series": "V", "source": "src-V", "orders": [{"external_ref": "r1", "data": {"i": 1}}]}))
        .await;
    assert_eq!(batch.body["results"][0]["voided"], true);
    assert_eq!(app.post_range("V", 3, 4).await, ["V-0004"]);
    assert_eq!(
        app.get("/sources/src-V/orders/r1").await.body["status"],
        "void"
    );
    assert_eq!(app.get("/orders/V-0002").await.body["status"], "void");
    // Listing and audit show the void; the chain and the numbering are whole.
    let listed = app.get("/series/V/orders?period=all").await;
    let statuses: Vec<&str> = listed.body["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["active", "void", "active", "active"]);
    let audit = app.get("/series/V/audit?period=all").await;
    assert_eq!(audit.status, StatusCode::OK, "{}", audit.body);
    assert_eq!(
        (audit.body["orders"].as_u64(), audit.body["voided"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(audit.body["gaps"], json!([]));
    assert_eq!(audit.body["chain"]["intact"], true);
    // Errors.
    assert_problem(
        &app.post("/series/V/orders/V-0009/void", &void).await,
        StatusCode::NOT_FOUND,
        "order_not_found",
    );
    assert_problem(
        &app.post("/series/V/orders/V-0001/void", &json!({"reason": ""}))
            .await,
        StatusCode::BAD_REQUEST,
        "invalid_reason",
    );
    assert_problem(
        &app.post("/series/none/orders/V-0001/void", &void).await,
        StatusCode::NOT_FOUND,
        "series_not_found",
    );
}

#[tokio::test]
async fn moves_go_forward_only_and_are_declared_gaps_in_listing_and_audit() {
    let app = spawn_app().await;
    define(&app, "M", json!({"format": "M{seq:5}", "reset": "never"})).await;
    define(
        &app,
        "MF",
        json!({"format": "N{seq:5}", "reset": "never", "gapless": false}),
    )
    .await;
    for series in ["M", "MF"] {
        app.post_range(series, 0, 3).await;
        let moved = app
            .patch(
                &format!("/series/{series}"),
                &json!({"next": 10, "reason": "continue the paper ledger"}),
            )
            .await;
        assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
        assert_eq!(moved.body["last_counter"], 9);
        // The same move again is answered as done; a move backwards is refused.
        let again = app
            .patch(
                &format!("/series/{series}"),
                &json!({"next": 10, "reason": "continue the paper ledger", "period": "all"}),
            )
            .await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.body);
        let back = app
            .patch(
                &format!("/series/{series}"),
                &json!({"next": 5, "reason": "oops"}),
            )
            .await;
        assert_problem(&back, StatusCode::CONFLICT, "move_not_forward");
        assert_eq!(back.body["next"], 10);
        app.post_range(series, 3, 5).await;
        let (counters, moves, _) = list_all(&app, series, 100).await;
        assert_eq!(counters, [1, 2, 3, 10, 11]);
        assert_eq!(moves, [(4, 9)]);
        let audit = app.get(&format!("/series/{series}/audit?period=all")).await;
        let gaps = audit.body["gaps"].as_array().unwrap();
        assert_eq!(gaps.len(), 1, "{}", audit.body);
        assert_eq!(
            (
                &gaps[0]["from"],
                &gaps[0]["to"],
                &gaps[0]["cause"],
                &gaps[0]["reason"]
            ),
            (
                &json!(4),
                &json!(9),
                &json!("declared_move"),
                &json!("continue the paper ledger")
            )
        );
        assert_eq!(audit.body["last_counter"], 11);
    }
    // In the gapless series the move is a link of the chain.
    let audit = app.get("/series/M/audit?period=all").await;
    assert_eq!(
        (
            audit.body["chain"]["intact"].as_bool(),
            audit.body["chain"]["links"].as_u64()
        ),
        (Some(true), Some(6))
    );
    assert!(app.get("/series/MF/audit?period=all").await.body["chain"].is_null());
    let before = app.get("/series/M").await.body;
    // Errors.
    for (body, code) in [
        (json!({"next": 20}), "invalid_reason"),
        (json!({"reason": "why"}), "invalid_body"),
        (json!({}), "invalid_body"),
        (json!({"next": 0, "reason": "x"}), "invalid_next"),
        (
            json!({"next": 20, "reason": "x", "colour": 1}),
            "invalid_body",
        ),
        (json!({"format": "M{seq:0}"}), "invalid_format"),
        (json!({"period": "all"}), "invalid_body"),
        (
            json!({"next": 20, "reason": "x", "period": "2026"}),
            "invalid_period",
        ),
        // Two changes in one body: each is its own write, so neither is made.
        (
            json!({"format": "M-{seq:6}", "next": 90, "reason": "x"}),
            "invalid_body",
        ),
        (
            json!({"format": "M-{seq:6}", "validation_code": "AB"}),
            "invalid_body",
        ),
        (
            json!({"range_low_percent": 10, "next": 90, "reason": "x"}),
            "invalid_body",
        ),
    ] {
        assert_problem(
            &app.patch("/series/M", &body).await,
            StatusCode::BAD_REQUEST,
            code,
        );
    }
    // Nothing was written: the series reads as it did, counter and settings alike.
    assert_eq!(app.get("/series/M").await.body, before);
    assert_problem(
        &app.patch("/series/none", &json!({"next": 3, "reason": "x"}))
            .await,
        StatusCode::NOT_FOUND,
        "series_not_found",
    );
}

async fn number_one(service: &OrderService, series: &SeriesId, r: &str) -> String {
    match &service
        .create_orders(
            series,
            &SourceId::parse("erp").unwrap(),
            vec![order_input(r)],
            &SourceAccess::All,
        )
        .await
        .unwrap()[0]
    {
        ItemOutcome::Created(o) => o.order_number.clone(),
        other => panic!("{other:?}"),
    }
}

fn utc(y: i16, m: i8, d: i8) -> Timestamp {
    jiff::tz::Offset::UTC
        .to_timestamp(jiff::civil::date(y, m, d).at(12, 0, 0, 0))
        .unwrap()
}

#[tokio::test]
async fn a_format_change_applies_to_periods_that_have_not_started() {
    let (store, _table) = fresh_store(None).await;
    let now = Arc::new(Mutex::new(utc(2026, 6, 1)));
    let clock = now.clone();
    let service = OrderService::with_clock(store.clone(), Arc::new(move || *clock.lock().unwrap()));
    // Another process, which read the series before the change.
    let clock = now.clone();
    let stale = OrderService::with_clock(store, Arc::new(move || *clock.lock().unwrap()));
    let yearly = SeriesId::parse("FMT").unwrap();
    let definition = SeriesDefinition::new("F{yy}-{seq:3}", Reset::Yearly, true, 1).unwrap();
    service
        .define_series(&yearly, definition, &Operator::local())
        .await
        .unwrap();
    assert_eq!(number_one(&stale, &yearly, "a").await, "F26-001");
    let change = SeriesChange::Format("F{yyyy}/{seq:5}".into());
    let status = service
        .change_series(&yearly, change.clone(), &Operator::local())
        .await
        .unwrap();
    let versions: Vec<(u32, Option<String>)> = status
        .series
        .formats
        .iter()
        .map(|f| (f.version, f.from.as_ref().map(ToString::to_string)))
        .collect();
    assert_eq!(versions, [(1, None), (2, Some("2027".into()))]);
    // 2026 has numbers: it keeps its format, on both processes.
    assert_eq!(number_one(&service, &yearly, "b").await, "F26-002");
    assert_eq!(number_one(&stale, &yearly, "c").await, "F26-003");
    *now.lock().unwrap() = utc(2027, 1, 2);
    assert_eq!(number_one(&stale, &yearly, "d").await, "F2027/00001");
    // The change again changes nothing; numbers of both formats are found by their text.
    service
        .change_series(&yearly, change, &Operator::local())
        .await
        .unwrap();
    assert_eq!(
        service
            .find_in_series(&yearly, "F26-002", &SourceAccess::All)
            .await
            .unwrap()
            .external_ref
            .as_str(),
        "b"
    );
    assert_eq!(
        service
            .find_in_series(&yearly, "F2027/00001", &SourceAccess::All)
            .await
            .unwrap()
            .external_ref
            .as_str(),
        "d"
    );

    // A period without numbers takes the new format at once.
    let fresh = SeriesId::parse("FRESH").unwrap();
    let definition = SeriesDefinition::new("X{yy}{seq:3}", Reset::Yearly, true, 1).unwrap();
    service
        .define_series(&fresh, definition, &Operator::local())
        .await
        .unwrap();
    let change = SeriesChange::Format("Y{yy}{seq:3}".into());
    service
        .change_series(&fresh, change, &Operator::local())
        .await
        .unwrap();
    assert_eq!(number_one(&stale, &fresh, "e").await, "Y27001");

    // A series that never resets keeps the format it has numbers in.
    let never = SeriesId::parse("NEVER").unwrap();
    let definition = SeriesDefinition::new("Z{seq:3}", Reset::Never, true, 1).unwrap();
    service
        .define_series(&never, definition, &Operator::local())
        .await
        .unwrap();
    number_one(&service, &never, "f").await;
    let change = SeriesChange::Format("ZZ{seq:3}".into());
    assert!(matches!(
        service
            .change_series(&never, change, &Operator::local())
            .await,
        Err(tally::orders::OrderError::FormatInUse)
    ));
}

/// A move that names its period, repeated after that period ended (its answer lost at
/// the day's end), answers the move made in it: the new day keeps its counter and the
/// journal has one entry. A move named for an ended period that had none moves nothing.
#[tokio::test]
async fn a_move_repeated_after_its_period_ended_is_answered_not_made_again() {
    let (store, _table) = fresh_store(None).await;
    let at = |text: &str| text.parse::<Timestamp>().unwrap();
    let now = Arc::new(Mutex::new(at("2026-11-29T23:59:59.9Z")));
    let clock = now.clone();
    let service = OrderService::with_clock(store.clone(), Arc::new(move || *clock.lock().unwrap()));
    let daily = SeriesId::parse("DAY").unwrap();
    let definition = SeriesDefinition::new("D{yy}{mm}{dd}-{seq:4}", Reset::Daily, true, 1).unwrap();
    service
        .define_series(&daily, definition, &Operator::local())
        .await
        .unwrap();
    let move_to = |next: u64| SeriesChange::Move {
        next,
        reason: Reason::parse("paper invoices").unwrap(),
        period: Some("2026-11-29".into()),
    };
    let moved = service
        .change_series(&daily, move_to(500), &Operator::local())
        .await
        .unwrap();
    assert_eq!(moved.last_counter, Some(499));
    let journalled = store.journal_head().await.unwrap().last;
    *now.lock().unwrap() = at("2026-11-30T00:00:00.2Z");
    let repeated = service
        .change_series(&daily, move_to(500), &Operator::local())
        .await
        .unwrap();
    assert_eq!(
        (repeated.period.as_str(), repeated.last_counter),
        ("2026-11-30", None)
    );
    assert_eq!(store.journal_head().await.unwrap().last, journalled);
    assert_eq!(number_one(&service, &daily, "a").await, "D261130-0001");
    let refused = service
        .change_series(&daily, move_to(700), &Operator::local())
        .await;
    assert!(
        matches!(&refused, Err(OrderError::PeriodNotCurrent { current, .. }) if current.as_str() == "2026-11-30"),
        "{refused:?}"
    );
    assert_eq!(store.journal_head().await.unwrap().last, journalled);
}
