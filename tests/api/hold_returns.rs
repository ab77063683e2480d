//! Numbers that holds give back (H3): a lucky dip that passed live holds leaves their
//! marks behind it, and once the holds end any buyer takes those numbers back, from
//! either end of the stripe, as often as there are some; a process that learned of a
//! hold another released answers sold out only from fresh stripes.

use axum::Router;
use axum::http::{Method, StatusCode};
use serde_json::json;
use tally_domain::ids::DrawId;
use tally_domain::permutation::Permutation;

use crate::helpers::{Reply, post_json, send_raw, tickets_of};
use crate::hold_app::HoldApp;

/// The numbers of a one-stripe draw in the order of the stripe's offsets.
async fn numbers_by_offset(app: &HoldApp, draw_id: &str, total: u64) -> Vec<u64> {
    let draw = app
        .app
        .store
        .get_draw(&DrawId::parse(draw_id).unwrap())
        .await
        .unwrap()
        .unwrap();
    let permutation = Permutation::new(total, &draw.key);
    (0..total).map(|i| permutation.apply(i) + 1).collect()
}

/// A lucky dip of `quantity` through `router`.
async fn dip(router: &Router, draw_id: &str, payment: &str, quantity: u64) -> Reply {
    let body = json!({"payment_id": payment, "quantity": quantity});
    post_json(router, &format!("/draws/{draw_id}/purchases"), &body).await
}

/// The tickets of a purchase that must have gone through, ascending.
fn bought(reply: &Reply) -> Vec<u64> {
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let mut tickets = tickets_of(reply);
    tickets.sort_unstable();
    tickets
}

fn assert_sold_out(reply: &Reply, remaining: u64) {
    assert_eq!(
        (reply.code(), reply.body["remaining"].as_u64()),
        ("sold_out", Some(remaining)),
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn the_top_end_takes_back_every_number_behind_the_bottom_one_after_one_take_back() {
    let app = HoldApp::spawn().await;
    app.draw(json!({"draw_id": "back", "total_tickets": 3, "stripes": 1, "max_held_percent": 100}))
        .await;
    let by_offset = numbers_by_offset(&app, "back", 3).await;
    // The first two offsets held, so the bottom end's dip passes them for the third.
    let mut held = vec![by_offset[0], by_offset[1]];
    held.sort_unstable();
    let hold = app
        .post(
            "/draws/back/holds",
            json!({"hold_id": "h", "numbers": held, "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(hold.status, StatusCode::CREATED, "{}", hold.body);
    let bottom = dip(&app.app.router, "back", "bottom", 1).await;
    assert_eq!(bought(&bottom), vec![by_offset[2]]);
    let released = app.delete("/draws/back/holds/h").await;
    assert_eq!(released.body["status"], "released", "{}", released.body);
    // Another process gets the top end: each of its dips only takes a number back behind
    // the bottom end, so its own counter stays at zero, written or not.
    let other = app.instance().await;
    let mut taken = bought(&dip(&other, "back", "top1", 1).await);
    taken.extend(bought(&dip(&other, "back", "top2", 1).await));
    taken.sort_unstable();
    assert_eq!(taken, held);
    assert_sold_out(&dip(&other, "back", "top3", 1).await, 0);
}

#[tokio::test]
async fn sold_out_counts_the_numbers_a_hold_released_elsewhere_gave_back() {
    let app = HoldApp::spawn().await;
    app.draw(
        json!({"draw_id": "freed", "total_tickets": 10, "stripes": 1, "hold_seconds": 600,
                    "max_held_percent": 100}),
    )
    .await;
    let hold = app
        .post(
            "/draws/freed/holds",
            json!({"hold_id": "h", "numbers": [1, 2], "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(hold.status, StatusCode::CREATED, "{}", hold.body);
    let router = &app.app.router;
    assert_eq!(bought(&dip(router, "freed", "rest", 8).await).len(), 8);
    // Another process releases the hold: this one still knows it as live.
    let other = app.instance().await;
    let path = "/draws/freed/holds/h";
    let json = "application/json";
    let released = send_raw(&other, Method::DELETE, path, json, String::new()).await;
    assert_eq!(released.body["status"], "released", "{}", released.body);
    assert_sold_out(&dip(router, "freed", "three", 3).await, 2);
    assert_eq!(bought(&dip(router, "freed", "two", 2).await), vec![1, 2]);
    assert_sold_out(&dip(router, "freed", "one", 1).await, 0);
}
