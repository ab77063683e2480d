//! The OpenAPI 3.1 document of the HTTP API, built from the route tables, the handlers'
//! annotations and the request and response types, so that it follows the code.
//!
//! What every route shares (problem documents for errors, `500`, `503` with `Retry-After`,
//! and `413`/`415` for routes with a body) is added here once rather than on each handler.

use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::{ArrayBuilder, KnownFormat, Schema, SchemaFormat, SchemaType};
use utoipa::openapi::{
    Components, ContentBuilder, HeaderBuilder, InfoBuilder, LicenseBuilder, ObjectBuilder, OpenApi,
    Ref, RefOr, ResponseBuilder, Type,
};
use utoipa::{PartialSchema, ToSchema};

use std::collections::BTreeMap;

use axum::http::Method;
use serde_json::{Value, json};

use super::problem::{Code, ProblemBody};
use super::{orders, routes, tickets};

/// The media type of every error answer.
const PROBLEM_JSON: &str = "application/problem+json";

const DESCRIPTION: &str = "\
Collision-free raffle ticket numbers and order numbers.

Every error is an RFC 9457 problem document (`application/problem+json`) with a stable \
`code`; each operation lists the codes of its statuses, each with what it means and what \
to do. Besides those:

- `400`: `malformed_json`, `invalid_body` (a missing or unknown member), \
`invalid_<member>` (a member of the wrong type or out of range), `unreadable_body`, \
`invalid_<parameter>` for a path parameter that cannot be decoded, and on every route \
`invalid_query` for a query parameter the route does not take;
- `413 body_too_large` (with the `limit` in bytes: 64 KiB on ticket routes, 6 MiB on \
order routes; refused before the body is read when its `content-length` says so), \
`415 unsupported_media_type` (a body sent without `content-type: application/json`) and \
`408 body_timeout` (the body did not all arrive in time; nothing was done) on routes that \
take a body;
- `404 route_not_found` for any other path, `405 method_not_allowed` for a method a path \
does not take;
- `503` with `Retry-After` when Tally cannot tell whether the request took effect: \
`throttled`, `contention`, `outcome_unknown`. Every request is safe to repeat as it was;
- `500 internal_error` only for a bug.

The local server (`tally serve`) answers requests that it cannot parse with a bare \
`414`, `431` or `400` (no body); it serves localhost only, and answers `foreign_host` (421) to a request not addressed to \
a loopback name with its port, `foreign_origin` (403) to one from another site's page.

Behind API Gateway (IAM auth: requests signed with SigV4 for the service `execute-api`), \
API Gateway answers some requests itself, with a body `{\"message\": \"...\"}` that is no \
problem document: `401`, `403` (unsigned, a wrong or expired signature, a policy without \
the route), `404` (a route the API does not have), `413`, `429` (its throttling: repeat \
with backoff), `500`, `502`, `503` and `504` (the function failed, was unavailable or did \
not answer in time: repeat, every request is safe to repeat). docs/api.md lists them.";

/// The shared responses, by name in `components.responses`.
const UNAVAILABLE: &str = "Unavailable";
const INTERNAL_ERROR: &str = "InternalError";
const BODY_TOO_LARGE: &str = "BodyTooLarge";
const BODY_TIMEOUT: &str = "BodyTimeout";
const UNSUPPORTED_MEDIA_TYPE: &str = "UnsupportedMediaType";
const ROUTE_NOT_FOUND: &str = "RouteNotFound";
const METHOD_NOT_ALLOWED: &str = "MethodNotAllowed";

/// The document of every route.
pub fn openapi() -> OpenApi {
    let mut doc = tickets::documented()
        .merge(orders::documented())
        .into_openapi();
    doc.info = InfoBuilder::new()
        .title("Tally")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(DESCRIPTION))
        .license(Some(LicenseBuilder::new().name("Apache-2.0").build()))
        .build();
    let components = doc.components.get_or_insert_with(Components::new);
    components
        .schemas
        .insert(ProblemBody::name().into_owned(), problem_schema());
    components.responses.extend(shared_responses());
    for schema in components.schemas.values_mut() {
        describe_counters(schema);
    }
    add_codes(&mut doc);
    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.patch,
            &mut item.delete,
        ];
        for operation in operations.into_iter().flatten() {
            complete(operation);
        }
    }
    doc
}

