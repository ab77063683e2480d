//! Payers' limits and exclusions: when they apply, and across draws.

use super::*;

#[tokio::test]
async fn a_lower_limit_applies_at_once_and_a_higher_one_after_cooling_off() {
    let app = spawn_app().await;
    priced_draws(&app, &["d"]).await;
    let set = app
        .put(
            "/payers/ann/limits",
            &json!({"limits": {"GBP": {"day": 300}}}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(set.body["limits"]["GBP"]["day"]["limit"], 300);
    assert_eq!(set.body["limits"]["GBP"]["week"]["limit"], Value::Null);
    let bought = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "a1", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED, "{}", bought.body);
    let over = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "a2", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(
        (over.status, over.code()),
        (StatusCode::CONFLICT, "spend_limit"),
        "{}",
        over.body
    );
    assert_eq!(
        (
            &over.body["span"],
            &over.body["spend_limit"],
            &over.body["left"],
            &over.body["currency"]
        ),
        (&json!("day"), &json!(300), &json!(100), &json!("GBP"))
    );
    // Raised: the old limit stays until the cooling-off period ends.
    let raised = app
        .put(
            "/payers/ann/limits",
            &json!({"limits": {"GBP": {"day": 5000}}}),
        )
        .await;
    let day = &raised.body["limits"]["GBP"]["day"];
    assert_eq!(
        (&day["limit"], &day["raise"]["limit"]),
        (&json!(300), &json!(5000)),
        "{day}"
    );
    let applies_at =
        tally_domain::time::parse_rfc3339(day["raise"]["applies_at"].as_str().unwrap()).unwrap();
    let wait = applies_at - Timestamp::now();
    assert!(wait > SignedDuration::from_hours(23), "{wait}");
    let still = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "a3", "quantity": 2, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(still.code(), "spend_limit", "{}", still.body);
    // Lowered, to zero: at once, for every purchase.
    let zero = app
        .put(
            "/payers/ann/limits",
            &json!({"limits": {"GBP": {"day": 0}}}),
        )
        .await;
    assert_eq!(
        zero.body["limits"]["GBP"]["day"]["left"], 0,
        "{}",
        zero.body
    );
    let none = app
        .post(
            "/draws/d/purchases",
            &json!({"payment_id": "a4", "quantity": 1, "payer_id": "ann"}),
        )
        .await;
    assert_eq!(
        (none.code(), &none.body["left"]),
        ("spend_limit", &json!(0))
    );
    // A void gives the amount back to the day it was spent in, once.
    for _ in 0..2 {
        let voided = app
            .post("/draws/d/purchases/a1/void", &json!({"reason": "refund"}))
            .await;
        assert_eq!(voided.status, StatusCode::OK, "{}", voided.body);
    }
    let read = app.get("/payers/ann/limits").await;
    assert_eq!(
        read.body["limits"]["GBP"]["day"]["spent"], 0,
        "{}",
        read.body
    );
    let wrong = app
        .put(
            "/payers/ann/limits",
            &json!({"limits": {"gbp": {"day": 1}}}),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.body);
}

#[tokio::test]
async fn an_exclusion_refuses_purchases_holds_payments_and_free_entries_and_never_shortens() {
    let app = spawn_app().await;
    priced_draws(&app, &["d", "e"]).await;
    let held = app
        .post(
            "/draws/d/holds",
            &json!({"hold_id": "h1", "quantity": 1, "payer_id": "bob"}),
        )
        .await;
    assert_eq!(held.status, StatusCode::CREATED, "{}", held.body);
    let week = rfc3339_millis(Timestamp::now() + SignedDuration::from_hours(24 * 7));
    let excluded = app
        .put("/payers/bob/exclusion", &json!({"excluded_until": week}))
        .await;
    assert_eq!(excluded.status, StatusCode::OK, "{}", excluded.body);
    assert_eq!(excluded.body["excluded"], true);
    let until = excluded.body["excluded_until"].clone();
    for (path, body) in [
        (
            "/draws/e/purchases",
            json!({"payment_id": "b1", "quantity": 1, "payer_id": "bob"}),
        ),
        (
            "/draws/e/purchases",
            json!({"payment_id": "b2", "quantity": 1, "payer_id": "bob",
                                      "channel": "postal"}),
        ),
        (
            "/draws/e/holds",
            json!({"hold_id": "h2", "quantity": 1, "payer_id": "bob"}),
        ),
        (
            "/draws/d/purchases",
            json!({"payment_id": "b3", "hold_id": "h1"}),
        ),
    ] {
        let refused = app.post(path, &body).await;
        assert_eq!(
            (refused.status, refused.code()),
            (StatusCode::FORBIDDEN, "payer_excluded"),
            "{body}: {}",
            refused.body
        );
        assert_eq!(refused.body["excluded_until"], until);
    }
    // Shorter, or past: the one in force stays; later or open-ended: extended.
    let day = rfc3339_millis(Timestamp::now() + SignedDuration::from_hours(24));
    let shorter = app
        .put("/payers/bob/exclusion", &json!({"excluded_until": day}))
        .await;
    assert_eq!(shorter.body["excluded_until"], until, "{}", shorter.body);
    let past = app
        .put(
            "/payers/bob/exclusion",
            &json!({"excluded_until": "2020-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(past.code(), "invalid_excluded_until", "{}", past.body);
    let open = app.put("/payers/bob/exclusion", &json!({})).await;
    assert_eq!(
        (&open.body["excluded"], &open.body["excluded_until"]),
        (&json!(true), &Value::Null)
    );
    let still = app
        .put("/payers/bob/exclusion", &json!({"excluded_until": week}))
        .await;
    assert_eq!(still.body["excluded_until"], Value::Null, "{}", still.body);
    // Others buy as before.
    let other = app
        .post(
            "/draws/e/purchases",
            &json!({"payment_id": "c1", "quantity": 1, "payer_id": "cy"}),
        )
        .await;
    assert_eq!(other.status, StatusCode::CREATED, "{}", other.body);
    // Each exclusion set that changes it is an operator's action: one journal entry each
    // (the week, then open-ended), naming the payer by its key, never by its id; the
    // shorter end, the refused past one and the week again change nothing and journal
    // nothing, as a repeat after a lost answer must not.
    let journal = app.get("/journal").await;
    let set: Vec<&Value> = journal.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "exclusion_set")
        .collect();
    assert_eq!(set.len(), 2, "{}", journal.body);
    for entry in set {
        assert!(
            entry["target"].as_str().unwrap().starts_with("payer/"),
            "{entry}"
        );
        assert!(!entry.to_string().contains("bob"), "{entry}");
    }
}

/// M1, X1: buyers in many tasks spread over three draws; no payer passes a window's
/// limit, the excluded payer commits nothing after the exclusion returned, and voids,
/// each sent twice at once, give back exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_payer_passes_a_limit_across_draws_and_an_exclusion_stops_every_sale() {
    const PAYERS: usize = 6;
    let app = spawn_app().await;
    let draws = ["d0", "d1", "d2"];
    priced_draws(&app, &draws).await;
    let limits = [700u64, 1_000, 300, 0, 1_200, 900];
    for (i, day) in limits.iter().enumerate() {
        let week = if i == 4 { json!(800) } else { json!(null) };
        let body = json!({"limits": {"GBP": {"day": day, "week": week}}});
        let set = app.put(&format!("/payers/p{i}/limits"), &body).await;
        assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    }
    let mut tasks = Vec::new();
    for task in 0..24u64 {
        let router = app.router.clone();
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(task);
            let mut answers = Vec::new();
            for n in 0..12 {
                let payer = rng.random_range(0..PAYERS + 1);
                let draw = draws[rng.random_range(0..draws.len())];
                let body = json!({"payment_id": format!("t{task}-{n}"), "payer_id": format!("p{payer}"),
                                  "quantity": rng.random_range(1..=3)});
                let reply = settle(&router, &format!("/draws/{draw}/purchases"), &body.to_string()).await;
                answers.push((payer, reply.status, reply.code().to_owned()));
            }
            answers
        }));
    }
    // Payer p6 excludes themselves while the sale runs.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let excluded = app.put("/payers/p6/exclusion", &json!({})).await;
    assert_eq!(excluded.status, StatusCode::OK, "{}", excluded.body);
    let at_exclusion = of_kind(&scan(&app.store).await, "purchase")
        .iter()
        .filter(|p| attr_s(p, "payer_id") == "p6")
        .count();
    for task in tasks {
        for (payer, status, code) in task.await.unwrap() {
            assert!(
                status == StatusCode::CREATED
                    || code == "spend_limit"
                    || (payer == 6 && code == "payer_excluded"),
                "p{payer}: {status} {code}"
            );
        }
    }
    let items = scan(&app.store).await;
    let after = of_kind(&items, "purchase")
        .iter()
        .filter(|p| attr_s(p, "payer_id") == "p6")
        .count();
    assert_eq!(
        after, at_exclusion,
        "p6 bought after the exclusion returned"
    );
    let spend = spend_on_record(&items);
    for (i, day) in limits.iter().enumerate() {
        let (spent, counted) = spend.get(&format!("p{i}")).copied().unwrap_or_default();
        let most = if i == 4 { 800 } else { *day };
        assert!(spent <= most, "p{i} spent {spent} over {most}");
        assert_eq!(
            spent, counted,
            "p{i}: the day's count is not what the purchases spent"
        );
        // Every limit was reached as far as 1 to 3 tickets of 100 could.
        assert!(
            most - spent < 100 || most == 0,
            "p{i} spent only {spent} of {most}"
        );
    }
    // Void every second purchase of each payer, twice at once.
    let purchases: Vec<(String, String)> = of_kind(&items, "purchase")
        .iter()
        .map(|p| {
            (
                attr_s(p, "draw_id").to_owned(),
                attr_s(p, "payment_id").to_owned(),
            )
        })
        .collect();
    let mut voids = Vec::new();
    for (draw, payment) in purchases.into_iter().step_by(2) {
        for _twin in 0..2 {
            let (router, path) = (
                app.router.clone(),
                format!("/draws/{draw}/purchases/{payment}/void"),
            );
            voids.push(tokio::spawn(async move {
                settle_request(&router, Method::POST, &path, r#"{"reason": "refund"}"#).await
            }));
        }
    }
    for void in voids {
        let reply = void.await.unwrap();
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    for (payer, (spent, counted)) in spend_on_record(&scan(&app.store).await) {
        assert_eq!(spent, counted, "{payer}: voids gave back other than once");
    }
}

#[tokio::test]
async fn limits_in_more_currencies_than_a_payer_may_name_are_refused() {
    let app = spawn_app().await;
    let limits = |codes: std::ops::Range<u8>| {
        let named: serde_json::Map<String, Value> = codes
            .map(|i| (format!("AA{}", (b'A' + i) as char), json!({"day": 100})))
            .collect();
        json!({"limits": named})
    };
    let set = app.put("/payers/ann/limits", &limits(0..16)).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    let more = app.put("/payers/ann/limits", &limits(16..17)).await;
    assert_eq!(
        (more.status, more.code()),
        (StatusCode::BAD_REQUEST, "invalid_limits"),
        "{}",
        more.body
    );
}

#[tokio::test]
async fn a_currency_named_twice_is_refused_and_nothing_is_stored() {
    let app = spawn_app().await;
    // JSON that `json!` cannot write: a repeated key, once spelled with an escape.
    for body in [
        r#"{"limits": {"GBP": {"day": 100}, "GBP": {"day": 100000}}}"#,
        r#"{"limits": {"GBP": {"day": 100}, "EUR": {}, "G\u0042P": {"day": 100000}}}"#,
    ] {
        let twice = crate::helpers::send_raw(
            &app.router,
            axum::http::Method::PUT,
            "/payers/ann/limits",
            "application/json",
            body.to_owned(),
        )
        .await;
        assert_eq!(
            (twice.status, twice.code()),
            (StatusCode::BAD_REQUEST, "invalid_limits"),
            "{}",
            twice.body
        );
        assert!(
            twice.body["detail"]
                .as_str()
                .unwrap()
                .contains(r#""GBP" is given twice"#),
            "{}",
            twice.body
        );
    }
    let read = app.get("/payers/ann/limits").await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body["limits"], json!({}), "{}", read.body);
}

#[tokio::test]
async fn limits_set_again_as_they_are_write_nothing_and_journal_nothing() {
    let app = spawn_app().await;
    let lower = json!({"limits": {"GBP": {"day": 300}}});
    let higher = json!({"limits": {"GBP": {"day": 900}}});
    // A lower limit, then a raise that waits: each repeated, as after a lost answer.
    for body in [&lower, &lower, &higher, &higher] {
        let set = app.put("/payers/ann/limits", body).await;
        assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    }
    let read = app.get("/payers/ann/limits").await;
    assert_eq!(
        read.body["limits"]["GBP"]["day"]["limit"], 300,
        "{}",
        read.body
    );
    let journal = app.get("/journal").await;
    let set = journal.body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "limits_set")
        .count();
    assert_eq!(set, 2, "{}", journal.body);
}
