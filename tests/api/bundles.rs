//! Bundles: purchases of more tickets than one transaction holds (up to 500). The
//! transaction that decides a bundle takes every number at once; the ticket items that do
//! not fit it follow. A bundle is all or nothing for its buyer, a repeat of one cut short
//! finishes it without allocating again, and none of its numbers is sold to anyone else
//! meanwhile (B1, with T1–T5 on the table). Voids of bundles work alike (V1), and a close
//! finishes a void cut short.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;

use crate::faults::{agreed, every_fault, faulty_instance, twin_payments};
use crate::helpers::{
    Item, TestApp, attr_n, attr_numbers, attr_s, endpoint, of_kind, settle, spawn_app, tickets_of,
};
use crate::invariants::sold_tickets;
use crate::winners::bitmap_tickets;
use tally_testkit::fault_proxy::{FaultProxy, Faults};

mod ticket_reads;

/// Purchase records still waiting for follow-up writes.
fn unfinished(items: &[Item]) -> Vec<String> {
    of_kind(items, "purchase")
        .into_iter()
        .filter(|p| p.contains_key("unfinished"))
        .map(|p| attr_s(p, "payment_id").to_owned())
        .collect()
}

/// Ticket items marked void.
fn void_tickets(items: &[Item]) -> BTreeSet<u64> {
    of_kind(items, "ticket")
        .into_iter()
        .filter(|t| {
            t.get("status")
                .and_then(|s| s.as_s().ok())
                .map(String::as_str)
                == Some("void")
        })
        .map(|t| attr_n(t, "number"))
        .collect()
}

fn draw_item<'a>(items: &'a [Item], draw: &str) -> &'a Item {
    of_kind(items, "draw")
        .into_iter()
        .find(|d| attr_s(d, "draw_id") == draw)
        .expect("the draw item")
}

