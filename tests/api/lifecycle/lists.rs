//! Lists in pages: a payer's purchases and the draws, newest first.

use super::*;

#[tokio::test]
async fn a_payers_purchases_come_newest_first_in_pages() {
    let app = spawn_app().await;
    create(&app, json!({"draw_id": "mine", "total_tickets": 100})).await;
    for i in 0..5 {
        app.post(
            "/draws/mine/purchases",
            &buy(&format!("m{i}"), 1, "ann@example.com"),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    app.post("/draws/mine/purchases", &buy("other", 1, "bob"))
        .await;
    app.post(
        "/draws/mine/purchases/m1/void",
        &json!({"reason": "refund"}),
    )
    .await;
    let path = "/draws/mine/payers/ann%40example.com/purchases";
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let url = match &cursor {
            Some(c) => format!("{path}?limit=2&cursor={c}"),
            None => format!("{path}?limit=2"),
        };
        let page = app.get(&url).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let purchases = page.body["purchases"].as_array().unwrap().clone();
        assert!(purchases.len() <= 2);
        for p in &purchases {
            assert_eq!(p["payer_id"], "ann@example.com");
            assert_eq!(p["tickets"].as_array().unwrap().len(), 1);
            seen.push((
                p["payment_id"].as_str().unwrap().to_owned(),
                p["status"].clone(),
            ));
        }
        match page.body["cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    let order: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(order, ["m4", "m3", "m2", "m1", "m0"]);
    assert_eq!(seen[3].1, "void");
    for bad in [
        "limit=0",
        "limit=101",
        "limit=x",
        "cursor=%%%",
        "cursor=bm9wZQ",
    ] {
        let reply = app.get(&format!("{path}?{bad}")).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{bad}: {}",
            reply.body
        );
    }
    assert_eq!(
        app.get("/draws/nope/payers/ann/purchases").await.code(),
        "draw_not_found"
    );
    let nobody = app.get("/draws/mine/payers/carol/purchases").await;
    assert_eq!(nobody.body, json!({"purchases": [], "cursor": null}));
}

#[tokio::test]
async fn draws_are_listed_newest_first_by_status_in_pages() {
    let app = spawn_app().await;
    for i in 0..5 {
        create(
            &app,
            json!({"draw_id": format!("d{i}"), "total_tickets": 10}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    app.post("/draws/d1/close", &json!({})).await;
    app.post("/draws/d3/close", &json!({})).await;
    let all = app.get("/draws?limit=3").await;
    let ids = |reply: &crate::helpers::Reply| -> Vec<String> {
        reply.body["draws"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["draw_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&all), ["d4", "d3", "d2"]);
    assert!(all.body["draws"][0]["seed_commitment"].is_string());
    assert!(all.body["draws"][0].get("seed").is_none());
    let rest = app
        .get(&format!(
            "/draws?limit=3&cursor={}",
            all.body["cursor"].as_str().unwrap()
        ))
        .await;
    assert_eq!(ids(&rest), ["d1", "d0"]);
    assert!(rest.body["cursor"].is_null());
    let open = app.get("/draws?status=open&limit=2").await;
    assert_eq!(ids(&open), ["d4", "d2"]);
    let next = app
        .get(&format!(
            "/draws?status=open&limit=2&cursor={}",
            open.body["cursor"].as_str().unwrap()
        ))
        .await;
    assert_eq!(ids(&next), ["d0"]);
    assert_eq!(ids(&app.get("/draws?status=closed").await), ["d3", "d1"]);
    assert_eq!(app.get("/draws?status=shut").await.code(), "invalid_status");
}
