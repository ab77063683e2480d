//! Callers bound to their sources: behind API Gateway, the IAM identity of the request
//! context decides which sources a caller may post, repost and read as, and no route
//! shows it another source's orders or lets it correct them. Without bindings (the local
//! server) everything stays allowed; with bindings, a request without an identity is
//! refused.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use lambda_http::RequestExt;
use lambda_http::request::RequestContext;
use serde_json::{Value, json};
use tally::api::{self, AppState};
use tally::settings::SourceBindings;
use tally::store::Store;

use crate::events::invoke;
use crate::helpers::assert_problem;
use crate::helpers::{
    Reply, TestTable, fresh_store, get, of_kind, patch, post_json, put_json, scan, send,
};

const BINDINGS: &str = "arn:aws:iam::123456789012:role/erp-connector=erp-1;\
                        arn:aws:iam::123456789012:role/web-shop=shop;\
                        jwt:https://auth.example.com/#shop-backend=shop";

/// The role of the ERP connector, bound to `erp-1`, and that of the web shop, bound to
/// `shop`: event files whose request context carries each identity. A token of the shop's
/// backend (outside AWS), bound to `shop` too.
const ERP: &str = "get-order-by-ref.json";
const SHOP: &str = "get-order-by-ref-foreign.json";
const SHOP_TOKEN: &str = "get-order-by-ref-jwt.json";

/// A request as the caller of the event file `as_of` (its request context, so its
/// identity), with `body` as JSON when there is one.
async fn send_as(
    router: &axum::Router,
    as_of: &str,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Reply {
    let file = format!("{}/events/{as_of}", env!("CARGO_MANIFEST_DIR"));
    let event = lambda_http::request::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let context = event.request_context();
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.map_or_else(Body::empty, |body| Body::from(body.to_string())))
        .unwrap()
        .with_request_context(context);
    send(router, request).await
}

/// A GET as the caller of the event file `as_of`.
async fn get_as(router: &axum::Router, as_of: &str, path: &str) -> Reply {
    send_as(router, as_of, Method::GET, path, None).await
}

/// A POST of `body` as the caller of the event file `as_of`.
async fn post_as(router: &axum::Router, as_of: &str, path: &str, body: &Value) -> Reply {
    send_as(router, as_of, Method::POST, path, Some(body)).await
}

/// Voids invoice `number` of series `UA` as the caller of the event file `as_of`.
async fn void_as(router: &axum::Router, as_of: &str, number: &str) -> Reply {
    let path = format!("/series/UA/orders/{number}/void");
    post_as(router, as_of, &path, &json!({"reason": "cancelled"})).await
}

/// The order router of a deployment that binds the ERP's and the web shop's roles.
async fn bound_router() -> (axum::Router, Store, TestTable) {
    let (store, table) = fresh_store(None).await;
    let mut state = AppState::new(store.clone());
    state.sources = Arc::new(SourceBindings::parse(BINDINGS).unwrap());
    (api::orders_router(state), store, table)
}

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
    let defined = send_as(&router, ERP, Method::PUT, "/series/L", Some(&series)).await;
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
            ERP,
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
async fn a_token_caller_is_bound_like_an_iam_one_by_its_issuer_and_subject() {
    let (router, _store, _table) = bound_router().await;
    let series = json!({"format": "W{seq:5}", "reset": "never"});
    let defined = send_as(&router, SHOP, Method::PUT, "/series/W", Some(&series)).await;
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
    let mut state = AppState::new(store);
    state.sources = Arc::new(
        SourceBindings::parse("jwt:https://auth.example.com/#machine-7=shop")
            .unwrap()
            .with_token_claim(Some("client_id"))
            .unwrap(),
    );
    let router = api::orders_router(state);
    let series = json!({"format": "C{seq:5}", "reset": "never"});
    let defined = send_as(&router, SHOP_TOKEN, Method::PUT, "/series/C", Some(&series)).await;
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
    let defined = send_as(&bound, SHOP, Method::PUT, "/series/UA", Some(&series)).await;
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
