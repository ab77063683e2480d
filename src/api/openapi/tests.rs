use serde_json::{Value, json};

use super::schemas::problem_members;
use super::*;

#[test]
fn every_code_the_description_names_is_declared() {
    let declared: Vec<String> = Code::FIXED
        .iter()
        .map(|c| c.as_str().into_owned())
        .collect();
    // A code in the text is a quoted word of lowercase letters with an underscore;
    // `invalid_<member>` stands for a family.
    let named: Vec<&str> = DESCRIPTION
        .split('`')
        .skip(1)
        .step_by(2)
        // `413 body_too_large`: the status, then the code.
        .map(|quoted| quoted.trim_start_matches(|c: char| c.is_ascii_digit() || c == ' '))
        .filter(|word| {
            word.contains('_') && word.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        })
        .collect();
    assert!(named.len() >= 10, "{named:?}");
    for code in named {
        assert!(
            declared.iter().any(|d| d == code),
            "`{code}` is not a declared code"
        );
    }
}

#[test]
fn every_member_a_problem_adds_is_typed_in_the_document() {
    let typed: Vec<&str> = problem_members()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let sources = [
        include_str!("../problem/mapping.rs"),
        include_str!("../extract.rs"),
    ];
    let mut added = 0;
    for source in sources {
        for call in source.split(".with(").skip(1) {
            let name = call.trim_start().trim_start_matches('"');
            let name = &name[..name.find('"').unwrap()];
            assert!(
                typed.contains(&name),
                "a problem adds `{name}`: type it in problem_members"
            );
            added += 1;
        }
    }
    assert!(added > 15, "only {added} members found");
}

/// Every `pattern` of `value`, wherever it is.
fn patterns<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
    match value {
        Value::Object(members) => {
            if let Some(Value::String(pattern)) = members.get("pattern") {
                found.push(pattern);
            }
            members.values().for_each(|v| patterns(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| patterns(v, found)),
        _ => {}
    }
}

#[test]
fn every_free_text_refuses_the_characters_of_the_one_rule_and_payer_ids_agree() {
    let doc = serde_json::to_value(openapi()).unwrap();
    let mut all = Vec::new();
    patterns(&doc, &mut all);
    let free_text: Vec<&str> = all
        .iter()
        .copied()
        .filter(|p| p.starts_with("^[^\\x00"))
        .collect();
    for pattern in &free_text {
        let class = pattern
            .strip_prefix("^[^")
            .and_then(|rest| rest.split_once("]{1,"))
            .map(|(class, _)| class);
        assert_eq!(
            class,
            Some(tally_domain::text::FREE_TEXT_CLASS),
            "{pattern}"
        );
    }
    // Names, tokens, reasons (4 routes), prizes and authority references.
    assert!(free_text.len() >= 8, "{free_text:?}");
    let payer_ids: std::collections::BTreeSet<&str> = all
        .iter()
        .copied()
        .filter(|p| p.starts_with("^[^\\s"))
        .collect();
    assert_eq!(
        payer_ids.len(),
        1,
        "payer ids say different rules: {payer_ids:?}"
    );
}

/// The pattern of every member and path parameter of `value` named `name`.
fn named_patterns<'a>(value: &'a Value, name: &str, found: &mut Vec<&'a str>) {
    match value {
        Value::Object(members) => {
            if let Some(Value::Object(properties)) = members.get("properties")
                && let Some(pattern) = properties.get(name).and_then(|p| p["pattern"].as_str())
            {
                found.push(pattern);
            }
            if members.get("name").and_then(Value::as_str) == Some(name)
                && let Some(pattern) = members["schema"]["pattern"].as_str()
            {
                found.push(pattern);
            }
            members
                .values()
                .for_each(|v| named_patterns(v, name, found));
        }
        Value::Array(items) => items.iter().for_each(|v| named_patterns(v, name, found)),
        _ => {}
    }
}

#[test]
fn every_id_of_the_document_has_the_pattern_its_type_declares() {
    use tally_domain::ids::{DrawId, ExternalRef, HoldId, IssuerId, PaymentId, SeriesId, SourceId};
    let doc = serde_json::to_value(openapi()).unwrap();
    for (field, pattern) in [
        (DrawId::FIELD, DrawId::PATTERN),
        (PaymentId::FIELD, PaymentId::PATTERN),
        (HoldId::FIELD, HoldId::PATTERN),
        (SeriesId::FIELD, SeriesId::PATTERN),
        (IssuerId::FIELD, IssuerId::PATTERN),
        (SourceId::FIELD, SourceId::PATTERN),
        (ExternalRef::FIELD, ExternalRef::PATTERN),
    ] {
        let mut found = Vec::new();
        named_patterns(&doc, field, &mut found);
        assert!(!found.is_empty(), "no `{field}` has a pattern");
        for copy in found {
            assert_eq!(copy, pattern, "a `{field}` of the document");
        }
    }
}

#[test]
fn the_committed_document_is_the_one_the_code_generates() {
    let committed = include_str!("../../../openapi.json");
    assert!(
        committed == openapi_json(),
        "openapi.json differs from what the code generates: run `make openapi` and commit it"
    );
}

