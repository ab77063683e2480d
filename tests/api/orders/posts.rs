//! Orders posted one by one and in batches: the next number, the same number for a
//! repost, each item reported, a fast batch at one counter update.

use super::*;

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