/// The document as `GET /openapi.json` serves it and `make openapi` writes it.
pub fn openapi_json() -> String {
    let mut json = openapi().to_pretty_json().expect("the document serialises");
    json.push('\n');
    json
}

/// The problem document, with the members that some problems add, each with its type.
fn problem_schema() -> RefOr<Schema> {
    let mut schema = ProblemBody::schema();
    if let RefOr::T(Schema::Object(object)) = &mut schema {
        object.additional_properties = None;
        for (name, member) in problem_members() {
            object.properties.insert(name.to_owned(), RefOr::T(member));
        }
    }
    schema
}

/// The members some problems carry besides the standard five, and which problems.
fn problem_members() -> Vec<(&'static str, Schema)> {
    let scalar = |kind: Type, format: Option<KnownFormat>, description: &str| {
        let builder = match kind {
            Type::Integer => ObjectBuilder::new().minimum(Some(0)),
            _ => ObjectBuilder::new(),
        };
        let builder = builder
            .schema_type(kind)
            .format(format.map(SchemaFormat::KnownFormat))
            .description(Some(description));
        Schema::Object(builder.build())
    };
    let whole = |description: &str| scalar(Type::Integer, None, description);
    let text = |description: &str| scalar(Type::String, None, description);
    let time = |description: &str| scalar(Type::String, Some(KnownFormat::DateTime), description);
    let nullable_time = |description: &str| {
        let builder = ObjectBuilder::new()
            .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some(description));
        Schema::Object(builder.build())
    };
    let list = |items: Schema, description: &str| {
        Schema::Array(
            ArrayBuilder::new()
                .items(RefOr::T(items))
                .description(Some(description))
                .build(),
        )
    };
    let candidate = ObjectBuilder::new()
        .property("series", text("The series"))
        .property("period", text("The period"))
        .property("counter", whole(COUNTER))
        .property("order_number", text("The number as text"))
        .required("series")
        .required("period")
        .required("counter")
        .required("order_number")
        .build();
    vec![
        (
            "remaining",
            whole("`sold_out`, `tickets_held`, `tickets_fragmented`: tickets free"),
        ),
        (
            "held",
            whole("`sold_out`, `tickets_held`: numbers that live holds keep"),
        ),
        (
            "first_hold_ends_at",
            time("`tickets_held`, `holds_full`: when the first of those live holds ends"),
        ),
        (
            "left",
            whole(
                "`payer_limit`, `payer_hold_limit`: how many more tickets the payer may buy, or \
                 numbers it may hold; `spend_limit`: what the payer may still spend in the \
                 window, in minor units",
            ),
        ),
        (
            "spend_limit",
            whole("`spend_limit`: the payer's limit of the window, in minor units"),
        ),
        (
            "span",
            text("`spend_limit`: the window's span, `day`, `week` or `month`"),
        ),
        (
            "window",
            text(
                "`spend_limit`: the calendar window that runs now (`2026-12-05`, `2026-W49`, `2026-12`)",
            ),
        ),
        (
            "currency",
            text("`spend_limit`: the ISO 4217 currency of the limit"),
        ),
        (
            "excluded_until",
            nullable_time("`payer_excluded`: when the exclusion ends; `null`: it has no end"),
        ),
        (
            "max_per_payer",
            whole("`payer_limit`: the draw's cap per payer"),
        ),
        (
            "max_held_per_payer",
            whole("`payer_hold_limit`: the most numbers one payer's live holds may take"),
        ),
        (
            "max_held_percent",
            whole("`holds_full`: the share of the draw live holds may take, in percent"),
        ),
        (
            "max_per_purchase",
            whole("`invalid_quantity`: the draw's largest purchase"),
        ),
        (
            "limit",
            whole("`body_too_large`: the largest body the route takes, in bytes"),
        ),
        ("opens_at", time("`draw_not_open`: when sales start")),
        (
            "publishes_at",
            time("`beacon_not_published`: when the round is published"),
        ),
        ("round", whole("Beacon problems: the round that counts")),
        (
            "prize",
            whole("`redraw_pending`: the prize whose redraw waits"),
        ),
        (
            "eligible",
            whole("`not_enough_eligible`: the eligible tickets"),
        ),
        (
            "numbers",
            list(
                whole("A ticket number"),
                "`numbers_taken`: the chosen numbers already sold",
            ),
        ),
        (
            "known",
            list(
                text("A network name"),
                "`unknown_beacon_network`: the networks this deployment knows",
            ),
        ),
        (
            "candidates",
            list(
                Schema::Object(candidate),
                "`ambiguous_order_number`: every order whose number has this text",
            ),
        ),
        (
            "reason",
            text("`already_voided`: the reason of the void that stands"),
        ),
        (
            "series",
            text("`format_overlaps`: the series of the issuer that could render the same text"),
        ),
        (
            "example",
            text("`format_overlaps`: a text both series could render"),
        ),
        (
            "next",
            whole(&format!(
                "`move_not_forward`: the next counter now. {COUNTER}"
            )),
        ),
        (
            "number",
            text("`number_too_long`, `character_not_allowed`: the number refused"),
        ),
        (
            "max_length",
            whole("`number_too_long`: the series' longest number"),
        ),
        (
            "character",
            text("`character_not_allowed`: the character refused"),
        ),
    ]
}

