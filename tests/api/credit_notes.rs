//! L1: every credit note of a series that credits another names a live invoice of it,
//! checked in the transaction that numbers the credit note; an invoice with credit notes
//! is never voided.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::helpers::assert_problem;
use crate::helpers::{TestApp, settle, spawn_app, store_on};
use crate::invariants::credit_links;
use tally_domain::order::MAX_CREDIT_NOTES;

/// An invoice series and a credit-note series that credits it.
async fn invoices_and_credit_notes(app: &TestApp) {
    let invoices = json!({"format": "F{yy}-{seq:5}", "reset": "yearly"});
    app.define_series("INV", &invoices).await;
    let notes = json!({"format": "NC{yy}-{seq:5}", "reset": "yearly", "credits": "INV"});
    let created = app.define_series("NC", &notes).await;
    assert_eq!(created.body["credits"], "INV");
}

async fn invoice(app: &TestApp, reference: &str) -> String {
    let body = json!({"series": "INV", "source": "erp", "external_ref": reference});
    let reply = app.post("/orders", &body).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body["order_number"].as_str().unwrap().to_owned()
}

fn credit_note(reference: &str, invoice: &str) -> Value {
    json!({"series": "NC", "source": "erp", "external_ref": reference, "corrects": invoice,
           "data": {"reason": "returned goods"}})
}

