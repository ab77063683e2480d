//! Voids against the freeze: a purchase says on which side of it it was voided, and the
//! draw and its facts count the same entries (sold and not voided before the freeze).

use super::*;

/// The entries of draw `id` as its read and its facts answer them.
async fn entries(app: &TestApp, id: &str) -> (Value, Value) {
    let draw = app.get(&format!("/draws/{id}")).await.body;
    let facts = app.get(&format!("/draws/{id}/facts")).await.body;
    (draw["entries"].clone(), facts["entries"].clone())
}

/// `POST .../void` of `payment` in draw `id`.
async fn void(app: &TestApp, id: &str, payment: &str) -> Value {
    let voided = app
        .post(
            &format!("/draws/{id}/purchases/{payment}/void"),
            &json!({"reason": "refund"}),
        )
        .await;
    assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    voided.body
}

#[tokio::test]
async fn the_draw_and_its_facts_count_the_same_entries_voids_before_the_freeze_left_out() {
    let app = spawn_app().await;
    create(&app, json!({"draw_id": "ent", "total_tickets": 100})).await;
    for (payment, quantity, channel) in [
        ("on1", 3, "online"),
        ("on2", 2, "online"),
        ("post1", 1, "postal"),
        ("post2", 4, "postal"),
    ] {
        let body = json!({"payment_id": payment, "quantity": quantity, "payer_id": "ann",
                          "channel": channel});
        let bought = app.post("/draws/ent/purchases", &body).await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    }
    void(&app, "ent", "on2").await;
    void(&app, "ent", "post2").await;
    let (draw, facts) = entries(&app, "ent").await;
    assert_eq!(draw, json!({"online": 3, "postal": 1}));
    assert_eq!(facts, draw);
    // Sold still counts every ticket sold, voided ones included.
    assert_eq!(app.get("/draws/ent").await.body["sold"], 10);
    // A void after the freeze leaves the tickets in the frozen list: still entries.
    app.post("/draws/ent/close", &json!({})).await;
    void(&app, "ent", "on1").await;
    let (draw, facts) = entries(&app, "ent").await;
    assert_eq!(draw, json!({"online": 3, "postal": 1}));
    assert_eq!(facts, draw);
}

#[tokio::test]
async fn a_voided_purchase_says_whether_the_void_came_after_the_freeze() {
    let app = spawn_app().await;
    create(&app, json!({"draw_id": "late", "total_tickets": 100})).await;
    for payment in ["early", "late", "kept"] {
        let bought = app
            .post("/draws/late/purchases", &buy(payment, 2, "bo"))
            .await;
        assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
        assert!(
            bought.body["voided_after_freeze"].is_null(),
            "{}",
            bought.body
        );
    }
    assert_eq!(
        void(&app, "late", "early").await["voided_after_freeze"],
        false
    );
    app.post("/draws/late/close", &json!({})).await;
    let late = void(&app, "late", "late").await;
    assert_eq!(late["voided_after_freeze"], true, "{late}");
    // Voiding again answers as the first void did.
    assert_eq!(void(&app, "late", "late").await, late);
    let flag = |payment: &str| {
        let app = &app;
        let path = format!("/draws/late/purchases/{payment}");
        async move { app.get(&path).await.body["voided_after_freeze"].clone() }
    };
    assert_eq!(
        (flag("early").await, flag("late").await, flag("kept").await),
        (json!(false), json!(true), json!(null))
    );
    let listed = app.get("/draws/late/purchases?status=void").await.body;
    let mut flags: Vec<(String, Value)> = listed["purchases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let id = p["payment_id"].as_str().unwrap().to_owned();
            (id, p["voided_after_freeze"].clone())
        })
        .collect();
    flags.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        flags,
        [
            ("early".to_owned(), json!(false)),
            ("late".to_owned(), json!(true))
        ]
    );
    // The draw counts each void on its side of the freeze.
    let draw = app.get("/draws/late").await.body;
    assert_eq!(
        (&draw["voided"], &draw["late_voided"]),
        (&json!(2), &json!(2))
    );
}
