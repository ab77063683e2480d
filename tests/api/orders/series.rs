//! Series: defined once, refused when invalid, continued from a legacy start, restarted
//! by their reset.

use super::*;

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

/// The status names the number stored at the counter: a fast series' counter ends a
/// block whose numbers may not be issued yet, and a date token is the order's date, not
/// the day the status is read.
#[tokio::test]
async fn the_status_names_the_number_stored_at_the_counter_or_none() {
    let (store, _table) = fresh_store(None).await;
    let day = |d: i8| {
        jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(2026, 6, d).at(12, 0, 0, 0))
            .unwrap()
    };
    let now = Arc::new(std::sync::Mutex::new(day(1)));
    let clock_now = now.clone();
    let service = OrderService::with_clock(store, Arc::new(move || *clock_now.lock().unwrap()));
    let dated = SeriesId::parse("DAY").unwrap();
    let definition = SeriesDefinition::new("D{yy}{mm}{dd}-{seq:3}", Reset::Yearly, false, 1);
    service
        .define_series(&dated, definition.unwrap(), &Operator::local())
        .await
        .unwrap();
    let source = SourceId::parse("erp").unwrap();
    let post = async |reference: &str| {
        let inputs = vec![order_input(reference)];
        let outcomes = service
            .create_orders(&dated, &source, inputs, &SourceAccess::All)
            .await
            .unwrap();
        number(&outcomes[0])
    };
    assert_eq!(post("a").await, "D260601-001");
    // Run dry at once, the process reserves two: 2 is issued, 3 waits in its block.
    assert_eq!(post("b").await, "D260601-002");
    let status = service.series_status(&dated).await.unwrap();
    assert_eq!((status.last_counter, status.last_number), (Some(3), None));
    assert_eq!(post("c").await, "D260601-003");
    *now.lock().unwrap() = day(2);
    let status = service.series_status(&dated).await.unwrap();
    assert_eq!(status.last_number.as_deref(), Some("D260601-003"));
}
