//! Format changes against the series' own past and the turn of a period: a text names one
//! order per series (O1), a version a period numbers in stays, and a change made as the
//! period turns is answered truly.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::json;
use tally::orders::{ItemOutcome, OrderError, OrderService, SeriesChange, SettingsChange};
use tally::store::Store;
use tally_domain::access::SourceAccess;
use tally_domain::ids::{SeriesId, SourceId};
use tally_domain::journal::Operator;
use tally_domain::series::{Reset, SeriesDefinition, ValidationCode};

use crate::helpers::{assert_problem, fresh_store, order_input, spawn_app};
use crate::ledger::define;

/// A service whose clock the test sets.
fn service_at(store: &Store, at: &str) -> (OrderService, Arc<Mutex<Timestamp>>) {
    let now = Arc::new(Mutex::new(at.parse::<Timestamp>().unwrap()));
    let clock = now.clone();
    let service = OrderService::with_clock(store.clone(), Arc::new(move || *clock.lock().unwrap()));
    (service, now)
}

fn set(clock: &Mutex<Timestamp>, at: &str) {
    *clock.lock().unwrap() = at.parse().unwrap();
}

async fn number(service: &OrderService, series: &SeriesId, r: &str) -> Result<String, OrderError> {
    let outcome = service
        .create_orders(
            series,
            &SourceId::parse("erp").unwrap(),
            vec![order_input(r)],
            &SourceAccess::All,
        )
        .await?;
    match &outcome[0] {
        ItemOutcome::Created(o) => Ok(o.order_number.clone()),
        other => panic!("{other:?}"),
    }
}

async fn define_daily(service: &OrderService, id: &str, format: &str, gapless: bool) -> SeriesId {
    let series = SeriesId::parse(id).unwrap();
    let definition = SeriesDefinition::new(format, Reset::Daily, gapless, 1).unwrap();
    service
        .define_series(&series, definition, &Operator::local())
        .await
        .unwrap();
    series
}

async fn reformat(
    service: &OrderService,
    series: &SeriesId,
    format: &str,
) -> Result<tally::orders::SeriesStatus, OrderError> {
    let change = SeriesChange::Format(format.into());
    service
        .change_series(series, change, &Operator::local())
        .await
}

/// Day and month swapped: 2026-03-04 numbered `D260403-001`, which 2026-04-03 would
/// number again in the new format.
#[tokio::test]
async fn a_format_that_could_repeat_a_number_of_another_day_is_refused() {
    let (store, _table) = fresh_store(None).await;
    let (service, clock) = service_at(&store, "2026-03-04T10:00:00Z");
    let daily = define_daily(&service, "D", "D{yy}{dd}{mm}-{seq:3}", true).await;
    assert_eq!(number(&service, &daily, "a").await.unwrap(), "D260403-001");
    let Err(OrderError::FormatRepeats(repeat)) =
        reformat(&service, &daily, "D{yy}{mm}{dd}-{seq:3}").await
    else {
        panic!("the swapped format was taken");
    };
    assert_eq!(repeat.series, daily);
    set(&clock, "2026-04-03T10:00:00Z");
    assert_eq!(number(&service, &daily, "b").await.unwrap(), "D260304-001");
    // Another prefix keeps the dates where they were: taken.
    reformat(&service, &daily, "E{yy}{dd}{mm}-{seq:3}")
        .await
        .unwrap();
    set(&clock, "2026-04-04T10:00:00Z");
    assert_eq!(number(&service, &daily, "c").await.unwrap(), "E260404-001");
}

/// `A{yy}{seq:4}` in one year and `A{seq:4}{yy}` the next both render `A262727`: the
/// change is refused with the series named; a wider counter or another prefix is not.
#[tokio::test]
async fn a_yearly_series_refuses_a_format_that_moves_its_year_and_takes_a_wider_counter() {
    let app = spawn_app().await;
    define(
        &app,
        "YR",
        json!({"format": "A{yy}{seq:4}", "reset": "yearly"}),
    )
    .await;
    app.post_range("YR", 0, 1).await;
    let moved = app
        .patch("/series/YR", &json!({"format": "A{seq:4}{yy}"}))
        .await;
    assert_problem(&moved, StatusCode::CONFLICT, "format_overlaps");
    assert_eq!(moved.body["series"], "YR");
    let example = moved.body["example"].as_str().unwrap();
    assert!(example.starts_with('A'), "{example}");
    for format in ["A{yy}{seq:5}", "B{yy}{seq:5}"] {
        let changed = app.patch("/series/YR", &json!({"format": format})).await;
        assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    }
}

