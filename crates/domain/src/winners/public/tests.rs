use super::*;
use crate::winners::check::Outcome;

#[test]
fn what_is_no_draw_answer_fails_the_format_step_with_its_reason() {
    let trusted = BeaconNetworks::default();
    let eligible =
        r#"{"total_tickets": 8, "eligible_count": 1, "eligible_digest": "00", "bitmap": "AQ=="}"#;
    let old = r#"{"prizes": [], "proof": {"algorithm": "tally-draw-v1", "seed": "", "seed_commitment": "", "total_tickets": 8, "prizes": 1, "eligible_count": 1, "eligible_digest": "", "frozen_at": "", "drawn_at": "", "beacon": null, "picks": []}}"#;
    for (winners, eligible, reason) in [
        ("{}", eligible, "the winners answer"),
        ("not json", eligible, "the winners answer"),
        (old, eligible, "tally-draw-v1"),
        (old, "[]", "the eligible list"),
    ] {
        let report = check_answers(winners, eligible, None, &trusted);
        assert_eq!(report.steps.len(), 1);
        assert_eq!(
            (report.steps[0].id, report.steps[0].outcome),
            ("format", Outcome::Fail)
        );
        assert!(report.steps[0].detail.contains(reason), "{report:?}");
        assert!(!report.passed());
    }
}

/// A winners answer of the current algorithm whose proof has these fields besides.
fn answer(fields: &str) -> String {
    format!(
        r#"{{"prizes": [], "proof": {{"algorithm": "{ALGORITHM}", "seed": "", "seed_commitment": "", "eligible_count": 1, "eligible_digest": "", "frozen_at": "", "beacon": null, "picks": [], {fields}}}}}"#
    )
}

#[test]
fn a_proof_past_the_draws_limits_fails_the_format_step_before_any_derivation() {
    let trusted = BeaconNetworks::default();
    let eligible =
        r#"{"total_tickets": 8, "eligible_count": 1, "eligible_digest": "00", "bitmap": "AQ=="}"#;
    let instant = |count: u64| {
        format!(
            r#""instant_wins": {{"algorithm": "{INSTANT_ALGORITHM}", "key": "", "commitment": "", "prizes": [{{"prize": "car", "count": {count}}}], "map": [], "awards": []}}"#
        )
    };
    for (fields, reason) in [
        (
            format!(r#""total_tickets": 0, "prizes": 1, {}"#, instant(0)),
            "0 tickets",
        ),
        (
            r#""total_tickets": 10000001, "prizes": 1"#.to_owned(),
            "10000001 tickets",
        ),
        (r#""total_tickets": 8, "prizes": 0"#.to_owned(), "0 prizes"),
        (
            r#""total_tickets": 8, "prizes": 98"#.to_owned(),
            "98 prizes",
        ),
        // Four billion slots to derive, had the count not been bounded first.
        (
            format!(
                r#""total_tickets": 10000000, "prizes": 1, {}"#,
                instant(4_000_000_000)
            ),
            "4000000000 instant-winning numbers",
        ),
    ] {
        let report = check_answers(&answer(&fields), eligible, None, &trusted);
        assert_eq!(
            (
                report.steps.len(),
                report.steps[0].id,
                report.steps[0].outcome
            ),
            (1, "format", Outcome::Fail),
            "{fields}"
        );
        assert!(report.steps[0].detail.contains(reason), "{report:?}");
    }
}

#[test]
fn a_field_given_twice_fails_the_format_step() {
    let trusted = BeaconNetworks::default();
    let eligible = r#"{"total_tickets": 8, "eligible_count": 1, "eligible_digest": "00", "eligible_count": 2, "bitmap": "AQ=="}"#;
    let winners = answer(r#""total_tickets": 8, "prizes": 1"#);
    let report = check_answers(&winners, eligible, None, &trusted);
    assert_eq!(
        (report.steps[0].id, report.steps[0].outcome),
        ("format", Outcome::Fail)
    );
    assert!(
        report.steps[0].detail.contains("duplicate field"),
        "{report:?}"
    );
}
