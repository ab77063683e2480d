//! R1: numbers only inside a live authorised range, in order; a gapless series stays
//! gapless inside and across ranges (the jump between them is a declared gap); a range
//! that passes its low share says so once; and, mixed in, L1 for credit notes of it.

use std::collections::BTreeSet;

use axum::http::StatusCode;
use serde_json::json;
use tally::store::stream::{ChangeKind, ItemChange};

use crate::helpers::assert_problem;
use crate::helpers::{Item, TestApp, attr_n, of_kind, settle, spawn_app, store_on};
use crate::invariants::{credit_links, numbered_orders, within_ranges};

const SOURCES: usize = 4;
const PER_SOURCE: usize = 30;

/// The two ranges of the race: 60 and 50 counters with a jump of 40 between them.
fn chile() -> serde_json::Value {
    json!({"format": "{seq:1}", "reset": "never", "ranges": [
        {"from": 1, "to": 60, "authority_ref": "CAF-2026-001"},
        {"from": 101, "to": 150, "authority_ref": "CAF-2026-002",
         "valid_until": "2099-12-31T23:59:59Z"}
    ]})
}

/// One source posts its orders, singles and batches; returns (created, range_exhausted).
async fn post_source(router: axum::Router, source: String) -> (Vec<String>, usize) {
    let mut created = Vec::new();
    let mut exhausted = 0;
    let refs: Vec<String> = (0..PER_SOURCE).map(|k| format!("o{k}")).collect();
    for (n, chunk) in refs.chunks(7).enumerate() {
        let results: Vec<(String, String)> = if n % 2 == 0 {
            let items: Vec<_> = chunk.iter().map(|r| json!({"external_ref": r})).collect();
            let body = json!({"source": source, "orders": items});
            let reply = settle(&router, "/series/CL/orders/batch", &body.to_string()).await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            reply.body["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let number = r["order_number"].as_str().unwrap_or("").to_owned();
                    (number, r["code"].as_str().unwrap_or("").to_owned())
                })
                .collect()
        } else {
            let mut results = Vec::new();
            for reference in chunk {
                let body = json!({"source": source, "external_ref": reference});
                let reply = settle(&router, "/series/CL/orders", &body.to_string()).await;
                let number = reply.body["order_number"].as_str().unwrap_or("").to_owned();
                results.push((number, reply.code().to_owned()));
            }
            results
        };
        for (number, code) in results {
            match code.as_str() {
                "" => created.push(number),
                "range_exhausted" => exhausted += 1,
                other => panic!("{source}: {other}"),
            }
        }
    }
    (created, exhausted)
}

/// Credits the odd invoices 1 to 23 of CL as they appear.
async fn credit_as_they_come(router: axum::Router) -> usize {
    let mut credited = 0;
    for number in (1..=23).step_by(2) {
        for _ in 0..500 {
            let body = json!({"series": "NCL", "source": "erp",
                              "external_ref": format!("nc{number}"), "corrects": number.to_string()});
            let reply = settle(&router, "/orders", &body.to_string()).await;
            match (reply.status, reply.code()) {
                (StatusCode::CREATED | StatusCode::OK, _) => {
                    credited += 1;
                    break;
                }
                // Not numbered yet.
                (StatusCode::CONFLICT, "invoice_not_found") => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                (status, code) => panic!("credit note: {status} {code}"),
            }
        }
    }
    credited
}

