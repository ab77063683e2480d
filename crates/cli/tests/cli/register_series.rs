//! `tally register-series`: series defined before S2 (no two series of one issuer render
//! the same text) keep numbering, are entered on their issuers as they are, and are
//! flagged where they overlap; a repeated definition of one enters it too.

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::json;
use tally::store::Store;
use tally_domain::ids::{IssuerId, SeriesId};
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::series::{Reset, Series, SeriesDefinition};
use tally_testkit::http::assert_problem;

use crate::helpers::{endpoint, spawn_app};

/// What `tally register-series` says of the table of `store`; it must succeed.
fn register_series(store: &Store) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tally"))
        .arg("register-series")
        .env("TABLE_NAME", store.table())
        .env("DYNAMODB_ENDPOINT", endpoint())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    said
}

/// A series as a version without issuers wrote it: its item alone, on no issuer's item.
async fn define_before_the_rule(store: &Store, id: &str, format: &str) {
    let series = Series::new(
        SeriesId::parse(id).unwrap(),
        SeriesDefinition::new(format, Reset::Never, true, 1).unwrap(),
        Timestamp::now(),
    );
    let entry = Draft::new(
        Timestamp::now(),
        &Operator::local(),
        Action::SeriesDefined,
        format!("series/{id}"),
        &serde_json::json!({ "format": format }),
    );
    store.insert_series(&series, None, &entry).await.unwrap();
}

#[tokio::test]
async fn s2_series_defined_before_the_rule_keep_numbering_and_are_flagged_once_entered() {
    let app = spawn_app().await;
    define_before_the_rule(&app.store, "OLD1", "INV{seq:4}").await;
    define_before_the_rule(&app.store, "OLD2", "INV{seq:5}").await;
    define_before_the_rule(&app.store, "OLD3", "K{seq:5}").await;
    // `tally register-series` enters every series, as it is, and names the overlaps.
    let said = register_series(&app.store);
    assert!(
        said.contains("3 series entered on their issuers (2 overlapping another)"),
        "{said}"
    );
    assert!(
        said.contains("series OLD1 and OLD2 of issuer default could both render INV"),
        "{said}"
    );

    // Both keep numbering, and say whom they overlap wherever they are read.
    for id in ["OLD1", "OLD2"] {
        let order = json!({"source": "erp", "external_ref": format!("{id}-1")});
        let posted = app.post(&format!("/series/{id}/orders"), &order).await;
        assert_eq!(posted.status, StatusCode::CREATED, "{}", posted.body);
    }
    let read = app.get("/series/OLD1").await;
    assert_eq!(read.body["overlaps"][0]["series"], "OLD2", "{}", read.body);
    let example = read.body["overlaps"][0]["example"].as_str().unwrap();
    assert!(
        example.starts_with("INV") && example.len() >= 8,
        "{example}"
    );
    let audit = app.get("/series/OLD2/audit").await;
    assert_eq!(
        audit.body["overlaps"][0]["series"], "OLD1",
        "{}",
        audit.body
    );
    assert!(app.get("/series/OLD3").await.body.get("overlaps").is_none());
    // A change that renders nothing new is allowed; a new overlap is not.
    let moved = app
        .patch("/series/OLD1", &json!({"next": 10, "reason": "skip"}))
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    let new = app
        .put(
            "/series/NEW",
            &json!({"format": "K{seq:6}", "reset": "never"}),
        )
        .await;
    assert_problem(&new, StatusCode::CONFLICT, "format_overlaps");
    assert_eq!(new.body["series"], "OLD3");
    // Entering again enters nothing.
    let said = register_series(&app.store);
    assert!(
        said.contains(
            "0 series entered on their issuers (0 overlapping another), 3 entered before"
        ),
        "{said}"
    );
}

#[tokio::test]
async fn s2_a_repeated_definition_of_a_series_from_before_the_rule_enters_it() {
    let app = spawn_app().await;
    define_before_the_rule(&app.store, "LEGACY", "L{seq:3}").await;
    let repeat = app
        .put(
            "/series/LEGACY",
            &json!({"format": "L{seq:3}", "reset": "never"}),
        )
        .await;
    assert_eq!(repeat.status, StatusCode::OK, "{}", repeat.body);
    let issuer = app.store.get_issuer(&IssuerId::deployment()).await.unwrap();
    assert!(
        issuer
            .series
            .contains_key(&SeriesId::parse("LEGACY").unwrap())
    );
    let clash = app
        .put(
            "/series/L2",
            &json!({"format": "L{seq:4}", "reset": "never"}),
        )
        .await;
    assert_problem(&clash, StatusCode::CONFLICT, "format_overlaps");
}