/// Members that hold a series' counter, or a count of counters.
const COUNTER_MEMBERS: [&str; 8] = [
    "counter",
    "first_counter",
    "last_counter",
    "start",
    "next",
    "from",
    "to",
    "count",
];

/// Says of every integer counter member of `schema` that it may pass JavaScript's safe
/// integers.
fn describe_counters(schema: &mut RefOr<Schema>) {
    let RefOr::T(Schema::Object(object)) = schema else {
        return;
    };
    for (name, member) in object.properties.iter_mut() {
        if let RefOr::T(Schema::Object(member)) = member
            && COUNTER_MEMBERS.contains(&name.as_str())
            && match &member.schema_type {
                SchemaType::Type(one) => *one == Type::Integer,
                SchemaType::Array(types) => types.contains(&Type::Integer),
                SchemaType::AnyValue => false,
            }
        {
            let described = member.description.take().unwrap_or_default();
            member.description = Some(format!("{described}\n\n{COUNTER}").trim().to_owned());
        }
    }
}

/// What a counter's description says of its size.
const COUNTER: &str = "Up to 10^18: beyond JavaScript's safe integers (2^53 - 1), \
so read it as a 64-bit integer or a big integer, never as a double.";

fn problem_response(description: &str) -> ResponseBuilder {
    ResponseBuilder::new()
        .description(description)
        .content(PROBLEM_JSON, problem_content())
}

fn problem_content() -> utoipa::openapi::Content {
    ContentBuilder::new()
        .schema(Some(Ref::from_schema_name(ProblemBody::name())))
        .build()
}

fn shared_responses() -> Vec<(String, RefOr<utoipa::openapi::Response>)> {
    let seconds = Schema::Object(
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(0))
            .build(),
    );
    let unavailable = problem_response(&code_list(&[
        Code::Throttled,
        Code::Contention,
        Code::OutcomeUnknown,
    ]))
    .header(
        "retry-after",
        HeaderBuilder::new()
            .schema(Some(seconds))
            .description(Some("Seconds to wait before repeating the request"))
            .build(),
    );
    let one = |code: Code| problem_response(&code_list(&[code]));
    [
        (UNAVAILABLE, unavailable),
        (INTERNAL_ERROR, one(Code::InternalError)),
        (BODY_TOO_LARGE, one(Code::BodyTooLarge)),
        (UNSUPPORTED_MEDIA_TYPE, one(Code::UnsupportedMediaType)),
        (BODY_TIMEOUT, one(Code::BodyTimeout)),
        (ROUTE_NOT_FOUND, one(Code::RouteNotFound)),
        (METHOD_NOT_ALLOWED, one(Code::MethodNotAllowed)),
    ]
    .into_iter()
    .map(|(name, response)| (name.to_owned(), RefOr::T(response.build())))
    .collect()
}

/// Gives each operation's error responses its codes, by status, as the enum of the
/// problem's `code`: the handler's own codes (its route table's list) and those its
/// parameters and body may answer (`invalid_<name>`, `malformed_json`, ...).
fn add_codes(doc: &mut OpenApi) {
    let schemas = serde_json::to_value(&doc.components).expect("the document serialises");
    for route in routes::declared() {
        let Some(item) = doc.paths.paths.get_mut(&route.path) else {
            continue;
        };
        for method in &route.methods {
            let operation = match *method {
                Method::GET => &mut item.get,
                Method::PUT => &mut item.put,
                Method::POST => &mut item.post,
                Method::PATCH => &mut item.patch,
                Method::DELETE => &mut item.delete,
                _ => continue,
            };
            let Some(operation) = operation else { continue };
            let read = serde_json::to_value(&*operation).expect("the document serialises");
            let mut codes = route.codes.to_vec();
            codes.extend_from_slice(route.function.shared_codes());
            codes.extend(input_codes(&schemas["schemas"], &read));
            for (status, response) in error_responses(&codes) {
                let response = serde_json::from_value(response).expect("a response reads");
                operation
                    .responses
                    .responses
                    .insert(status, RefOr::T(response));
            }
        }
    }
}