/// The operator voids invoices 2, 4 and 6 once they exist.
async fn void_some(router: axum::Router) {
    for number in [2, 4, 6] {
        for _ in 0..500 {
            let path = format!("/series/CL/orders/{number}/void");
            let reply = settle(&router, &path, r#"{"reason": "cancelled sale"}"#).await;
            match (reply.status, reply.code()) {
                (StatusCode::OK, _) => break,
                (StatusCode::NOT_FOUND, _) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                (status, code) => panic!("void: {status} {code}"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_gapless_series_across_two_ranges_under_four_sources_runs_out_with_one_declared_jump() {
    let app = spawn_app().await;
    let defined = app.put("/series/CL", &chile()).await;
    assert_eq!(defined.status, StatusCode::CREATED, "{}", defined.body);
    assert_eq!(defined.body["start"], 1);
    let notes = json!({"format": "NC{seq:4}", "reset": "never", "credits": "CL"});
    app.define_series("NCL", &notes).await;
    let mut tasks = Vec::new();
    for source in 0..SOURCES {
        let router = crate::helpers::router(store_on(app.store.table(), None).await);
        tasks.push(tokio::spawn(post_source(router, format!("src-{source}"))));
    }
    let router = crate::helpers::router(store_on(app.store.table(), None).await);
    let notes = tokio::spawn(credit_as_they_come(router));
    let router = crate::helpers::router(store_on(app.store.table(), None).await);
    let voids = tokio::spawn(void_some(router));
    let (mut created, mut exhausted) = (Vec::new(), 0);
    for task in tasks {
        let (numbers, refused) = task.await.unwrap();
        created.extend(numbers);
        exhausted += refused;
    }
    assert_eq!(notes.await.unwrap(), 12);
    voids.await.unwrap();

    // 110 counters in the two ranges, the other ten orders refused: range_exhausted.
    assert_eq!(
        (created.len(), exhausted),
        (110, SOURCES * PER_SOURCE - 110)
    );
    let items = app.scan().await;
    let counters = within_ranges(&items, "CL", 1, &[(1, 60), (101, 150)]);
    let expected: Vec<u64> = (1..=60).chain(101..=150).collect();
    assert_eq!(counters, expected);
    let answered: BTreeSet<String> = created.into_iter().collect();
    let stored: BTreeSet<String> = numbered_orders(&items, "CL")
        .into_values()
        .map(|n| n.number)
        .collect();
    assert_eq!(answered, stored, "O4: the answers are the stored numbers");
    assert_eq!(credit_links(&items, "NCL", "CL"), 12);

    // The audit: the jump is the only gap, declared; the chain holds.
    let audit = app.get("/series/CL/audit").await.body;
    assert_eq!(audit["orders"], 110, "{audit}");
    let gaps = audit["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1, "{audit}");
    assert_eq!(
        (&gaps[0]["from"], &gaps[0]["to"], &gaps[0]["cause"]),
        (&json!(61), &json!(100), &json!("declared_move"))
    );
    assert_eq!(audit["chain"]["intact"], true, "{audit}");

    // Range Running Low: one mark per range, at 90% of it, and one event each.
    assert_low_marks(&items, &[54, 145]);
}

/// The table holds the low marks of the ranges at `expected`, each with its one event.
fn assert_low_marks(items: &[Item], expected: &[u64]) {
    let marks = of_kind(items, "range_low");
    let mut at: Vec<u64> = marks.iter().map(|m| attr_n(m, "mark")).collect();
    at.sort_unstable();
    assert_eq!(at, expected);
    for mark in marks {
        let change = ItemChange {
            kind: ChangeKind::Insert,
            old: None,
            new: Some(mark.clone()),
        };
        let events = change.domain_events().unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].detail_type(), "Range Running Low");
    }
}

#[tokio::test]
async fn one_gapless_batch_across_two_ranges_writes_the_low_notice_of_each() {
    let app = spawn_app().await;
    app.define_series("CL", &chile()).await;
    let orders: Vec<_> = (0..110)
        .map(|k| json!({"external_ref": format!("b{k}")}))
        .collect();
    let body = json!({"series": "CL", "source": "erp", "orders": orders});
    let reply = app.post("/orders/batch", &body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let results = reply.body["results"].as_array().unwrap();
    assert_eq!(results[109]["order_number"], "150", "{}", reply.body);
    assert_low_marks(&app.scan().await, &[54, 145]);
}

#[tokio::test]
async fn ranges_grow_by_patch_never_change_in_use_and_expire() {
    let app = spawn_app().await;
    let body = json!({"format": "F{seq:3}", "reset": "never", "gapless": false, "ranges": [
        {"from": 1, "to": 5, "authority_ref": "DIAN-18760000001"},
        {"from": 11, "to": 15, "authority_ref": "DIAN-18760000002"}
    ]});
    app.define_series("FA", &body).await;
    let items: Vec<_> = (0..12)
        .map(|k| json!({"external_ref": format!("f{k}")}))
        .collect();
    let batch = json!({"series": "FA", "source": "erp", "orders": items});
    let reply = app.post("/orders/batch", &batch).await;
    let numbers: Vec<&str> = reply.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["order_number"]
                .as_str()
                .or(r["code"].as_str())
                .unwrap_or_else(|| panic!("{r}"))
        })
        .collect();
    assert_eq!(
        numbers,
        [
            "F001",
            "F002",
            "F003",
            "F004",
            "F005",
            "F011",
            "F012",
            "F013",
            "F014",
            "F015",
            "range_exhausted",
            "range_exhausted"
        ]
    );
    // The fast series' jump is declared too.
    let audit = app.get("/series/FA/audit").await.body;
    let declared: Vec<(u64, u64)> = audit["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["cause"] == "declared_move")
        .map(|g| (g["from"].as_u64().unwrap(), g["to"].as_u64().unwrap()))
        .collect();
    assert_eq!(declared, [(6, 10)], "{audit}");

    // A range in use never changes; a new one is added with the whole list.
    let changed = json!({"ranges": [
        {"from": 1, "to": 6, "authority_ref": "DIAN-18760000001"},
        {"from": 11, "to": 15, "authority_ref": "DIAN-18760000002"}
    ]});
    assert_problem(
        &app.patch("/series/FA", &changed).await,
        StatusCode::CONFLICT,
        "range_in_use",
    );
    let grown = json!({"ranges": [
        {"from": 1, "to": 5, "authority_ref": "DIAN-18760000001"},
        {"from": 11, "to": 15, "authority_ref": "DIAN-18760000002"},
        {"from": 16, "to": 20, "authority_ref": "DIAN-18760000003",
         "valid_until": "2000-01-01T00:00:00Z"},
        {"from": 21, "to": 25, "authority_ref": "DIAN-18760000004"}
    ]});
    let patched = app.patch("/series/FA", &grown).await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    assert_eq!(patched.body["ranges"].as_array().unwrap().len(), 4);
    // The third range expired before it was used: numbering goes on in the fourth.
    let next = app
        .post(
            "/orders",
            &json!({"series": "FA", "source": "erp", "external_ref": "f12"}),
        )
        .await;
    assert_eq!(next.body["order_number"], "F021", "{}", next.body);
    let overlapping = json!({"ranges": [
        {"from": 1, "to": 5, "authority_ref": "A"}, {"from": 5, "to": 9, "authority_ref": "B"}
    ]});
    assert_problem(
        &app.patch("/series/FA", &overlapping).await,
        StatusCode::BAD_REQUEST,
        "invalid_ranges",
    );

    // Only expired ranges left: range_expired.
    let expired = json!({"format": "E{seq:3}", "reset": "never", "ranges": [
        {"from": 1, "to": 5, "authority_ref": "CAF-OLD", "valid_until": "2000-01-01T00:00:00Z"}
    ]});
    app.define_series("EX", &expired).await;
    let refused = app
        .post(
            "/orders",
            &json!({"series": "EX", "source": "erp", "external_ref": "x"}),
        )
        .await;
    assert_problem(&refused, StatusCode::CONFLICT, "range_expired");
    let yearly = json!({"format": "Y{yy}{seq:3}", "reset": "yearly", "ranges": [
        {"from": 1, "to": 5, "authority_ref": "R"}
    ]});
    assert_problem(
        &app.put("/series/YR", &yearly).await,
        StatusCode::BAD_REQUEST,
        "invalid_ranges",
    );
}

/// A series numbered far past a range's low share by a move still fires once.
#[tokio::test]
async fn a_move_past_the_low_share_writes_the_low_notice_once() {
    let app: TestApp = spawn_app().await;
    let body = json!({"format": "M{seq:3}", "reset": "never", "range_low_percent": 50,
                      "ranges": [{"from": 1, "to": 100, "authority_ref": "CAF-9"}]});
    app.define_series("MV", &body).await;
    let moved = app
        .patch(
            "/series/MV",
            &json!({"next": 80, "reason": "paper folios used"}),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    for k in 0..3 {
        let reply = app
            .post(
                "/orders",
                &json!({"series": "MV", "source": "erp", "external_ref": format!("m{k}")}),
            )
            .await;
        assert_eq!(reply.status, StatusCode::CREATED);
    }
    let marks: Vec<u64> = of_kind(&app.scan().await, "range_low")
        .iter()
        .map(|m| attr_n(m, "mark"))
        .collect();
    assert_eq!(marks, [50]);
}
