//! Holds of winning numbers reveal nothing until a paid hold wins.

use super::*;

/// What an answer about a hold would leak if it named a prize: any prize's name, or an
/// instant-win field.
fn assert_silent(reply: &crate::helpers::Reply, prizes: &[&str]) {
    let text = reply.body.to_string();
    assert!(!text.contains("instant"), "I2: {text}");
    for prize in prizes {
        assert!(!text.contains(prize), "I2: {prize} in {text}");
    }
}

#[tokio::test]
async fn holding_releasing_and_letting_winning_numbers_expire_reveals_nothing_and_a_paid_hold_wins()
{
    let app = HoldApp::spawn().await;
    let prizes = ["golden ticket", "voucher"];
    app.draw(
        // Holds may take every number: in a draw this small a stripe's share of the
        // default 25% can be one number, and two winning numbers may share a stripe.
        json!({"draw_id": "ih", "total_tickets": 200, "hold_seconds": 30,
        "max_per_purchase": 20, "max_held_percent": 100,
        "instant_wins": [{"prize": prizes[0], "count": 1}, {"prize": prizes[1], "count": 9}]}),
    )
    .await;
    let map = insider_map(&app.app.store, "ih").await;
    let winning: Vec<u64> = map.keys().copied().collect();
    let losing: Vec<u64> = (1..=200).filter(|t| !map.contains_key(t)).take(3).collect();
    // A hold of a winning and a losing number, read, released: silent at every step.
    let body = json!({"hold_id": "probe", "numbers": [winning[0], losing[0]], "payer_id": "buyer"});
    let held = app.post("/draws/ih/holds", body.clone()).await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    assert_silent(&held, &prizes);
    assert_silent(&app.post("/draws/ih/holds", body).await, &prizes);
    assert_silent(&app.get("/draws/ih/holds/probe").await, &prizes);
    assert_silent(&app.delete("/draws/ih/holds/probe").await, &prizes);
    // A lucky-dip hold, read and released: silent too, whatever it holds.
    let dip = app
        .post(
            "/draws/ih/holds",
            json!({"hold_id": "dip", "quantity": 20, "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(dip.status, StatusCode::CREATED, "{}", dip.body);
    assert_silent(&dip, &prizes);
    assert_silent(&app.delete("/draws/ih/holds/dip").await, &prizes);
    // Held winning numbers expire unbought: still nothing won, nothing awarded.
    let expiring =
        json!({"hold_id": "late", "numbers": [winning[1], winning[2]], "payer_id": "buyer"});
    let late = app.post("/draws/ih/holds", expiring).await;
    assert_eq!(late.status, StatusCode::CREATED, "{}", late.body);
    app.advance(31);
    let unpaid = app
        .post(
            "/draws/ih/purchases",
            json!({"payment_id": "p-late", "hold_id": "late"}),
        )
        .await;
    assert_eq!(unpaid.code(), "hold_expired", "{}", unpaid.body);
    assert_silent(&unpaid, &prizes);
    assert_silent(&app.get("/draws/ih/holds/late").await, &prizes);
    let won = app.get("/draws/ih/instant-wins").await;
    assert_eq!(wins_of(&won.body, "won"), BTreeMap::new());
    assert!(of_kind(&app.app.scan().await, "instant_win").is_empty());
    // A paid hold wins its prizes at once, once, and a replay answers the same.
    let numbers = [winning[1], winning[2], losing[1]];
    let kept = app
        .post(
            "/draws/ih/holds",
            json!({"hold_id": "keep", "numbers": numbers, "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(kept.status, StatusCode::CREATED, "{}", kept.body);
    assert_silent(&kept, &prizes);
    let paid_body = json!({"payment_id": "p-keep", "hold_id": "keep"});
    let paid = app.post("/draws/ih/purchases", paid_body.clone()).await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.body);
    let own = own_wins(&numbers, &map);
    assert_eq!(own.len(), 2);
    assert_eq!(wins_of(&paid.body, "instant_wins"), own);
    let replay = app.post("/draws/ih/purchases", paid_body).await;
    assert_eq!(replay.status, StatusCode::OK, "{}", replay.body);
    assert_eq!(wins_of(&replay.body, "instant_wins"), own);
    let items = app.app.scan().await;
    let sold = BTreeMap::from([("p-keep".to_owned(), tickets_of(&paid))]);
    let awards = stored_awards(&items);
    assert_eq!(awards.len(), 2);
    for ticket in own.keys() {
        assert_eq!(awards[ticket], ("p-keep".to_owned(), "active".to_owned()));
    }
    assert_awards_follow_sales(&items, &map, &sold);
    let won = app.get("/draws/ih/instant-wins").await;
    assert_eq!(wins_of(&won.body, "won"), own);
}