/// The codes an operation answers for its parameters and its JSON body. Every route
/// refuses a query parameter it does not take (`api::query`).
fn input_codes(schemas: &Value, operation: &Value) -> Vec<Code> {
    let mut codes = vec![Code::InvalidQuery];
    for parameter in operation["parameters"].as_array().into_iter().flatten() {
        let name = parameter["name"].as_str().unwrap_or_default().to_owned();
        if parameter["in"].as_str() == Some("path") {
            codes.extend([Code::invalid(name), Code::InvalidPath]);
        }
    }
    let body = &operation["requestBody"]["content"]["application/json"]["schema"];
    if !body.is_null() {
        codes.extend([Code::MalformedJson, Code::InvalidBody, Code::UnreadableBody]);
        let schema = match body["$ref"].as_str() {
            Some(reference) => {
                let name = reference.rsplit('/').next().unwrap_or_default();
                &schemas[name]
            }
            None => body,
        };
        for member in schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(m, _)| m)
        {
            codes.push(Code::invalid(member.clone()));
        }
    }
    codes
}

/// One problem response per client-error status of `codes`, its `code` an enum of them.
fn error_responses(codes: &[Code]) -> BTreeMap<String, Value> {
    let mut by_status: BTreeMap<String, Vec<&Code>> = BTreeMap::new();
    for code in codes {
        let listed = by_status
            .entry(code.status().as_u16().to_string())
            .or_default();
        if code.status().is_client_error() && !listed.iter().any(|c| c.as_str() == code.as_str()) {
            listed.push(code);
        }
    }
    by_status
        .into_iter()
        .filter(|(_, codes)| !codes.is_empty())
        .map(|(status, codes)| {
            let description = code_list(codes.iter().copied());
            let names: Vec<_> = codes.iter().map(|code| code.as_str()).collect();
            let response = json!({
                "description": description,
                "content": {PROBLEM_JSON: {"schema": {"allOf": [
                    {"$ref": format!("#/components/schemas/{}", ProblemBody::name())},
                    {"type": "object", "properties": {"code": {"type": "string", "enum": names}}},
                ]}}},
            });
            (status, response)
        })
        .collect()
}

/// The codes as a Markdown list: each code, the members its problems add, and what it
/// means for the caller.
fn code_list<'a>(codes: impl IntoIterator<Item = &'a Code>) -> String {
    codes
        .into_iter()
        .map(|code| {
            let members = match code.members() {
                [] => String::new(),
                members => format!(" (with `{}`)", members.join("`, `")),
            };
            format!("- `{}`{members}: {}", code.as_str(), code.meaning())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Gives every error of `operation` the problem document, and adds the shared responses.
fn complete(operation: &mut Operation) {
    let responses = &mut operation.responses.responses;
    for (status, response) in responses.iter_mut() {
        if let RefOr::T(response) = response
            && !status.starts_with('2')
            && response.content.is_empty()
        {
            response
                .content
                .insert(PROBLEM_JSON.to_owned(), RefOr::T(problem_content()));
        }
    }
    let mut shared = vec![("500", INTERNAL_ERROR), ("503", UNAVAILABLE)];
    if operation.request_body.is_some() {
        shared.extend([
            ("408", BODY_TIMEOUT),
            ("413", BODY_TOO_LARGE),
            ("415", UNSUPPORTED_MEDIA_TYPE),
        ]);
    }
    for (status, name) in shared {
        responses.insert(
            status.to_owned(),
            RefOr::Ref(Ref::new(format!("#/components/responses/{name}"))),
        );
    }
}

#[cfg(test)]
mod tests {
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
            include_str!("problem/mapping.rs"),
            include_str!("extract.rs"),
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
        use tally_domain::ids::{
            DrawId, ExternalRef, HoldId, IssuerId, PaymentId, SeriesId, SourceId,
        };
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
        let committed = include_str!("../../openapi.json");
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
}
