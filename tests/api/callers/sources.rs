//! Callers bound to sources: what they may post, read, correct and audit.

use super::*;

#[tokio::test]
async fn a_foreign_caller_is_refused_another_sources_post_repost_and_read() {
    let (router, _store, _table) = bound_router().await;
    assert_eq!(
        invoke(&router, "put-series.json").await.status,
        StatusCode::CREATED
    );
    let order = invoke(&router, "create-order.json").await;
    assert_eq!(order.status, StatusCode::CREATED, "{}", order.body);
    let by_path = invoke(&router, "create-series-order.json").await;
    assert_eq!(by_path.status, StatusCode::CREATED, "{}", by_path.body);
    assert_eq!(by_path.body["series"], "UABC");
    let batch = invoke(&router, "create-series-order-batch.json").await;
    let created: Vec<&str> = batch.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(created, ["created", "created"], "{}", batch.body);

    // The web shop's role posts, reposts and reads as erp-1: refused each time.
    let post = invoke(&router, "create-series-order-foreign.json").await;
    assert_problem(&post, StatusCode::FORBIDDEN, "source_not_allowed");
    let repost = invoke(&router, "create-order-foreign.json").await;
    assert_problem(&repost, StatusCode::FORBIDDEN, "source_not_allowed");
    let read = invoke(&router, "get-order-by-ref-foreign.json").await;
    assert_problem(&read, StatusCode::FORBIDDEN, "source_not_allowed");
    assert!(!read.raw.contains("C-1042"), "{}", read.raw);
    // The ERP's own role reads its order.
    let own = invoke(&router, "get-order-by-ref.json").await;
    assert_eq!(own.body, order.body);

    // By number and in listings, erp-1's orders do not exist for the web shop.
    let number = order.body["order_number"].as_str().unwrap();
    for path in [
        format!("/orders/{number}"),
        format!("/series/UABC/orders/{number}"),
    ] {
        let reply = get_as(&router, SHOP, &path).await;
        assert_problem(&reply, StatusCode::NOT_FOUND, "order_not_found");
        let mine = get_as(&router, ERP, &path).await;
        assert_eq!(mine.status, StatusCode::OK, "{path}: {}", mine.body);
    }
    let listed = get_as(&router, SHOP, "/series/UABC/orders").await;
    assert_eq!(
        listed.body["orders"],
        serde_json::json!([]),
        "{}",
        listed.body
    );
    let listed = get_as(&router, ERP, "/series/UABC/orders").await;
    assert_eq!(listed.body["orders"].as_array().unwrap().len(), 4);
    // Nothing was written for the web shop.
    let repost_again = invoke(&router, "create-order-foreign.json").await;
    assert_eq!(repost_again.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn without_bindings_every_caller_acts_as_every_source() {
    let (store, _table) = fresh_store(None).await;
    let router = api::orders_router(AppState::new(store));
    assert_eq!(
        invoke(&router, "put-series.json").await.status,
        StatusCode::CREATED
    );
    let post = invoke(&router, "create-series-order-foreign.json").await;
    assert_eq!(post.status, StatusCode::CREATED, "{}", post.body);
    // The local server's requests carry no IAM identity.
    let series = json!({"format": "L{seq:3}", "reset": "never"});
    let reply = put_json(&router, "/series/L", &series).await;
    assert_eq!(reply.status, StatusCode::CREATED);
    let order = json!({"source": "anyone", "external_ref": "x"});
    let posted = post_json(&router, "/series/L/orders", &order).await;
    assert_eq!(posted.status, StatusCode::CREATED, "{}", posted.body);
}

#[tokio::test]
async fn with_bindings_a_request_without_an_identity_is_refused_on_every_order_route() {
    let (router, store, _table) = bound_router().await;
    let series = json!({"format": "L{seq:3}", "reset": "never"});
    let defined = send_as(&router, OPS, Method::PUT, "/series/L", Some(&series)).await;
    assert_eq!(defined.status, StatusCode::CREATED, "{}", defined.body);
    let order = json!({"source": "erp-1", "external_ref": "x"});
    let numbered = post_as(&router, ERP, "/series/L/orders", &order).await;
    assert_eq!(numbered.status, StatusCode::CREATED, "{}", numbered.body);
    let number = numbered.body["order_number"].as_str().unwrap().to_owned();

    // A route left without IAM auth, or a direct invocation: no identity, no source.
    let anyone = json!({"source": "anyone", "external_ref": "y"});
    let batch = json!({"source": "erp-1", "orders": [{"external_ref": "z"}]});
    for reply in [
        put_json(&router, "/series/M", &series).await,
        patch(&router, "/series/L", &json!({"next": 9, "reason": "skip"})).await,
        post_json(&router, "/series/L/orders", &anyone).await,
        post_json(&router, "/series/L/orders", &order).await,
        post_json(&router, "/series/L/orders/batch", &batch).await,
        post_json(
            &router,
            "/orders",
            &json!({"series": "L", "source": "erp-1", "external_ref": "w"}),
        )
        .await,
        post_json(
            &router,
            &format!("/series/L/orders/{number}/void"),
            &json!({"reason": "x"}),
        )
        .await,
        get(&router, "/series/L").await,
        get(&router, "/series/L/audit").await,
        get(&router, "/series/L/orders").await,
        get(&router, &format!("/orders/{number}")).await,
        get(&router, "/sources/erp-1/orders/x").await,
        // Refused before its path is read.
        get(&router, "/series/not%20an%20id").await,
    ] {
        assert_problem(&reply, StatusCode::FORBIDDEN, "identity_required");
        assert!(!reply.raw.contains(&number), "{}", reply.raw);
    }
    // Nothing changed: one series, one order, not void.
    assert_eq!(of_kind(&scan(&store).await, "order").len(), 1);
    let read = get_as(&router, ERP, &format!("/orders/{number}")).await;
    assert_eq!(read.body["status"], "active", "{}", read.body);
    assert_eq!(
        get_as(&router, ERP, "/series/M").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_bound_caller_corrects_reads_and_audits_only_invoices_of_its_sources() {
    let (router, _store, _table) = bound_router().await;
    let invoices = json!({"format": "UA{yy}{seq:4}", "reset": "yearly"});
    let notes = json!({"format": "NC{yy}{seq:4}", "reset": "yearly", "credits": "UA"});
    for (id, body) in [("UA", &invoices), ("NC", &notes)] {
        let reply = send_as(
            &router,
            OPS,
            Method::PUT,
            &format!("/series/{id}"),
            Some(body),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    }
    let invoice =
        |source: &str, reference: &str| json!({"source": source, "external_ref": reference});
    let mut numbers = Vec::new();
    for reference in ["i1", "i2", "i3"] {
        let reply = post_as(
            &router,
            ERP,
            "/series/UA/orders",
            &invoice("erp-1", reference),
        )
        .await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        numbers.push(reply.body["order_number"].as_str().unwrap().to_owned());
    }
    let [live, voided, own] = [&numbers[0], &numbers[1], &numbers[2]];
    let void = void_as(&router, ERP, voided).await;
    assert_eq!(void.status, StatusCode::OK, "{}", void.body);
    let shop_invoice = post_as(&router, SHOP, "/series/UA/orders", &invoice("shop", "s1")).await;
    let shop_number = shop_invoice.body["order_number"]
        .as_str()
        .unwrap()
        .to_owned();

    // The web shop corrects erp-1's invoices as it would invoices that do not exist: a
    // live one, a void one and a missing one answer alike, and nothing is numbered.
    let credit = |reference: &str, corrects: &str| json!({"source": "shop", "external_ref": reference, "corrects": corrects});
    let missing = "UA269999";
    let mut details = Vec::new();
    for (reference, corrects) in [
        ("c1", live.as_str()),
        ("c2", voided.as_str()),
        ("c3", missing),
    ] {
        let reply = post_as(
            &router,
            SHOP,
            "/series/NC/orders",
            &credit(reference, corrects),
        )
        .await;
        assert_problem(&reply, StatusCode::CONFLICT, "invoice_not_found");
        details.push(
            reply.body["detail"]
                .as_str()
                .unwrap()
                .replace(corrects, "N"),
        );
    }
    assert!(details.iter().all(|d| *d == details[0]), "{details:?}");
    let batch = json!({"source": "shop", "orders": [
        {"external_ref": "b1", "corrects": live},
        {"external_ref": "b2", "corrects": voided},
        {"external_ref": "b3", "corrects": shop_number},
    ]});
    let reply = post_as(&router, SHOP, "/series/NC/orders/batch", &batch).await;
    let codes: Vec<&Value> = reply.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["code"])
        .collect();
    assert_eq!(
        codes,
        [
            &json!("invoice_not_found"),
            &json!("invoice_not_found"),
            &Value::Null
        ],
        "{}",
        reply.body
    );

    // erp-1 still voids its invoice, and credits its own.
    let void = void_as(&router, ERP, live).await;
    assert_eq!(void.status, StatusCode::OK, "{}", void.body);
    let own_note = json!({"source": "erp-1", "external_ref": "c9", "corrects": own});
    let noted = post_as(&router, ERP, "/series/NC/orders", &own_note).await;
    assert_eq!(noted.status, StatusCode::CREATED, "{}", noted.body);

    // The audit shows each caller the credited invoices of its own sources; counts stay.
    let erp_audit = get_as(&router, ERP, "/series/UA/audit").await.body;
    let shop_audit = get_as(&router, SHOP, "/series/UA/audit").await.body;
    let credited = |audit: &Value| -> Vec<String> {
        audit["credited"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["order_number"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(credited(&erp_audit), [own.as_str()], "{erp_audit}");
    assert_eq!(
        credited(&shop_audit),
        [shop_number.as_str()],
        "{shop_audit}"
    );
    assert_eq!(
        (&erp_audit["orders"], &shop_audit["orders"]),
        (&json!(4), &json!(4))
    );
    assert!(
        !shop_audit.to_string().contains(own.as_str()),
        "{shop_audit}"
    );

    // A series read shows a bound caller the counter, not the last number.
    for caller in [ERP, SHOP] {
        let series = get_as(&router, caller, "/series/UA").await.body;
        assert_eq!(series["last_counter"], 4, "{series}");
        assert!(series.get("last_number").is_none(), "{series}");
    }
}

#[tokio::test]
async fn a_bound_callers_listing_among_many_foreign_orders_answers_short_pages_with_a_cursor() {
    let (router, _store, _table) = bound_router().await;
    let series = invoke(&router, "put-series.json").await;
    assert_eq!(series.status, StatusCode::CREATED);
    let orders: Vec<Value> = (0..300)
        .map(|i| json!({"external_ref": format!("PO-{i}")}))
        .collect();
    let batch = json!({"source": "erp-1", "orders": orders});
    let posted = post_as(&router, ERP, "/series/UABC/orders/batch", &batch).await;
    assert_eq!(posted.status, StatusCode::OK, "{}", posted.body);
    let own = json!({"source": "shop", "external_ref": "S-1"});
    let last = post_as(&router, SHOP, "/series/UABC/orders", &own).await;
    assert_eq!(last.status, StatusCode::CREATED, "{}", last.body);
    // The web shop's one order follows 300 of the ERP's: one page does not read them all.
    let mut path = "/series/UABC/orders?limit=1".to_owned();
    let mut pages = Vec::new();
    loop {
        let page = get_as(&router, SHOP, &path).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        pages.push(page.body["orders"].as_array().unwrap().len());
        match page.body["next_cursor"].as_str() {
            Some(cursor) => path = format!("/series/UABC/orders?limit=1&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(pages[0], 0, "{pages:?}");
    assert_eq!(pages.iter().sum::<usize>(), 1, "{pages:?}");
}

/// A series numbers every source's orders: a caller bound to some sources neither defines
/// nor changes one (a counter moved forward cannot go back), and the operators' role,
/// bound to every source, does both.
#[tokio::test]
async fn only_a_caller_bound_to_every_source_defines_or_changes_a_series() {
    let (router, _store, _table) = bound_router().await;
    let series = json!({"format": "S{seq:4}", "reset": "never"});
    let moved = json!({"next": 900, "reason": "skip"});
    for caller in [ERP, SHOP, SHOP_TOKEN] {
        let define = send_as(&router, caller, Method::PUT, "/series/S", Some(&series)).await;
        assert_problem(&define, StatusCode::FORBIDDEN, "series_not_allowed");
    }
    let defined = send_as(&router, OPS, Method::PUT, "/series/S", Some(&series)).await;
    assert_eq!(defined.status, StatusCode::CREATED, "{}", defined.body);
    for caller in [ERP, SHOP, SHOP_TOKEN] {
        let change = send_as(&router, caller, Method::PATCH, "/series/S", Some(&moved)).await;
        assert_problem(&change, StatusCode::FORBIDDEN, "series_not_allowed");
    }
    let read = get_as(&router, ERP, "/series/S").await;
    assert_eq!(
        read.body["last_counter"],
        serde_json::Value::Null,
        "{}",
        read.body
    );
    let change = send_as(&router, OPS, Method::PATCH, "/series/S", Some(&moved)).await;
    assert_eq!(change.status, StatusCode::OK, "{}", change.body);
}
