//! Each operation's error responses, by status, with the codes it may answer.

use std::collections::BTreeMap;

use axum::http::Method;
use serde_json::{Value, json};
use utoipa::ToSchema;
use utoipa::openapi::{OpenApi, RefOr};

use super::super::problem::{Code, ProblemBody};
use super::super::routes;
use super::PROBLEM_JSON;

/// Gives each operation's error responses its codes, by status, as the enum of the
/// problem's `code`: the handler's own codes (its route table's list) and those its
/// parameters and body may answer (`invalid_<name>`, `malformed_json`, ...).
pub(super) fn add_codes(doc: &mut OpenApi) {
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
pub(super) fn code_list<'a>(codes: impl IntoIterator<Item = &'a Code>) -> String {
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
