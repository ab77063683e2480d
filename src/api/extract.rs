//! Extractors whose rejections are problem details.

use axum::body::Bytes;
use axum::extract::path::ErrorKind;
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

use super::problem::{Code, Problem};
use crate::json_input;
use tally_domain::text::excerpt;

/// The largest request body of the ticket routes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The body limit of a group of routes, set next to its `DefaultBodyLimit` so that a 413
/// names the limit that applied.
#[derive(Clone, Copy, Debug)]
pub struct BodyLimit(pub usize);

/// A JSON request body, announced as such: `content-type: application/json` (or another
/// `+json` type). A body sent without it is refused with `415`, so that a web page
/// cannot send one without the browser asking the server first (a cross-site request
/// with a content type of its own is preflighted; one without, or with `text/plain`, is
/// not). Its size is capped by the router's body limit.
pub struct JsonBody<T>(pub T);

impl<T, S> FromRequest<S> for JsonBody<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            });
        match content_type {
            Some(ct) if ct == "application/json" || ct.ends_with("+json") => {}
            Some(ct) => {
                return Err(Problem::new(
                    Code::UnsupportedMediaType,
                    format!("send the body as application/json, not {}", excerpt(&ct)),
                ));
            }
            None => return Err(unannounced()),
        }
        let limit = req
            .extensions()
            .get::<BodyLimit>()
            .map_or(MAX_BODY_BYTES, |l| l.0);
        let too_large = || {
            Problem::new(
                Code::BodyTooLarge,
                format!("the body is larger than {limit} bytes"),
            )
            .with("limit", limit)
        };
        // A body announced larger than the limit is refused before a byte of it is read
        // (and so without `100 Continue` to a client that asked to wait for one).
        let announced = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if announced.is_some_and(|length| length > limit as u64) {
            return Err(too_large());
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                too_large()
            } else {
                Problem::new(Code::UnreadableBody, "the request body could not be read")
            }
        })?;
        parse_body(&bytes).map(JsonBody)
    }
}

/// A JSON body a route may go without (`Option<JsonBody<T>>`): a request with neither a
/// body nor a content type reads `None`; any other is held to [`JsonBody`]'s rules.
impl<T, S> OptionalFromRequest<S> for JsonBody<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Problem> {
        if req.headers().contains_key(header::CONTENT_TYPE) {
            return <Self as FromRequest<S>>::from_request(req, state)
                .await
                .map(Some);
        }
        match Bytes::from_request(req, state).await {
            Ok(bytes) if bytes.is_empty() => Ok(None),
            _ => Err(unannounced()),
        }
    }
}

/// A body sent without saying it is JSON.
fn unannounced() -> Problem {
    Problem::new(
        Code::UnsupportedMediaType,
        "send the body as application/json, and say so in its content-type",
    )
}

/// Parses a JSON body, which must be an object (serde would also fill a struct from an
/// array, by position). A value of the wrong type or out of range in a known top-level
/// field is `invalid_<field>`; a missing or unknown field is `invalid_body`. Details are
/// in the API's words ([`crate::json_input`]).
pub fn parse_body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Problem> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => {
            return Err(Problem::new(
                Code::MalformedJson,
                "the body is empty: send a JSON object",
            ));
        }
        Some(b'{') => {}
        Some(_) => {
            return Err(Problem::new(
                Code::InvalidBody,
                "the body must be a JSON object",
            ));
        }
    }
    json_input::read(bytes).map_err(|misfit| {
        let code = match misfit.field() {
            _ if misfit.is_syntax() => Code::MalformedJson,
            Some(field) => Code::invalid(field.to_owned()),
            None => Code::InvalidBody,
        };
        Problem::new(code, misfit.explain("the body"))
    })
}

/// Path parameters; a parameter that cannot be decoded is a 400 naming it
/// (`invalid_<parameter>`), never a plain-text error.
pub struct PathParams<T>(pub T);

impl<T, S> FromRequestParts<S> for PathParams<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Problem> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| PathParams(value))
            .map_err(path_problem)
    }
}

/// Query parameters; a query that does not fit `T` (an unknown parameter, one given
/// twice) is a 400 `invalid_query`, never a plain-text error.
pub struct QueryParams<T>(pub T);

impl<T, S> FromRequestParts<S> for QueryParams<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Problem> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| QueryParams(value))
            .map_err(|rejection| Problem::new(Code::InvalidQuery, rejection.body_text()))
    }
}

fn path_problem(rejection: PathRejection) -> Problem {
    let detail = rejection.body_text();
    let key = match &rejection {
        PathRejection::FailedToDeserializePathParams(failed) => match failed.kind() {
            ErrorKind::InvalidUtf8InPathParam { key } | ErrorKind::ParseErrorAtKey { key, .. } => {
                Some(key.clone())
            }
            _ => None,
        },
        _ => None,
    };
    match key {
        Some(key) => Problem::new(Code::invalid(key), detail),
        None => Problem::new(Code::InvalidPath, detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        quantity: u32,
        total: u64,
        name: Option<String>,
    }

    fn code(json: &str) -> String {
        let problem = parse_body::<Body>(json.as_bytes()).unwrap_err();
        problem.code().as_str().into_owned()
    }

    #[test]
    fn a_value_out_of_range_or_of_the_wrong_type_names_its_field() {
        assert_eq!(
            code(r#"{"quantity": 4294967296, "total": 1}"#),
            "invalid_quantity"
        );
        assert_eq!(
            code(r#"{"quantity": 1, "total": 18446744073709551616}"#),
            "invalid_total"
        );
        assert_eq!(code(r#"{"quantity": -1, "total": 1}"#), "invalid_quantity");
        assert_eq!(code(r#"{"quantity": "3", "total": 1}"#), "invalid_quantity");
        assert_eq!(
            code(r#"{"quantity": 1, "total": 1, "name": 5}"#),
            "invalid_name"
        );
    }

    #[test]
    fn missing_unknown_and_malformed_bodies_keep_their_codes() {
        assert_eq!(code(r#"{"quantity": 1}"#), "invalid_body");
        assert_eq!(
            code(r#"{"quantity": 1, "total": 1, "colour": 2}"#),
            "invalid_body"
        );
        assert_eq!(code(r#"[1]"#), "invalid_body");
        assert_eq!(code(r#"[1, 2]"#), "invalid_body");
        assert_eq!(code(" "), "malformed_json");
        assert_eq!(code(r#"{"quantity": 1,"#), "malformed_json");
        assert_eq!(code(r#"{"quantity": 1, "total": 1} x"#), "malformed_json");
        let body: Body = parse_body(br#"{"quantity": 1, "total": 2}"#).unwrap();
        assert_eq!((body.quantity, body.total, body.name), (1, 2, None));
    }
}
