//! Credit notes and voids under faults: twin systems post each credit note and twin
//! operators void each invoice, repeating their 503s. Each credit note is numbered once
//! and listed once by its invoice, an invoice with credit notes is never voided, each void
//! is journalled once, and a repeat answers the same number, also after an answer cut
//! short or answered as still in progress.

use super::*;
use crate::helpers::post_raw;
use crate::invariants::credit_links;
use crate::journal::checked_journal;

/// Invoices credited (two credit notes each), then invoices voided.
const CREDITED: usize = 2;
const VOIDED: usize = 2;

fn credit_note(note: usize) -> serde_json::Value {
    let invoice = format!("F{:05}", note % CREDITED + 1);
    json!({"series": "NC", "source": "erp", "external_ref": format!("c{note}"),
           "corrects": invoice, "data": {"reason": "returned goods"}})
}

/// Every journal entry checked ([`checked_journal`]); how many name `target`.
async fn journalled(store: &tally::store::Store, target: &str) -> usize {
    let entries = checked_journal(store).await;
    entries.iter().filter(|e| e.draft.target == target).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn credit_notes_and_voids_under_faults_settle_once_and_keep_the_links_and_chains() {
    let app = spawn_app().await;
    let invoices = json!({"format": "F{seq:5}", "reset": "never", "gapless": true});
    app.define_series("INV", &invoices).await;
    let notes = json!({"format": "NC{seq:5}", "reset": "never", "gapless": true, "credits": "INV"});
    app.define_series("NC", &notes).await;
    let numbered = app.post_range("INV", 0, CREDITED + VOIDED).await;
    assert_eq!(numbered.len(), CREDITED + VOIDED);
    let proxy = FaultProxy::start(&endpoint()).await;
    proxy.set(every_fault(0.2));
    let mut twins = Vec::new();
    for _twin in 0..2 {
        let instance = faulty_instance(&proxy, app.table(), Duration::from_secs(20)).await;
        twins.push(tokio::spawn(async move {
            let instance = &instance;
            let notes = (0..2 * CREDITED).map(|note| async move {
                let reply = settle(instance, "/orders", &credit_note(note).to_string()).await;
                assert!(reply.status.is_success(), "c{note}: {}", reply.body);
                reply.body["order_number"].as_str().unwrap().to_owned()
            });
            let answers = futures::future::join_all(notes).await;
            // The credited invoices stay live; the others are voided once.
            let voids = (1..=CREDITED + VOIDED).map(|invoice| async move {
                let path = format!("/series/INV/orders/F{invoice:05}/void");
                let reply = settle(instance, &path, r#"{"reason": "cancelled"}"#).await;
                let expected = if invoice <= CREDITED {
                    (StatusCode::CONFLICT, "invoice_credited")
                } else {
                    (StatusCode::OK, "")
                };
                assert_eq!((reply.status, reply.code()), expected, "{}", reply.body);
            });
            futures::future::join_all(voids).await;
            answers
        }));
    }
    let answers: Vec<Vec<String>> = futures::future::join_all(twins)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let counts = proxy.counts();
    assert!(counts.errors_after + counts.lost_after > 0, "{counts:?}");
    // Both twins were answered the same credit notes.
    assert_eq!(answers[0], answers[1]);
    let items = app.scan().await;
    // L1, and O1, O2, O4 for the credit notes: one each, numbered without a gap.
    assert_eq!(credit_links(&items, "NC", "INV"), 2 * CREDITED);
    let stored = numbered_orders(&items, "NC");
    let mut counters: Vec<u64> = stored.values().map(|n| n.counter).collect();
    counters.sort_unstable();
    assert_eq!(counters, (1..=2 * CREDITED as u64).collect::<Vec<_>>());
    for invoice in 1..=CREDITED {
        let read = app.get(&format!("/series/INV/orders/F{invoice:05}")).await;
        assert_eq!(read.body["credit_notes"].as_array().unwrap().len(), 2);
    }
    for series in ["INV", "NC"] {
        let audit = app.get(&format!("/series/{series}/audit")).await.body;
        assert_eq!(audit["chain"]["intact"], true, "{audit}");
        assert!(audit["gaps"].as_array().unwrap().is_empty(), "{audit}");
    }
    let audit = app.get("/series/INV/audit").await.body;
    assert_eq!(audit["voided"], VOIDED, "{audit}");
    // J1: each void journalled once; a refused void journals nothing.
    for invoice in 1..=CREDITED + VOIDED {
        let target = format!("series/INV/order/F{invoice:05}");
        let expected = usize::from(invoice > CREDITED);
        assert_eq!(journalled(&app.store, &target).await, expected, "{target}");
    }
    // A repeat answers the same number.
    for (note, number) in answers[0].iter().enumerate() {
        let again = app.post("/orders", &credit_note(note)).await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.body);
        assert_eq!(again.body["order_number"], number.as_str());
    }
}

/// The first transaction of a credit note, then of a void, commits and is answered with
/// `fault`: the answer is the outcome or a `503` with `Retry-After`, never a `500`; the
/// repeat answers what committed, once.
async fn replayed_once(fault: Faults) {
    let app = spawn_app().await;
    let invoices = json!({"format": "F{seq:5}", "reset": "never", "gapless": true});
    app.define_series("INV", &invoices).await;
    let notes = json!({"format": "NC{seq:5}", "reset": "never", "gapless": true, "credits": "INV"});
    app.define_series("NC", &notes).await;
    app.post_range("INV", 0, 2).await;
    let proxy = FaultProxy::start(&endpoint()).await;
    let instance = faulty_instance(&proxy, app.table(), Duration::from_secs(10)).await;
    let note = credit_note(0).to_string();
    let void = r#"{"reason": "cancelled"}"#;
    let mut repeats = Vec::new();
    for (path, body) in [
        ("/orders", note.as_str()),
        ("/series/INV/orders/F00002/void", void),
    ] {
        proxy.set(Faults {
            operations: Some(vec!["TransactWriteItems".into()]),
            ..fault.clone()
        });
        let injected =
            |c: tally_testkit::fault_proxy::Counts| c.truncated_after + c.in_progress_after;
        let before = injected(proxy.counts());
        let first = post_raw(&instance, path, "application/json", body.to_owned()).await;
        assert_eq!(injected(proxy.counts()), before + 1, "{path}: no fault");
        let unknown = first.status == StatusCode::SERVICE_UNAVAILABLE;
        assert!(
            first.status.is_success() || unknown && first.headers.contains_key("retry-after"),
            "{path}: {} {}",
            first.status,
            first.body
        );
        proxy.set(Faults::default());
        let repeat = settle(&instance, path, body).await;
        assert_eq!(repeat.status, StatusCode::OK, "{path}: {}", repeat.body);
        if !unknown {
            for field in ["order_number", "voided_at"] {
                assert_eq!(first.body[field], repeat.body[field], "{path}: {field}");
            }
        }
        repeats.push(repeat);
    }
    let items = app.scan().await;
    assert_eq!(credit_links(&items, "NC", "INV"), 1);
    let stored = numbered_orders(&items, "NC");
    let numbers: Vec<&str> = stored.values().map(|n| n.number.as_str()).collect();
    assert_eq!(numbers, [repeats[0].body["order_number"].as_str().unwrap()]);
    assert_eq!(numbers, ["NC00001"]);
    assert!(
        repeats[1].body["voided_at"].is_string(),
        "{}",
        repeats[1].body
    );
    assert_eq!(journalled(&app.store, "series/INV/order/F00002").await, 1);
}

#[tokio::test]
async fn a_credit_note_or_a_void_answered_in_a_cut_body_is_replayed_once() {
    replayed_once(Faults {
        truncated_after: 1.0,
        at_most: Some(1),
        ..Faults::default()
    })
    .await;
}

#[tokio::test]
async fn a_credit_note_or_a_void_answered_as_still_in_progress_is_replayed_once() {
    replayed_once(Faults {
        in_progress_after: 1.0,
        at_most: Some(1),
        ..Faults::default()
    })
    .await;
}
