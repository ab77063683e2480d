//! Token callers, the claim that names them, and who reads the journal.

use super::*;

#[tokio::test]
async fn a_token_caller_is_bound_like_an_iam_one_by_its_issuer_and_subject() {
    let (router, _store, _table) = bound_router().await;
    let series = json!({"format": "W{seq:5}", "reset": "never"});
    let defined = send_as(&router, OPS, Method::PUT, "/series/W", Some(&series)).await;
    assert_eq!(defined.status, StatusCode::CREATED, "{}", defined.body);
    let shop_order = json!({"source": "shop", "external_ref": "web-10031"});
    let posted = post_as(&router, SHOP_TOKEN, "/series/W/orders", &shop_order).await;
    assert_eq!(posted.status, StatusCode::CREATED, "{}", posted.body);
    let erp_order = json!({"source": "erp-1", "external_ref": "PO-1"});
    let refused = post_as(&router, SHOP_TOKEN, "/series/W/orders", &erp_order).await;
    assert_problem(&refused, StatusCode::FORBIDDEN, "source_not_allowed");
    let erp = post_as(&router, ERP, "/series/W/orders", &erp_order).await;
    assert_eq!(erp.status, StatusCode::CREATED, "{}", erp.body);

    // The event file itself, through the router: the token's caller reads its order.
    let read = invoke(&router, SHOP_TOKEN).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body, posted.body);
    let foreign = get_as(&router, SHOP_TOKEN, "/sources/erp-1/orders/PO-1").await;
    assert_problem(&foreign, StatusCode::FORBIDDEN, "source_not_allowed");

    // Another subject of the issuer, the same subject from another issuer, or a token
    // without the bound claim: a caller bound to nothing.
    let path = "/sources/shop/orders/web-10031";
    for (claim, value) in [
        ("sub", Some("someone-else")),
        ("iss", Some("https://evil.example.com/")),
        ("sub", None),
    ] {
        let reply = get_with_claim(&router, claim, value, path).await;
        assert_problem(&reply, StatusCode::FORBIDDEN, "source_not_allowed");
        assert!(!reply.raw.contains("W00001"), "{}", reply.raw);
    }
    // A token without an issuer is no identity: the bindings fail closed.
    let reply = get_with_claim(&router, "iss", None, path).await;
    assert_problem(&reply, StatusCode::FORBIDDEN, "identity_required");
}

#[tokio::test]
async fn token_callers_are_named_by_the_claim_the_deployment_chooses() {
    let (store, _table) = fresh_store(None).await;
    let mut state = AppState::new(store.clone());
    state.sources = Arc::new(
        SourceBindings::parse("jwt:https://auth.example.com/#machine-7=shop")
            .unwrap()
            .with_token_claim(Some("client_id"))
            .unwrap(),
    );
    let router = api::orders_router(state);
    let series = json!({"format": "C{seq:5}", "reset": "never"});
    // Defined where no caller is bound (the local server on the same table).
    let unbound = api::orders_router(AppState::new(store));
    let defined = put_json(&unbound, "/series/C", &series).await;
    assert_eq!(defined.status, StatusCode::CREATED, "{}", defined.body);
    let order = json!({"source": "shop", "external_ref": "web-10031"});
    // The event's `sub` and `client_id` name `shop-backend`, bound to nothing here.
    let refused = post_as(&router, SHOP_TOKEN, "/series/C/orders", &order).await;
    assert_problem(&refused, StatusCode::FORBIDDEN, "source_not_allowed");
    let path = "/sources/shop/orders/web-10031";
    let unbound = get_with_claim(&router, "sub", Some("machine-7"), path).await;
    assert_problem(&unbound, StatusCode::FORBIDDEN, "source_not_allowed");
    let bound = get_with_claim(&router, "client_id", Some("machine-7"), path).await;
    assert_problem(&bound, StatusCode::NOT_FOUND, "order_not_found");
}

/// A GET as the token caller of [`SHOP_TOKEN`], with its `claim` set to `value` (removed
/// with `None`).
async fn get_with_claim(
    router: &axum::Router,
    claim: &str,
    value: Option<&str>,
    path: &str,
) -> Reply {
    let file = format!("{}/events/{SHOP_TOKEN}", env!("CARGO_MANIFEST_DIR"));
    let event = lambda_http::request::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut context = event.request_context();
    let RequestContext::ApiGatewayV2(v2) = &mut context else {
        panic!("{SHOP_TOKEN} is not an HTTP API event");
    };
    let claims = &mut v2.authorizer.as_mut().unwrap().jwt.as_mut().unwrap().claims;
    match value {
        Some(value) => claims.insert(claim.to_owned(), value.to_owned()),
        None => claims.remove(claim),
    };
    let request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .body(Body::empty())
        .unwrap()
        .with_request_context(context);
    send(router, request).await
}

/// The journal names every order voided, of every source: where callers are bound, only a
/// caller bound to every source reads it, whole; the ERP's role, bound to `erp-1`, reads
/// none of it, so not the void of the web shop's invoice either.
#[tokio::test]
async fn only_a_caller_bound_to_every_source_reads_the_journal() {
    let (store, _table) = fresh_store(None).await;
    let state = |bindings: &str| {
        let mut state = AppState::new(store.clone());
        state.sources = Arc::new(SourceBindings::parse(bindings).unwrap());
        api::router(state)
    };
    let bound = state(BINDINGS);
    let series = json!({"format": "UA{yy}{seq:4}", "reset": "yearly"});
    let defined = send_as(&bound, OPS, Method::PUT, "/series/UA", Some(&series)).await;
    assert_eq!(defined.status, StatusCode::CREATED, "{}", defined.body);
    let invoice = json!({"source": "shop", "external_ref": "s1"});
    let posted = post_as(&bound, SHOP, "/series/UA/orders", &invoice).await;
    let number = posted.body["order_number"].as_str().unwrap().to_owned();
    assert_eq!(void_as(&bound, SHOP, &number).await.status, StatusCode::OK);

    for caller in [ERP, SHOP, SHOP_TOKEN] {
        let page = get_as(&bound, caller, "/journal").await;
        assert_problem(&page, StatusCode::FORBIDDEN, "journal_not_allowed");
        assert!(!page.raw.contains(&number), "{}", page.raw);
    }
    let unidentified = get(&bound, "/journal").await;
    assert_problem(&unidentified, StatusCode::FORBIDDEN, "identity_required");

    // The same table where the ERP's role is an operator's, bound to every source.
    let operator = state(
        "arn:aws:iam::123456789012:role/erp-connector=*;\
         arn:aws:iam::123456789012:role/web-shop=shop",
    );
    let page = get_as(&operator, ERP, "/journal").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let targets: Vec<&str> = page.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        ["series/UA".to_owned(), format!("series/UA/order/{number}")]
    );
    let shop = get_as(&operator, SHOP, "/journal").await;
    assert_problem(&shop, StatusCode::FORBIDDEN, "journal_not_allowed");
}
