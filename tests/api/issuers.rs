//! S2: no two series of one issuer can render the same text. A definition or a format
//! or code change that could is refused with an example; many definitions and changes
//! racing leave no two live series of one issuer that overlap. (Series defined before
//! the rule: crates/cli/tests/cli/register_series.rs, with the command that enters them.)

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::{Value, json};
use tally::store::Store;
use tally_domain::ids::{IssuerId, SeriesId};
use tally_domain::series::issuer::Entry;
use tally_domain::series::{LocalDate, Names, Series, Texts};

use crate::helpers::{TestApp, assert_problem, spawn_app};

/// Every series of the table, by issuer.
async fn series_by_issuer(store: &Store) -> BTreeMap<IssuerId, Vec<Series>> {
    let mut by_issuer: BTreeMap<IssuerId, Vec<Series>> = BTreeMap::new();
    let mut from = None;
    loop {
        let page = store.scan_series(from).await.unwrap();
        for series in page.series {
            by_issuer
                .entry(series.definition.issuer.clone())
                .or_default()
                .push(series);
        }
        match page.next {
            Some(next) => from = Some(next),
            None => return by_issuer,
        }
    }
}

/// S2, read back: no two series of one issuer share a text, in any of their formats, and
/// each issuer's item holds every one of its series as it is.
async fn assert_no_two_series_of_one_issuer_overlap(store: &Store) -> usize {
    let today = LocalDate {
        year: 2026,
        month: 11,
        day: 29,
        fiscal_year: 2026,
    };
    let mut live = 0;
    for (issuer, series) in series_by_issuer(store).await {
        let item = store.get_issuer(&issuer).await.unwrap();
        assert_eq!(item.series.len(), series.len(), "issuer {issuer}");
        let texts: Vec<(SeriesId, Vec<Texts>)> = series
            .iter()
            .map(|s| {
                let entry = Entry::of(s);
                assert_eq!(
                    item.series.get(&s.series_id),
                    Some(&entry),
                    "{}",
                    s.series_id
                );
                let code = entry.code.as_ref().map(|c| c.as_str());
                let names = Names {
                    series: &s.series_id,
                    code,
                };
                let formats = entry
                    .formats
                    .iter()
                    .map(|f| Texts::of(f, names, &today))
                    .collect();
                (s.series_id.clone(), formats)
            })
            .collect();
        for (i, (a, a_texts)) in texts.iter().enumerate() {
            for (b, b_texts) in &texts[i + 1..] {
                for x in a_texts {
                    for y in b_texts {
                        assert_eq!(x.shared(y), None, "series {a} and {b} of issuer {issuer}");
                    }
                }
            }
        }
        live += series.len();
    }
    live
}

#[tokio::test]
async fn s2_a_series_that_could_render_another_series_numbers_is_refused_with_an_example() {
    let app = spawn_app().await;
    app.define_series("UABC", &json!({})).await;
    // The typo: series UABX given UABC's prefix.
    let typo = app
        .put("/series/UABX", &json!({"format": "UABC{yy}{seq:6}"}))
        .await;
    assert_problem(&typo, StatusCode::CONFLICT, "format_overlaps");
    assert_eq!(typo.body["series"], "UABC");
    let example = typo.body["example"].as_str().unwrap();
    assert!(
        example.len() == 12 && example.starts_with("UABC") && example.ends_with("000001"),
        "{example}"
    );
    let detail = typo.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("series UABC") && detail.contains(example),
        "{detail}"
    );
    assert_eq!(app.get("/series/UABX").await.code(), "series_not_found");
    // Another issuer numbers its own way; an identical repeat is answered.
    let elsewhere = json!({"format": "UABC{yy}{seq:6}", "issuer": "acme-gmbh"});
    let other = app.put("/series/UABX", &elsewhere).await;
    assert_eq!(other.status, StatusCode::CREATED, "{}", other.body);
    assert_eq!(other.body["issuer"], "acme-gmbh");
    assert_eq!(
        app.put("/series/UABX", &elsewhere).await.status,
        StatusCode::OK
    );
    // The issuer is part of the definition.
    let moved = app
        .put("/series/UABX", &json!({"format": "UABC{yy}{seq:6}"}))
        .await;
    assert_problem(&moved, StatusCode::CONFLICT, "series_exists");
    assert_eq!(app.get("/series/UABC").await.body["issuer"], "default");

    // A format change that could render another series' texts is refused too, and past
    // formats count.
    app.define_series("B", &json!({"format": "B{seq:4}", "reset": "never"}))
        .await;
    let change = app
        .patch("/series/B", &json!({"format": "UABC26{seq:6!}"}))
        .await;
    assert_problem(&change, StatusCode::CONFLICT, "format_overlaps");
    let renamed = app
        .patch("/series/B", &json!({"format": "BB{seq:4}"}))
        .await;
    assert_eq!(renamed.status, StatusCode::OK, "{}", renamed.body);
    let c = app
        .put(
            "/series/C",
            &json!({"format": "B{seq:2}", "reset": "never"}),
        )
        .await;
    assert_problem(&c, StatusCode::CONFLICT, "format_overlaps");
    assert_eq!(c.body["series"], "B");

    // A new validation code is checked where the format shows it.
    app.define_series(
        "PT",
        &json!({"format": "FT{code}/{seq:1}", "reset": "never", "validation_code": "AAA"}),
    )
    .await;
    app.define_series("Q", &json!({"format": "FTBBB/{seq:1}", "reset": "never"}))
        .await;
    let recoded = app
        .patch("/series/PT", &json!({"validation_code": "BBB"}))
        .await;
    assert_problem(&recoded, StatusCode::CONFLICT, "format_overlaps");
    assert_eq!(app.get("/series/PT").await.body["validation_code"], "AAA");
    assert_eq!(
        assert_no_two_series_of_one_issuer_overlap(&app.store).await,
        5
    );
}

