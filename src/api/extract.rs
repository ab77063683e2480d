//! Extractors whose rejections are problem details.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

use super::problem::Problem;

/// The largest request body.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A JSON request body. Its size is capped by the router's body limit.
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
        if let Some(ct) = content_type
            && ct != "application/json"
            && !ct.ends_with("+json")
        {
            return Err(Problem::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                format!("send the body as application/json, not {ct}"),
            ));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Problem::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "body_too_large",
                    format!("the body is larger than {MAX_BODY_BYTES} bytes"),
                )
            } else {
                Problem::bad_request("unreadable_body", "the request body could not be read")
            }
        })?;
        serde_json::from_slice(&bytes).map(JsonBody).map_err(|err| {
            use serde_json::error::Category;
            match err.classify() {
                Category::Data => Problem::bad_request("invalid_body", err.to_string()),
                Category::Syntax | Category::Eof | Category::Io => {
                    Problem::bad_request("malformed_json", err.to_string())
                }
            }
        })
    }
}

/// Path parameters; a parameter that cannot be decoded is a 400, never a plain-text error.
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
            .map_err(|rejection| Problem::bad_request("invalid_path", rejection.body_text()))
    }
}