/// Buys the rest of `draw` by lucky dips of `quantity` until it is sold out.
async fn sell_out(app: &TestApp, draw: &str, mut quantity: u64) -> BTreeMap<String, Vec<u64>> {
    let mut sold = BTreeMap::new();
    let path = format!("/draws/{draw}/purchases");
    // Bounded: far more rounds than the draw has numbers for.
    for n in 0..10_000 {
        let left = app.get(&format!("/draws/{draw}/availability")).await.body["free"]
            .as_u64()
            .unwrap();
        if left == 0 {
            break;
        }
        let payment = format!("rest-{n}");
        let body = json!({"payment_id": payment, "quantity": quantity.min(left)});
        let reply = settle(&app.router, &path, &body.to_string()).await;
        match reply.code() {
            "" => {
                sold.insert(payment, tickets_of(&reply));
            }
            // The last tickets lie one or two a stripe: buy fewer at once.
            "tickets_fragmented" => quantity = (quantity / 2).max(1),
            "sold_out" => {}
            other => panic!("rest: {other} {}", reply.body),
        }
    }
    sold
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bundles_of_up_to_500_are_sold_replayed_held_voided_and_drawn_whole() {
    const TOTAL: u64 = 3_000;
    let app = spawn_app().await;
    // 24 stripes: a chosen bundle (more than 44 numbers) must lie in at most 32.
    let draw =
        json!({"draw_id": "b", "total_tickets": TOTAL, "max_per_purchase": 500, "stripes": 24});
    let created = app.create_draw(&draw).await;
    assert_eq!(created.body["max_per_purchase"], 500, "{}", created.body);
    // A lucky dip of 500: one answer, 500 distinct numbers, the same on a repeat.
    let body = json!({"payment_id": "dip", "quantity": 500});
    let dip = settle(&app.router, "/draws/b/purchases", &body.to_string()).await;
    assert_eq!(dip.status, StatusCode::CREATED, "{}", dip.body);
    let dipped = tickets_of(&dip);
    assert_eq!(dipped.iter().collect::<BTreeSet<_>>().len(), 500);
    let again = settle(&app.router, "/draws/b/purchases", &body.to_string()).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(tickets_of(&again), dipped);
    // 300 chosen numbers, none of them sold: all of them; one sold among them: none.
    let free: Vec<u64> = (1..=TOTAL).filter(|n| !dipped.contains(n)).collect();
    let chosen: Vec<u64> = free.iter().copied().step_by(3).take(300).collect();
    let body = json!({"payment_id": "pick", "numbers": chosen});
    let picked = settle(&app.router, "/draws/b/purchases", &body.to_string()).await;
    assert_eq!(picked.status, StatusCode::CREATED, "{}", picked.body);
    assert_eq!(tickets_of(&picked), chosen);
    let mut clash: Vec<u64> = free.iter().copied().skip(1).step_by(3).take(299).collect();
    clash.push(dipped[0]);
    clash.sort_unstable();
    let refused = app
        .post(
            "/draws/b/purchases",
            &json!({"payment_id": "clash", "numbers": clash}),
        )
        .await;
    assert_eq!(refused.code(), "numbers_taken", "{}", refused.body);
    assert_eq!(
        refused.body["numbers"],
        json!([dipped[0]]),
        "{}",
        refused.body
    );
    // A hold of 400, paid for: exactly its numbers.
    let hold = app
        .post(
            "/draws/b/holds",
            &json!({"hold_id": "basket", "quantity": 400, "payer_id": "buyer"}),
        )
        .await;
    assert_eq!(hold.status, StatusCode::CREATED, "{}", hold.body);
    let paid = app
        .post(
            "/draws/b/purchases",
            &json!({"payment_id": "paid", "hold_id": "basket"}),
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.body);
    assert_eq!(tickets_of(&paid), tickets_of(&hold));
    // The table: every ticket item written and its purchase's, nothing left unfinished.
    let items = app.scan().await;
    let sold = sold_tickets(&items, TOTAL);
    assert_eq!(sold.len(), 3);
    assert_eq!(sold.values().map(Vec::len).sum::<usize>(), 1_200);
    assert!(unfinished(&items).is_empty());
    // The void of a bundle: every ticket void, counted once, the allowance of nobody.
    let voided = app
        .post("/draws/b/purchases/dip/void", &json!({"reason": "refund"}))
        .await;
    assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    let items = app.scan().await;
    assert_eq!(void_tickets(&items), dipped.iter().copied().collect());
    let draw = draw_item(&items, "b");
    assert_eq!(attr_n(draw, "voided"), 500);
    assert!(!draw.contains_key("voiding"));
    assert!(unfinished(&items).is_empty());
    // Sell out, close: the eligible list holds every bundle ticket but the voided ones.
    let rest = sell_out(&app, "b", 50).await;
    assert_eq!(
        rest.values().map(Vec::len).sum::<usize>() as u64,
        TOTAL - 1_200
    );
    let closed = app.post("/draws/b/close", &json!({})).await;
    assert!(closed.status.is_success(), "{}", closed.body);
    let eligible = app.get("/draws/b/eligible").await;
    let expected: Vec<u64> = (1..=TOTAL).filter(|n| !dipped.contains(n)).collect();
    assert_eq!(bitmap_tickets(&eligible.body), expected);
}

#[tokio::test]
async fn chosen_numbers_spread_over_more_stripes_than_a_purchase_writes_are_a_request_error() {
    let app = spawn_app().await;
    // With 64 stripes, 200 chosen numbers lie in more than one purchase writes: a request
    // error, always the same; a lucky dip of 500 is sold there all the same.
    let wide = json!({"draw_id": "wide", "total_tickets": 3_000, "max_per_purchase": 500});
    app.create_draw(&wide).await;
    let numbers: Vec<u64> = (1..=200).map(|n| n * 7).collect();
    let spread = app
        .post(
            "/draws/wide/purchases",
            &json!({"payment_id": "spread", "numbers": numbers}),
        )
        .await;
    assert_eq!(spread.status, StatusCode::BAD_REQUEST, "{}", spread.body);
    assert_eq!(spread.code(), "invalid_numbers");
    let dip = app
        .post(
            "/draws/wide/purchases",
            &json!({"payment_id": "w", "quantity": 500}),
        )
        .await;
    assert_eq!(dip.status, StatusCode::CREATED, "{}", dip.body);
    let items = app.scan().await;
    assert_eq!(sold_tickets(&items, 3_000)["w"].len(), 500);
    assert!(unfinished(&items).is_empty());
}

/// Every `PutItem`, or every `UpdateItem`, refused: the writes after a deciding
/// transaction fail, while the transaction itself goes through.
fn refused(operation: &str) -> Faults {
    Faults {
        error_before: 1.0,
        operations: Some(vec![operation.into()]),
        ..Faults::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bundle_cut_short_after_its_commit_keeps_its_numbers_and_its_repeat_finishes_it() {
    const TOTAL: u64 = 2_000;
    let app = spawn_app().await;
    app.create_draw(&json!({"draw_id": "cut", "total_tickets": TOTAL, "max_per_purchase": 500}))
        .await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(refused("PutItem"));
    let faulty = faulty_instance(&proxy, app.store.table(), Duration::from_secs(30)).await;
    let body = json!({"payment_id": "big", "quantity": 500}).to_string();
    let cut = crate::helpers::post_raw(
        &faulty,
        "/draws/cut/purchases",
        "application/json",
        body.clone(),
    )
    .await;
    assert_eq!(cut.status, StatusCode::SERVICE_UNAVAILABLE, "{}", cut.body);
    assert!(cut.headers.contains_key("retry-after"));
    // Decided: the record holds 500 numbers, and only part of their ticket items exist.
    let items = app.scan().await;
    assert_eq!(unfinished(&items), vec!["big".to_owned()], "{}", cut.body);
    let record = of_kind(&items, "purchase")[0];
    let numbers: BTreeSet<u64> = attr_numbers(record, "tickets").into_iter().collect();
    assert_eq!(numbers.len(), 500);
    let written = of_kind(&items, "ticket").len();
    assert!(written < 500, "{written} ticket items");
    // Meanwhile others buy the whole rest of the draw: none of the bundle's numbers.
    let rest = sell_out(&app, "cut", 37).await;
    let others: BTreeSet<u64> = rest.values().flatten().copied().collect();
    assert_eq!(others.len() as u64, TOTAL - 500);
    assert!(others.is_disjoint(&numbers));
    // The repeat, on a healthy instance: the same 500 numbers, every item written.
    let repeat = settle(&app.router, "/draws/cut/purchases", &body).await;
    assert_eq!(repeat.status, StatusCode::OK, "{}", repeat.body);
    assert_eq!(
        tickets_of(&repeat).into_iter().collect::<BTreeSet<_>>(),
        numbers
    );
    let items = app.scan().await;
    assert!(unfinished(&items).is_empty());
    let sold = sold_tickets(&items, TOTAL);
    assert_eq!(sold.values().map(Vec::len).sum::<usize>() as u64, TOTAL);
    // A void cut short the same way: counted, named on the draw, marks partly written.
    proxy.set(refused("UpdateItem"));
    let void = crate::helpers::post_raw(
        &faulty,
        "/draws/cut/purchases/big/void",
        "application/json",
        json!({"reason": "chargeback"}).to_string(),
    )
    .await;
    assert_eq!(
        void.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        void.body
    );
    let items = app.scan().await;
    let draw = draw_item(&items, "cut");
    assert_eq!(attr_n(draw, "voided"), 500);
    assert!(draw.contains_key("voiding"));
    assert!(void_tickets(&items).len() < 500);
    // The close finishes it: the eligible list is every number but the bundle's.
    let closed = app.post("/draws/cut/close", &json!({})).await;
    assert!(closed.status.is_success(), "{}", closed.body);
    let eligible = app.get("/draws/cut/eligible").await;
    assert_eq!(eligible.status, StatusCode::OK, "{}", eligible.body);
    let expected: Vec<u64> = (1..=TOTAL).filter(|n| !numbers.contains(n)).collect();
    assert_eq!(bitmap_tickets(&eligible.body), expected);
    let items = app.scan().await;
    assert_eq!(void_tickets(&items), numbers);
    assert!(!draw_item(&items, "cut").contains_key("voiding"));
    assert!(unfinished(&items).is_empty());
    // And a repeat of the void answers it as it is.
    let again = app
        .post(
            "/draws/cut/purchases/big/void",
            &json!({"reason": "chargeback"}),
        )
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
}

/// Bundles listed as unfinished under their draw (the `list` index entries of their
/// markers).
fn listed_unfinished(items: &[Item]) -> Vec<String> {
    of_kind(items, "unfinished_bundle")
        .into_iter()
        .filter(|m| m.contains_key("list_pk"))
        .map(|m| attr_s(m, "list_sk").to_owned())
        .collect()
}

/// Two bundles cut short and never repeated (the payment provider gave up): a read of a
/// ticket without its item finishes them, and so does the close, before any may win.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bundle_cut_short_and_never_repeated_is_finished_before_anyone_reads_or_draws_it() {
    let app = spawn_app().await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let faulty = faulty_instance(&proxy, app.store.table(), Duration::from_secs(30)).await;
    for draw in ["read", "closed"] {
        let body = json!({"draw_id": draw, "total_tickets": 1_000, "max_per_purchase": 500});
        app.create_draw(&body).await;
        proxy.set(refused("PutItem"));
        let body = json!({"payment_id": "big", "quantity": 300}).to_string();
        let path = format!("/draws/{draw}/purchases");
        let cut = crate::helpers::post_raw(&faulty, &path, "application/json", body).await;
        assert_eq!(cut.status, StatusCode::SERVICE_UNAVAILABLE, "{}", cut.body);
        proxy.set(Faults::default());
    }
    let items = app.scan().await;
    assert_eq!(unfinished(&items), ["big", "big"]);
    assert_eq!(listed_unfinished(&items), ["big", "big"]);
    let written: BTreeSet<u64> = of_kind(&items, "ticket")
        .into_iter()
        .filter(|t| attr_s(t, "draw_id") == "read")
        .map(|t| attr_n(t, "number"))
        .collect();
    let record = of_kind(&items, "purchase")
        .into_iter()
        .find(|p| attr_s(p, "draw_id") == "read")
        .unwrap();
    let missing = attr_numbers(record, "tickets")
        .into_iter()
        .find(|n| !written.contains(n))
        .expect("a number without its ticket item");
    let ticket = app.get(&format!("/draws/read/tickets/{missing}")).await;
    assert_eq!(ticket.status, StatusCode::OK, "{}", ticket.body);
    assert_eq!(ticket.body["payment_id"], "big");
    let closed = app.post("/draws/closed/close", &json!({})).await;
    assert!(closed.status.is_success(), "{}", closed.body);
    let eligible = app.get("/draws/closed/eligible").await;
    assert_eq!(eligible.status, StatusCode::OK, "{}", eligible.body);
    assert_eq!(bitmap_tickets(&eligible.body).len(), 300);
    let items = app.scan().await;
    assert!(unfinished(&items).is_empty());
    assert!(listed_unfinished(&items).is_empty());
    assert_eq!(of_kind(&items, "ticket").len(), 600);
}

/// Bundles (lucky dips and chosen numbers from a hot window), small dips and small
/// choosers at once, each sent twice through DynamoDB faults: every bundle is all or
/// nothing, every number sold once, and nothing is left unfinished.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bundles_and_small_purchases_at_once_under_faults_sell_every_number_once() {
    const TOTAL: u64 = 3_000;
    const PAYMENTS: usize = 48;
    let app = spawn_app().await;
    // 24 stripes: chosen bundles lie in at most 32 (more than 44 chosen numbers must).
    let draw =
        json!({"draw_id": "mix", "total_tickets": TOTAL, "max_per_purchase": 500, "stripes": 24});
    app.create_draw(&draw).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.02));
    let answers = twin_payments(
        &proxy,
        app.store.table(),
        "/draws/mix/purchases",
        PAYMENTS,
        |i| {
            let payment = format!("pay-{i}");
            match i % 8 {
                0 => json!({"payment_id": payment, "quantity": 200 + 6 * i}),
                // Chosen bundles of 120 from overlapping windows of 300 numbers.
                4 => {
                    let start = 1 + (i as u64 / 8) * 100;
                    let numbers: Vec<u64> = (start..start + 300).step_by(2).take(120).collect();
                    json!({"payment_id": payment, "numbers": numbers})
                }
                1 | 5 => json!({"payment_id": payment, "numbers": [7 * i as u64 + 1]}),
                _ => json!({"payment_id": payment, "quantity": 1 + i % 5}),
            }
        },
    )
    .await;
    let mut sold: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (id, replies) in &answers {
        for reply in replies {
            let refused = ["sold_out", "numbers_taken"].contains(&reply.code());
            assert!(reply.status.is_success() || refused, "{id}: {}", reply.body);
        }
        if let Some(tickets) = agreed(id, replies) {
            sold.insert(id.clone(), tickets);
        }
    }
    let bundles = sold.iter().filter(|(_, t)| t.len() > 90).count();
    assert!(bundles >= 6, "only {bundles} bundles sold");
    proxy.set(every_fault(0.0));
    sold.extend(sell_out(&app, "mix", 50).await);
    let items = app.scan().await;
    assert!(unfinished(&items).is_empty(), "{:?}", unfinished(&items));
    assert!(listed_unfinished(&items).is_empty());
    assert_eq!(sold_tickets(&items, TOTAL), sold);
    assert_eq!(sold.values().map(Vec::len).sum::<usize>() as u64, TOTAL);
    let counts = proxy.counts();
    assert!(
        counts.errors_after > 0 && counts.lost_after > 0,
        "faults after commit did not happen: {counts:?}"
    );
}