/// Process P read the series before another process gave it a code and a format showing
/// it for the current period; P numbers with the code it learns from the counter, and the
/// code is fixed from then on.
#[tokio::test]
async fn a_code_learned_from_a_counter_is_fixed_before_a_number_shows_it() {
    for gapless in [true, false] {
        let (store, _table) = fresh_store(None).await;
        let (p, _) = service_at(&store, "2026-03-04T10:00:00Z");
        let (other, _) = service_at(&store, "2026-03-04T10:00:00Z");
        let series = SeriesId::parse("PT").unwrap();
        let definition = SeriesDefinition::new("F{yy}{seq:3}", Reset::Yearly, gapless, 1).unwrap();
        p.define_series(&series, definition, &Operator::local())
            .await
            .unwrap();
        assert!(!p.series_status(&series).await.unwrap().series.numbered);
        let code = |code: &str| {
            SeriesChange::Settings(SettingsChange {
                validation_code: Some(ValidationCode::parse(code).unwrap()),
                ..SettingsChange::default()
            })
        };
        for change in [
            code("ABC"),
            SeriesChange::Format("F{code}-{yy}{seq:3}".into()),
        ] {
            other
                .change_series(&series, change, &Operator::local())
                .await
                .unwrap();
        }
        assert_eq!(number(&p, &series, "a").await.unwrap(), "FABC-26001");
        let recode = code("XYZ");
        assert!(
            matches!(
                other
                    .change_series(&series, recode, &Operator::local())
                    .await,
                Err(OrderError::CodeInUse)
            ),
            "gapless: {gapless}"
        );
    }
}

/// The daily format `{series}-<prefix><date>-<counter>`.
fn dated(prefix: &str) -> String {
    format!("{{series}}-{prefix}{{yy}}{{mm}}{{dd}}-{{seq:3}}")
}

/// A change whose clock still says 2026-03-04 replaces the version pending for that day
/// only while 2026-03-05 numbers in no version: a day that numbers in it keeps it, and a
/// process that planned with it learns the new one.
#[tokio::test]
async fn a_change_as_the_day_turns_never_removes_a_version_the_next_day_numbers_in() {
    let (store, _table) = fresh_store(None).await;
    let (late, _) = service_at(&store, "2026-03-04T23:59:59Z");
    let (early, _) = service_at(&store, "2026-03-05T00:00:01Z");
    for gapless in [true, false] {
        let id = if gapless { "G" } else { "F" };
        let numbered = define_daily(&late, id, &dated("D"), gapless).await;
        reformat(&late, &numbered, &dated("E")).await.unwrap();
        let first = format!("{id}-E260305-001");
        assert_eq!(
            number(&early, &numbered, &format!("{id}a")).await.unwrap(),
            first
        );
        // The version 2026-03-05 numbers in stays: the change cannot start on the 4th,
        // nor on the 5th, which has a number.
        assert!(matches!(
            reformat(&late, &numbered, &dated("F")).await,
            Err(OrderError::PeriodTurning)
        ));
        assert_eq!(
            number(&early, &numbered, &format!("{id}b")).await.unwrap(),
            format!("{id}-E260305-002")
        );
        let found = early
            .find_in_series(&numbered, &first, &SourceAccess::All)
            .await
            .unwrap();
        assert_eq!(found.external_ref.as_str(), format!("{id}a"));
    }
    // A process that read the series on the 5th plans with the pending version; the
    // change that replaces it fixes the 5th to the new one, which the process learns.
    for gapless in [true, false] {
        let id = if gapless { "GP" } else { "FP" };
        let planned = define_daily(&late, id, &dated("D"), gapless).await;
        reformat(&late, &planned, &dated("E")).await.unwrap();
        early.series_status(&planned).await.unwrap();
        let status = reformat(&late, &planned, &dated("F")).await.unwrap();
        let versions: Vec<u32> = status.series.formats.iter().map(|f| f.version).collect();
        assert_eq!(versions, [1, 3]);
        assert_eq!(
            number(&early, &planned, &format!("{id}a")).await.unwrap(),
            format!("{id}-F260305-001")
        );
        assert_eq!(
            number(&late, &planned, &format!("{id}b")).await.unwrap(),
            format!("{id}-F260304-001")
        );
    }
}

/// Both days a change made at 23:59:59 could start from have numbers: the change does
/// not claim the series never resets; it is refused for now (a 503 with `Retry-After`)
/// and holds once the process's day has turned.
#[tokio::test]
async fn a_change_meeting_numbers_on_both_days_is_answered_as_the_day_turning() {
    let (store, _table) = fresh_store(None).await;
    let (late, late_clock) = service_at(&store, "2026-03-04T23:59:59Z");
    let (early, _) = service_at(&store, "2026-03-05T00:00:01Z");
    let daily = define_daily(&late, "T", "D{yy}{mm}{dd}-{seq:3}", true).await;
    assert_eq!(number(&late, &daily, "a").await.unwrap(), "D260304-001");
    assert_eq!(number(&early, &daily, "b").await.unwrap(), "D260305-001");
    let turning = reformat(&late, &daily, "E{yy}{mm}{dd}-{seq:3}").await;
    assert!(
        matches!(turning, Err(OrderError::PeriodTurning)),
        "{turning:?}"
    );
    set(&late_clock, "2026-03-05T00:00:02Z");
    let status = reformat(&late, &daily, "E{yy}{mm}{dd}-{seq:3}")
        .await
        .unwrap();
    let from = status.series.formats.last().unwrap().from.clone().unwrap();
    assert_eq!(from.as_str(), "2026-03-06");
}