#[test]
fn every_error_is_a_problem_document_and_every_route_may_answer_503() {
    let doc = serde_json::to_value(openapi()).unwrap();
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            operations += 1;
            let responses = operation["responses"].as_object().unwrap();
            assert!(responses.contains_key("503"), "{method} {path}");
            for (status, response) in responses {
                if !status.starts_with('2') && response.get("$ref").is_none() {
                    assert!(
                        response["content"][PROBLEM_JSON].is_object(),
                        "{method} {path} {status}"
                    );
                }
            }
        }
    }
    assert_ne!(operations, 0);
}

#[test]
fn every_code_is_documented_and_each_route_lists_its_codes_by_status() {
    let doc = serde_json::to_value(openapi()).unwrap();
    let text = doc.to_string();
    for code in Code::FIXED {
        // The browser verifier's page is served by `tally serve` alone.
        if *code != Code::VerifyPageNotBuilt {
            assert!(
                text.contains(&format!("\"{}\"", code.as_str()))
                    || text.contains(&format!("`{}`", code.as_str())),
                "{code:?} is in no route's list"
            );
        }
    }
    // Each code a response lists comes with its sentence, one line per code.
    let mut described = 0;
    for item in doc["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            for response in operation["responses"].as_object().unwrap().values() {
                let codes = &response["content"][PROBLEM_JSON]["schema"]["allOf"][1]["properties"]
                    ["code"]["enum"];
                let lines: Vec<&str> = response["description"]
                    .as_str()
                    .unwrap_or_default()
                    .lines()
                    .collect();
                for code in codes.as_array().into_iter().flatten() {
                    let code = code.as_str().unwrap();
                    let line = lines
                        .iter()
                        .find(|line| line.starts_with(&format!("- `{code}`")))
                        .unwrap_or_else(|| panic!("`{code}` is listed without its sentence"));
                    assert!(line.ends_with('.'), "{line}");
                    described += 1;
                }
                assert_eq!(lines.len(), codes.as_array().map_or(lines.len(), Vec::len));
            }
        }
    }
    assert!(described > 100, "only {described} codes described");
    let sold_out = Code::SoldOut.meaning();
    assert!(text.contains(&format!(
        "- `sold_out` (with `remaining`, `held`): {sold_out}"
    )));
    let purchase = &doc["paths"]["/draws/{draw_id}/purchases"]["post"]["responses"];
    let enum_of = |status: &str| {
        purchase[status]["content"][PROBLEM_JSON]["schema"]["allOf"][1]["properties"]["code"]["enum"].clone()
    };
    assert!(
        enum_of("409")
            .as_array()
            .unwrap()
            .contains(&json!("sold_out"))
    );
    assert!(
        enum_of("400")
            .as_array()
            .unwrap()
            .contains(&json!("invalid_payment_id"))
    );
    assert!(
        !enum_of("400")
            .as_array()
            .unwrap()
            .contains(&json!("sold_out"))
    );
}

#[test]
fn every_bound_the_document_states_is_the_one_the_code_enforces() {
    use tally_domain::draw::{MAX_PER_PURCHASE_CAP, MAX_SIGNATURE_HEX_LEN, MAX_TOTAL_TICKETS};
    use tally_domain::series::{MAX_CHARACTER_RULE_LEN, MAX_FORMAT_LEN, MAX_TIMEZONE_LEN};
    use tally_domain::spend::MAX_LIMIT_CURRENCIES;
    let doc = serde_json::to_value(openapi()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let signature = format!("^(?:[0-9a-fA-F]{{2}}){{1,{}}}$", MAX_SIGNATURE_HEX_LEN / 2);
    for (schema, property, keyword, bound) in [
        (
            "CreateDrawBody",
            "max_per_payer",
            "maximum",
            json!(MAX_TOTAL_TICKETS),
        ),
        (
            "PurchaseBody",
            "numbers",
            "maxItems",
            json!(MAX_PER_PURCHASE_CAP),
        ),
        (
            "HoldBody",
            "numbers",
            "maxItems",
            json!(MAX_PER_PURCHASE_CAP),
        ),
        (
            "LimitsBody",
            "limits",
            "maxProperties",
            json!(MAX_LIMIT_CURRENCIES),
        ),
        ("SeriesBody", "format", "maxLength", json!(MAX_FORMAT_LEN)),
        ("ChangeBody", "format", "maxLength", json!(MAX_FORMAT_LEN)),
        (
            "SeriesBody",
            "timezone",
            "maxLength",
            json!(MAX_TIMEZONE_LEN),
        ),
        (
            "SeriesBody",
            "allowed_characters",
            "maxLength",
            json!(MAX_CHARACTER_RULE_LEN),
        ),
        (
            "DrawWinnersBody",
            "beacon_signature",
            "pattern",
            json!(signature),
        ),
        (
            "RedrawBody",
            "beacon_signature",
            "pattern",
            json!(signature),
        ),
    ] {
        assert_eq!(
            schemas[schema]["properties"][property][keyword], bound,
            "{schema}.{property}: {keyword}"
        );
    }
}
