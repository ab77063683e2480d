//! Instant wins leak nothing by timing (I2): in a draw with instant wins, every purchase
//! transaction carries an award item, winning or not (the award, or the check that no
//! award is there), so a purchase refused by the transaction (a payer at the cap) sends
//! DynamoDB the same requests, with as many items at the same kinds of keys under the
//! same conditions, for a winning number as for a losing one; and probing sells nothing.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::faults::faulty_instance;
use crate::helpers::{Reply, endpoint, post_json, spawn_app};
use crate::instant::insider_map;
use tally_testkit::fault_proxy::{FaultProxy, Recorded};

/// The award items' key prefix.
const AWARD: &str = "DRAW#iw#INSTANT#";

/// What a request's shape is: its operation, and for a transaction each item's kind of
/// key (numbers left out), condition and action; the award item's action is left out:
/// the award is put for a winning number, checked absent for a losing one.
fn shape(request: &Recorded) -> Value {
    let items = request.body["TransactItems"].as_array().map(|items| {
        items
            .iter()
            .map(|item| {
                let (action, body) = item.as_object().unwrap().iter().next().unwrap();
                let key = item_key(body);
                let kind: String = key.chars().filter(|c| !c.is_ascii_digit()).collect();
                let action = if key.starts_with(AWARD) {
                    "award"
                } else {
                    action
                };
                json!([action, kind, body["ConditionExpression"]])
            })
            .collect::<Vec<_>>()
    });
    json!({"operation": request.operation, "items": items})
}

/// The partition key an item of a transaction writes or checks.
fn item_key(body: &Value) -> &str {
    body["Key"]["pk"]["S"]
        .as_str()
        .or(body["Item"]["pk"]["S"].as_str())
        .unwrap()
}

/// The action of the award item of each transaction `sent`.
fn award_actions(sent: &[Recorded]) -> Vec<String> {
    sent.iter()
        .flat_map(|r| {
            r.body["TransactItems"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|item| {
            let (action, body) = item.as_object().unwrap().iter().next().unwrap();
            item_key(body).starts_with(AWARD).then(|| action.clone())
        })
        .collect()
}

/// A purchase of `number` by `payer` through `router`.
async fn buy(router: &axum::Router, payment: &str, number: u64, payer: &str) -> Reply {
    let body = json!({"payment_id": payment, "numbers": [number], "payer_id": payer});
    post_json(router, "/draws/iw/purchases", &body).await
}

#[tokio::test]
async fn a_payer_at_the_cap_probing_a_winning_number_sends_what_a_losing_one_sends() {
    let app = spawn_app().await;
    let draw = json!({"draw_id": "iw", "total_tickets": 200, "max_per_payer": 1,
                      "instant_wins": [{"prize": "voucher", "count": 20}]});
    app.create_draw(&draw).await;
    let map = insider_map(&app.store, "iw").await;
    let winning: Vec<u64> = map.keys().copied().take(2).collect();
    let losing: Vec<u64> = (1..=200).filter(|n| !map.contains_key(n)).take(3).collect();
    let proxy = FaultProxy::start(&endpoint()).await;
    let router = faulty_instance(&proxy, app.store.table(), Duration::from_secs(60)).await;
    // The payer fills its cap with a losing number.
    let first = buy(&router, "first", losing[0], "probe").await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    // Then probes winning and losing numbers in turn: each is refused the same way, by the
    // transaction, and sends the same requests.
    let mut shapes = Vec::new();
    for (i, number) in [winning[0], losing[1], winning[1], losing[2]]
        .into_iter()
        .enumerate()
    {
        proxy.record();
        let refused = buy(&router, &format!("probe-{i}"), number, "probe").await;
        assert_eq!(refused.code(), "payer_limit", "{}", refused.body);
        let sent = proxy.recorded();
        let wins = map.contains_key(&number);
        let expected = if wins { "Put" } else { "ConditionCheck" };
        assert_eq!(award_actions(&sent), vec![expected.to_owned()], "{number}");
        let sent: Vec<Value> = sent.iter().map(shape).collect();
        assert!(
            sent.iter().any(|s| s["operation"] == "TransactWriteItems"),
            "{sent:?}"
        );
        shapes.push(sent);
    }
    for (i, sent) in shapes.iter().enumerate().skip(1) {
        assert_eq!(sent, &shapes[0], "I2: probe {i} differs from probe 0");
    }
    // Nothing was sold or awarded by the probes; the losing purchase created no award.
    let items = app.scan().await;
    let awards = items
        .iter()
        .filter(|item| item["pk"].as_s().is_ok_and(|pk| pk.starts_with(AWARD)))
        .count();
    assert_eq!(awards, 0);
    // A winning number still wins for a buyer with room.
    let won = buy(&router, "winner", winning[0], "winner").await;
    assert_eq!(won.status, StatusCode::CREATED, "{}", won.body);
    assert_eq!(won.body["instant_wins"][0]["ticket"], winning[0]);
}
