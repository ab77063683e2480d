//! The OpenAPI 3.1 document of the HTTP API, built from the route tables, the handlers'
//! annotations and the request and response types, so that it follows the code.
//!
//! What every route shares (problem documents for errors, `500`, `503` with `Retry-After`,
//! and `413`/`415` for routes with a body) is added here once rather than on each handler;
//! each operation's codes by status in `codes.rs`, what the types' schemas gain in
//! `schemas.rs`.

mod codes;
mod schemas;

use utoipa::ToSchema;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{
    Components, ContentBuilder, HeaderBuilder, InfoBuilder, LicenseBuilder, ObjectBuilder, OpenApi,
    Ref, RefOr, ResponseBuilder, Type,
};

use super::problem::{Code, ProblemBody};
use super::{orders, tickets};
use codes::{add_codes, code_list};
use schemas::{describe_counters, problem_schema};

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
- `413 body_too_large` (with the `limit` in bytes: 64 KiB on ticket routes, 3,008 KiB \
on order routes; refused before the body is read when its `content-length` says so), \
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
mod tests;
