//! Sales by schedule, and a create repeated with the newer fields.

use super::*;

#[tokio::test]
async fn sales_follow_the_schedule_and_a_draw_past_its_close_reads_closed() {
    let app = spawn_app().await;
    let later = create(
        &app,
        json!({"draw_id": "later", "total_tickets": 10, "opens_at": at(SignedDuration::from_hours(1))}),
    )
    .await;
    assert_eq!(later["status"], "scheduled");
    let early = app
        .post("/draws/later/purchases", &buy("e", 1, "ann"))
        .await;
    assert_eq!(early.code(), "draw_not_open", "{}", early.body);
    assert_eq!(early.body["opens_at"], later["opens_at"]);

    let closes_at = Timestamp::now() + SignedDuration::from_secs(2);
    let soon_body = json!({"draw_id": "soon", "total_tickets": 10,
                           "closes_at": rfc3339_millis(closes_at)});
    let soon = create(&app, soon_body.clone()).await;
    assert_eq!(soon["status"], "open");
    let sold = app
        .post("/draws/soon/purchases", &buy("s1", 2, "ann"))
        .await;
    assert_eq!(sold.status, StatusCode::CREATED);
    let wait = std::time::Duration::try_from(closes_at - Timestamp::now()).unwrap_or_default();
    tokio::time::sleep(wait + Duration::from_millis(50)).await;
    // D1: from closes_at on nothing sells, and the draw reads closed with no call.
    let late = app
        .post("/draws/soon/purchases", &buy("s2", 1, "ann"))
        .await;
    assert_eq!(late.code(), "draw_closed", "{}", late.body);
    assert_eq!(app.get("/draws/soon").await.body["status"], "closed");
    // Its create repeated is still the same create; a new draw closed already is refused.
    let repeated = app.post("/draws", &soon_body).await;
    assert_eq!(repeated.status, StatusCode::OK, "{}", repeated.body);
    assert_eq!(repeated.body["seed_commitment"], soon["seed_commitment"]);
    let mut other = soon_body.clone();
    other["total_tickets"] = json!(11);
    assert_eq!(app.post("/draws", &other).await.code(), "draw_exists");
    for draw_id in [json!("dead"), json!(null)] {
        let mut dead = soon_body.clone();
        dead["draw_id"] = draw_id;
        let refused = app.post("/draws", &dead).await;
        assert_eq!(refused.code(), "invalid_closes_at", "{}", refused.body);
        let detail = refused.body["detail"].as_str().unwrap();
        assert!(detail.contains("has passed"), "{detail}");
    }
    assert_eq!(app.get("/draws/dead").await.code(), "draw_not_found");
    // The beacon is fixed from closes_at on too, with no close called.
    let beacon = app
        .patch("/draws/soon", &json!({"beacon": {"network": "quicknet"}}))
        .await;
    assert_eq!(beacon.code(), "draw_closed", "{}", beacon.body);
    // A replay still gets its tickets; the winners close the stripes first.
    assert_eq!(
        app.post("/draws/soon/purchases", &buy("s1", 2, "ann"))
            .await
            .status,
        StatusCode::OK
    );
    let drawn = app.post("/draws/soon/winners", &json!({"prizes": 1})).await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    assert!(tickets_of(&sold).contains(&drawn.body["prizes"][0]["ticket"].as_u64().unwrap()));

    for (body, code) in [
        (
            json!({"total_tickets": 5, "opens_at": "tomorrow"}),
            "invalid_opens_at",
        ),
        (
            json!({"total_tickets": 5, "closes_at": "1999-01-01T00:00:00Z"}),
            "invalid_closes_at",
        ),
        (
            json!({"total_tickets": 5, "opens_at": at(SignedDuration::from_hours(2)), "closes_at": at(SignedDuration::from_hours(1))}),
            "invalid_schedule",
        ),
    ] {
        assert_eq!(app.post("/draws", &body).await.code(), code, "{body}");
    }
}

#[tokio::test]
async fn a_create_repeated_with_the_new_fields_is_the_same_create() {
    let app = spawn_app().await;
    let body = json!({"draw_id": "same", "total_tickets": 50, "max_per_payer": 4,
                      "opens_at": "2030-01-01T00:00:00Z", "closes_at": "2030-02-01T00:00:00+01:00",
                      "beacon": {"network": "quicknet"}});
    let first = create(&app, body.clone()).await;
    assert_eq!(first["closes_at"], "2030-01-31T23:00:00.000Z");
    // The beacon changes later: the create repeated as it was is still the same create.
    app.patch("/draws/same", &json!({"beacon": null})).await;
    let repeated = app.post("/draws", &body).await;
    assert_eq!(repeated.status, StatusCode::OK, "{}", repeated.body);
    assert_eq!(repeated.body["seed_commitment"], first["seed_commitment"]);
    assert!(repeated.body["beacon"].is_null());
    for (field, other) in [
        ("max_per_payer", json!(5)),
        ("opens_at", json!("2030-01-01T00:00:01Z")),
        ("closes_at", json!(null)),
        ("beacon", json!(null)),
    ] {
        let mut changed = body.clone();
        changed[field] = other;
        assert_eq!(
            app.post("/draws", &changed).await.code(),
            "draw_exists",
            "{field}"
        );
    }
}
