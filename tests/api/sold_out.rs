//! A sold-out draw says so: `sold_out` in `GET /draws/{id}` (from its counts) and in the
//! listings (from the mark the last buyer, or the first read of the counts, leaves on the
//! draw item), and a listing filtered by `sold_out` finds it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::StatusCode;
use serde_json::json;

use crate::helpers::spawn_app;

/// The status the draw listing gives `draw_id`.
async fn listed_status(
    app: &crate::helpers::TestApp,
    query: &str,
    draw_id: &str,
) -> Option<String> {
    let page = app.get(&format!("/draws{query}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    page.body["draws"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["draw_id"] == draw_id)
        .map(|d| d["status"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn the_last_purchase_marks_the_draw_sold_out_for_its_read_and_the_listings() {
    let app = spawn_app().await;
    app.create_draw(&json!({"draw_id": "gone", "total_tickets": 5}))
        .await;
    app.create_draw(&json!({"draw_id": "left", "total_tickets": 5}))
        .await;
    let bought = app
        .post(
            "/draws/gone/purchases",
            &json!({"payment_id": "p1", "quantity": 5}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    // Listed before anyone read the draw: the purchase marked it.
    assert_eq!(
        listed_status(&app, "", "gone").await.as_deref(),
        Some("sold_out")
    );
    assert_eq!(
        listed_status(&app, "", "left").await.as_deref(),
        Some("open")
    );
    assert_eq!(
        listed_status(&app, "?status=sold_out", "gone")
            .await
            .as_deref(),
        Some("sold_out")
    );
    assert_eq!(listed_status(&app, "?status=open", "gone").await, None);
    let read = app.get("/draws/gone").await;
    assert_eq!(
        (&read.body["status"], &read.body["remaining"]),
        (&json!("sold_out"), &json!(0)),
        "{}",
        read.body
    );
    // A replay still answers its tickets; the draw closes as any other.
    let replay = app
        .post(
            "/draws/gone/purchases",
            &json!({"payment_id": "p1", "quantity": 5}),
        )
        .await;
    assert_eq!(replay.status, StatusCode::OK);
    let closed = app.post("/draws/gone/close", &json!({})).await;
    assert_eq!(closed.body["status"], "closed", "{}", closed.body);
}

#[tokio::test]
async fn a_draw_sold_out_by_many_concurrent_buyers_lists_as_sold_out() {
    let app = Arc::new(spawn_app().await);
    app.create_draw(&json!({"draw_id": "rush", "total_tickets": 60, "stripes": 4}))
        .await;
    let sold = Arc::new(AtomicU64::new(0));
    let buyers: Vec<_> = (0..32)
        .map(|buyer| {
            let (app, sold) = (Arc::clone(&app), Arc::clone(&sold));
            tokio::spawn(async move {
                for n in 0..4 {
                    let body = json!({"payment_id": format!("b{buyer}-{n}"), "quantity": 1});
                    let reply = app.post("/draws/rush/purchases", &body).await;
                    match reply.status.as_u16() {
                        201 => {
                            sold.fetch_add(1, Ordering::Relaxed);
                        }
                        409 | 503 => {}
                        _ => panic!("{}", reply.body),
                    }
                }
            })
        })
        .collect();
    for buyer in buyers {
        buyer.await.unwrap();
    }
    // Whatever contention left unsold, the next buyers sell it out.
    let mut n = 0;
    while sold.load(Ordering::Relaxed) < 60 {
        let body = json!({"payment_id": format!("last-{n}"), "quantity": 1});
        if app.post("/draws/rush/purchases", &body).await.status == StatusCode::CREATED {
            sold.fetch_add(1, Ordering::Relaxed);
        }
        n += 1;
    }
    // Listed before anyone read the draw's counts.
    assert_eq!(
        listed_status(&app, "", "rush").await.as_deref(),
        Some("sold_out")
    );
}
