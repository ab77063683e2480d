//! What the journal records of an operator's action on a series: its definition, a change
//! of its settings or of its format, a move of its counter. Each records the fields the
//! action set, with their new values.

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::order::Move;
use tally_domain::series::{Period, Ranges, Series, SeriesDefinition};
use tally_domain::time::rfc3339_millis;

fn target(series: &Series) -> String {
    format!("series/{}", series.series_id)
}

fn ranges(ranges: &Ranges) -> Value {
    ranges
        .as_slice()
        .iter()
        .map(|r| {
            json!({
                "from": r.from,
                "to": r.to,
                "authority_ref": r.authority_ref,
                "valid_until": r.valid_until.map(rfc3339_millis),
            })
        })
        .collect()
}

fn definition(d: &SeriesDefinition) -> Value {
    json!({
        "issuer": d.issuer.to_string(),
        "format": d.format.as_str(),
        "reset": d.reset.as_str(),
        "gapless": d.gapless,
        "start": d.start,
        "timezone": d.calendar.timezone.as_str(),
        "fiscal_year_start": d.calendar.fiscal_year_start,
        "max_length": d.rules.max_length,
        "allowed_characters": d.rules.allowed_characters.as_ref().map(|r| r.as_str()),
        "validation_code": d.validation_code.as_ref().map(|c| c.as_str()),
        "ranges": ranges(&d.ranges),
        "range_low_percent": d.range_low_percent,
        "credits": d.credits.as_ref().map(ToString::to_string),
    })
}

/// `series_defined`: the whole definition.
pub(super) fn defined(series: &Series, by: &Operator) -> Draft {
    Draft::new(
        series.created_at,
        by,
        Action::SeriesDefined,
        target(series),
        &definition(&series.definition),
    )
}

/// A change of the settings from `read` to `changed`: `ranges_changed` when the ranges or
/// their low share change, `series_changed` otherwise (the validation code); either records
/// every setting that changed.
pub(super) fn settings_changed(
    read: &Series,
    changed: &Series,
    by: &Operator,
    at: Timestamp,
) -> Draft {
    let (old, new) = (&read.definition, &changed.definition);
    let mut fields = Map::new();
    if old.validation_code != new.validation_code {
        let code = new.validation_code.as_ref().map(|c| c.as_str());
        fields.insert("validation_code".into(), json!(code));
    }
    if old.ranges != new.ranges {
        fields.insert("ranges".into(), ranges(&new.ranges));
    }
    if old.range_low_percent != new.range_low_percent {
        fields.insert("range_low_percent".into(), json!(new.range_low_percent));
    }
    let action = if fields.contains_key("ranges") || fields.contains_key("range_low_percent") {
        Action::RangesChanged
    } else {
        Action::SeriesChanged
    };
    Draft::new(at, by, action, target(changed), &fields)
}

/// `series_changed`: a new format, numbered as `version` from the period `from` on.
pub(super) fn format_changed(
    changed: &Series,
    version: u32,
    from: &Period,
    by: &Operator,
    at: Timestamp,
) -> Draft {
    let change = json!({
        "format": changed.definition.format.as_str(),
        "format_version": version,
        "from": from.to_string(),
    });
    Draft::new(at, by, Action::SeriesChanged, target(changed), &change)
}

/// `counter_moved`: the counters skipped (`from` to `to`, a declared gap) in `period`, the
/// next counter, and why.
pub(super) fn counter_moved(
    series: &Series,
    period: &Period,
    moved: &Move,
    by: &Operator,
) -> Draft {
    let change = json!({
        "period": period.to_string(),
        "from": moved.from,
        "to": moved.to,
        "next": moved.to + 1,
        "reason": moved.reason.as_str(),
    });
    Draft::new(moved.at, by, Action::CounterMoved, target(series), &change)
}