#[tokio::test]
async fn a_credit_note_corrects_a_live_invoice_and_refuses_a_void_or_unknown_one() {
    let app = spawn_app().await;
    invoices_and_credit_notes(&app).await;
    let (first, voided, third) = (
        invoice(&app, "i1").await,
        invoice(&app, "i2").await,
        invoice(&app, "i3").await,
    );
    let path = format!("/series/INV/orders/{voided}/void");
    let void = app.post(&path, &json!({"reason": "typo"})).await;
    assert_eq!(void.status, StatusCode::OK);

    let note = app.post("/orders", &credit_note("c1", &first)).await;
    assert_eq!(note.status, StatusCode::CREATED, "{}", note.body);
    assert_eq!(note.body["corrects"], first.as_str());
    let note_number = note.body["order_number"].as_str().unwrap().to_owned();
    // A repost is the same credit note; another invoice for its reference is a conflict.
    let again = app.post("/orders", &credit_note("c1", &first)).await;
    assert_eq!(
        (again.status, &again.body["order_number"]),
        (StatusCode::OK, &note.body["order_number"])
    );
    let other = app.post("/orders", &credit_note("c1", &third)).await;
    assert_problem(&other, StatusCode::CONFLICT, "idempotency_conflict");

    // The invoice shows its credit note wherever it is read: by its number, by its
    // reference, in a repost's answer and in the listing.
    let read = app.get(&format!("/series/INV/orders/{first}")).await;
    assert_eq!(read.body["credit_notes"], json!([note_number]));
    let by_ref = app.get("/sources/erp/orders/i1").await;
    assert_eq!(
        by_ref.body["credit_notes"],
        json!([note_number]),
        "{}",
        by_ref.body
    );
    let repost = json!({"series": "INV", "source": "erp", "external_ref": "i1"});
    let reposted = app.post("/orders", &repost).await;
    assert_eq!(reposted.status, StatusCode::OK, "{}", reposted.body);
    assert_eq!(reposted.body["credit_notes"], json!([note_number]));
    let listed = app.get("/series/INV/orders").await;
    assert_eq!(
        listed.body["orders"][0]["credit_notes"],
        json!([note_number])
    );

    let on_void = app.post("/orders", &credit_note("c2", &voided)).await;
    assert_problem(&on_void, StatusCode::CONFLICT, "invoice_void");
    let unknown = app.post("/orders", &credit_note("c3", "F26-99999")).await;
    assert_problem(&unknown, StatusCode::CONFLICT, "invoice_not_found");
    let bare = json!({"series": "NC", "source": "erp", "external_ref": "c4"});
    assert_problem(
        &app.post("/orders", &bare).await,
        StatusCode::BAD_REQUEST,
        "corrects_required",
    );
    let misplaced =
        json!({"series": "INV", "source": "erp", "external_ref": "i9", "corrects": first});
    assert_problem(
        &app.post("/orders", &misplaced).await,
        StatusCode::BAD_REQUEST,
        "invalid_corrects",
    );

    // A credited invoice stays live: the credit note corrects it.
    let refused = app
        .post(
            &format!("/series/INV/orders/{first}/void"),
            &json!({"reason": "x"}),
        )
        .await;
    assert_problem(&refused, StatusCode::CONFLICT, "invoice_credited");

    // A batch: two credit notes of one invoice (one transaction each) and one of a void one.
    let batch = json!({"series": "NC", "source": "erp", "orders": [
        {"external_ref": "b1", "corrects": third},
        {"external_ref": "b2", "corrects": third},
        {"external_ref": "b3", "corrects": voided},
    ]});
    let reply = app.post("/orders/batch", &batch).await;
    let codes: Vec<(&str, &str)> = reply.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap(),
                r["code"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("created", ""),
            ("created", ""),
            ("rejected", "invoice_void")
        ]
    );
    let read = app.get(&format!("/series/INV/orders/{third}")).await;
    assert_eq!(read.body["credit_notes"].as_array().unwrap().len(), 2);

    // The audit of the credited series lists its credit notes.
    let audit = app.get("/series/INV/audit").await.body;
    assert_eq!(
        audit["credited"][0]["order_number"],
        first.as_str(),
        "{audit}"
    );
    assert_eq!(audit["credited"].as_array().unwrap().len(), 2, "{audit}");
    assert_eq!(audit["chain"]["intact"], true);
    assert_eq!(credit_links(&app.scan().await, "NC", "INV"), 3);

    // A series credits another that exists, and not itself.
    let unknown = json!({"format": "X{seq:3}", "reset": "never", "credits": "NOPE"});
    assert_problem(
        &app.put("/series/X", &unknown).await,
        StatusCode::BAD_REQUEST,
        "invalid_credits",
    );
    let itself = json!({"format": "Y{seq:3}", "reset": "never", "credits": "Y"});
    assert_problem(
        &app.put("/series/Y", &itself).await,
        StatusCode::BAD_REQUEST,
        "invalid_credits",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn credit_notes_and_voids_racing_on_the_same_invoices_never_meet() {
    const INVOICES: usize = 30;
    let app = spawn_app().await;
    invoices_and_credit_notes(&app).await;
    let mut numbers = Vec::new();
    for k in 0..INVOICES {
        numbers.push(invoice(&app, &format!("i{k}")).await);
    }
    // Two systems credit every invoice while two operators void every one.
    let mut tasks = Vec::new();
    for role in 0..4 {
        let router = crate::helpers::router(store_on(app.store.table(), None).await);
        let numbers = numbers.clone();
        tasks.push(tokio::spawn(async move {
            let mut outcomes = Vec::new();
            for (k, number) in numbers.iter().enumerate() {
                let reply = if role < 2 {
                    let body = credit_note(&format!("c{role}-{k}"), number);
                    settle(&router, "/orders", &body.to_string()).await
                } else {
                    let path = format!("/series/INV/orders/{number}/void");
                    settle(&router, &path, r#"{"reason": "cancelled"}"#).await
                };
                outcomes.push((reply.status, reply.code().to_owned()));
            }
            outcomes
        }));
    }
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    for (role, outcomes) in results.iter().enumerate() {
        for (status, code) in outcomes {
            let allowed = if role < 2 {
                *status == StatusCode::CREATED || code == "invoice_void"
            } else {
                *status == StatusCode::OK || code == "invoice_credited"
            };
            assert!(allowed, "role {role}: {status} {code}");
        }
    }
    // Every invoice went one way: credited (both notes) or void (no note).
    let notes = credit_links(&app.scan().await, "NC", "INV");
    let credited = results[0]
        .iter()
        .filter(|(status, _)| *status == StatusCode::CREATED)
        .count();
    assert_eq!(notes, 2 * credited);
    let voided = results[2]
        .iter()
        .filter(|(status, _)| *status == StatusCode::OK)
        .count();
    assert_eq!(credited + voided, INVOICES);
}

#[tokio::test]
async fn two_spellings_of_one_invoice_in_a_batch_find_it_once_each() {
    let app = spawn_app().await;
    // A series that never resets reads its year as written: G2025-001 and G2026-001
    // both read as its first number.
    let invoices = json!({"format": "G{yyyy}-{seq:3}", "reset": "never"});
    app.define_series("GI", &invoices).await;
    let notes = json!({"format": "GC{seq:3}", "reset": "never", "credits": "GI"});
    app.define_series("GC", &notes).await;
    let body = json!({"series": "GI", "source": "erp", "external_ref": "i1"});
    let issued = app.post("/orders", &body).await;
    assert_eq!(issued.status, StatusCode::CREATED, "{}", issued.body);
    let number = issued.body["order_number"].as_str().unwrap().to_owned();
    let year: u32 = number[1..5].parse().unwrap();
    let other = format!("G{}-001", year - 1);
    let batch = json!({"series": "GC", "source": "erp", "orders": [
        {"external_ref": "c1", "corrects": number},
        {"external_ref": "c2", "corrects": other},
    ]});
    let reply = app.post("/orders/batch", &batch).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let results = &reply.body["results"];
    assert_eq!(results[0]["status"], "created", "{}", reply.body);
    assert_eq!(
        (&results[1]["status"], &results[1]["code"]),
        (&json!("rejected"), &json!("invoice_not_found")),
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn an_invoice_takes_a_hundred_credit_notes_and_refuses_more() {
    let app = spawn_app().await;
    invoices_and_credit_notes(&app).await;
    let number = invoice(&app, "i1").await;
    // One batch of 101: each reads the invoice with no note, so the transaction's
    // condition refuses the last.
    let orders: Vec<Value> = (0..=MAX_CREDIT_NOTES)
        .map(|k| json!({"external_ref": format!("c{k}"), "corrects": number}))
        .collect();
    let batch = json!({"series": "NC", "source": "erp", "orders": orders});
    let reply = app.post("/orders/batch", &batch).await;
    let results = reply.body["results"].as_array().unwrap();
    let created = results.iter().filter(|r| r["status"] == "created").count();
    assert_eq!(created, MAX_CREDIT_NOTES, "{}", reply.body);
    let refused = &results[MAX_CREDIT_NOTES];
    assert_eq!(refused["code"], "credit_notes_full", "{refused}");
    // Alone, the next is refused from the invoice as read, before any transaction.
    let next = app.post("/orders", &credit_note("c-next", &number)).await;
    assert_problem(&next, StatusCode::CONFLICT, "credit_notes_full");
    let read = app.get(&format!("/series/INV/orders/{number}")).await;
    let notes = read.body["credit_notes"].as_array().unwrap().len();
    assert_eq!(notes, MAX_CREDIT_NOTES);
}