/// Definitions of `count` series, at once: the answers' statuses.
async fn define_at_once(app: &Arc<TestApp>, bodies: Vec<(String, Value)>) -> Vec<(String, u16)> {
    let tasks: Vec<_> = bodies
        .into_iter()
        .map(|(id, body)| {
            let app = Arc::clone(app);
            tokio::spawn(async move {
                let reply = app.put(&format!("/series/{id}"), &body).await;
                (id, reply.status.as_u16(), reply.code().to_owned())
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        let (id, status, code) = task.await.unwrap();
        assert!(
            status == 201 || code == "format_overlaps",
            "{id}: {status} {code}"
        );
        answers.push((id, status));
    }
    answers
}

#[tokio::test]
async fn s2_racing_definitions_and_changes_that_overlap_cannot_both_win() {
    let app = Arc::new(spawn_app().await);
    // 24 definitions whose formats all render `INV` and digits, for one issuer; 8 with
    // prefixes of their own; one for another issuer.
    let mut bodies: Vec<(String, Value)> = (0..24)
        .map(|i| {
            let body = json!({"format": format!("INV{{seq:{}}}", 1 + i % 6), "reset": "never", "issuer": "acme"});
            (format!("S{i:02}"), body)
        })
        .collect();
    bodies.extend((0..8).map(|i| {
        let prefix = char::from(b'A' + i);
        let body =
            json!({"format": format!("{prefix}-{{seq:4}}"), "reset": "never", "issuer": "acme"});
        (format!("P{prefix}"), body)
    }));
    bodies.push((
        "OTHER".into(),
        json!({"format": "INV{seq:4}", "reset": "never", "issuer": "beta"}),
    ));
    let answers = define_at_once(&app, bodies).await;
    let won = |prefix: &str| {
        answers
            .iter()
            .filter(|(id, status)| id.starts_with(prefix) && *status == 201)
            .count()
    };
    assert_eq!(won("S"), 1, "{answers:?}");
    assert_eq!(won("P"), 8, "{answers:?}");
    assert_eq!(won("OTHER"), 1, "{answers:?}");

    // The 8 series with prefixes of their own all move to formats that overlap one
    // another at once: one change wins.
    let changes: Vec<_> = (0..8)
        .map(|i| {
            let app = Arc::clone(&app);
            let prefix = char::from(b'A' + i);
            tokio::spawn(async move {
                let body = json!({"format": format!("Z{{seq:{}}}", 1 + i % 4)});
                let reply = app.patch(&format!("/series/P{prefix}"), &body).await;
                (reply.status.as_u16(), reply.code().to_owned())
            })
        })
        .collect();
    let mut changed = 0;
    for task in changes {
        let (status, code) = task.await.unwrap();
        assert!(
            status == 200 || code == "format_overlaps",
            "{status} {code}"
        );
        changed += usize::from(status == 200);
    }
    assert_eq!(changed, 1);
    assert_eq!(
        assert_no_two_series_of_one_issuer_overlap(&app.store).await,
        10
    );
}
