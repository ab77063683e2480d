//! RFC 9457 problem details: the one place where errors become HTTP responses.

mod code;
mod mapping;

pub use code::Code;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::telemetry::metrics;
use tally_domain::text::{MAX_DETAIL_CHARS, cut};

/// An error response: `application/problem+json` with a snake_case `code` member.
#[derive(Debug)]
pub struct Problem {
    code: Code,
    detail: String,
    extra: Map<String, Value>,
    retry_after: Option<u32>,
}

impl Problem {
    /// A problem of `code`, answered with the code's status; `detail` is cut to
    /// [`MAX_DETAIL_CHARS`] characters.
    pub fn new(code: Code, detail: impl Into<String>) -> Self {
        let detail: String = detail.into();
        Self {
            code,
            detail: cut(&detail, MAX_DETAIL_CHARS).into_owned(),
            extra: Map::new(),
            retry_after: None,
        }
    }

    pub fn with(mut self, member: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(member.to_owned(), value.into());
        self
    }

    pub fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    pub fn code(&self) -> &Code {
        &self.code
    }

    /// Counts a server error by code, a `503` in the `ServiceUnavailable` metric and a
    /// `500` in `InternalErrors`: an answer, or an import message put back for the same
    /// reason.
    pub(crate) fn count_if_server_error(&self) {
        let metric = match self.status() {
            StatusCode::SERVICE_UNAVAILABLE => metrics::SERVICE_UNAVAILABLE,
            StatusCode::INTERNAL_SERVER_ERROR => metrics::INTERNAL_ERRORS,
            _ => return,
        };
        metric.add(self.code.as_str(), 1);
    }

    /// DynamoDB failed or did not answer in time: whatever the request asked may or may
    /// not have been done. Every Tally request is safe to repeat as it was.
    pub fn outcome_unknown(detail: impl Into<String>) -> Self {
        Problem::new(Code::OutcomeUnknown, detail).retry_after(1)
    }
}

/// An RFC 9457 problem document, as every error is answered.
#[derive(Serialize, ToSchema)]
#[schema(as = Problem)]
pub(super) struct ProblemBody {
    /// Always `about:blank`: `code` tells the problems apart.
    #[serde(rename = "type")]
    kind: &'static str,
    /// The status's reason phrase.
    title: &'static str,
    /// The HTTP status code.
    #[schema(minimum = 400, maximum = 599)]
    status: u16,
    /// What went wrong, for people.
    detail: String,
    /// What went wrong, for programs: stable, snake_case. Each operation lists the codes
    /// of its statuses.
    #[schema(pattern = "^[a-z][a-z0-9_]*$")]
    code: String,
    /// Members of some problems: `remaining`, `held`, `first_hold_ends_at`, `limit`,
    /// `max_per_purchase`, `max_per_payer`, `max_held_per_payer`, `max_held_percent`,
    /// `left`, `opens_at`, `eligible`, `candidates`, `reason`, `next`.
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = self.code.status();
        let code = self.code.as_str().into_owned();
        self.count_if_server_error();
        let body = ProblemBody {
            kind: "about:blank",
            title: status.canonical_reason().unwrap_or("Error"),
            status: status.as_u16(),
            detail: self.detail,
            code,
            extra: self.extra,
        };
        let body = serde_json::to_string(&body).expect("a problem serialises");
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreError;
    use axum::body::to_bytes;

    async fn render(problem: Problem) -> (StatusCode, axum::http::HeaderMap, Value) {
        let response = problem.into_response();
        let (parts, body) = response.into_parts();
        let bytes = to_bytes(body, 4096).await.unwrap();
        (
            parts.status,
            parts.headers,
            serde_json::from_slice(&bytes).unwrap(),
        )
    }

    #[tokio::test]
    async fn throttling_is_a_503_with_retry_after() {
        let (status, headers, body) = render(StoreError::Throttled.into()).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(headers[header::RETRY_AFTER], "1");
        assert_eq!(headers[header::CONTENT_TYPE], "application/problem+json");
        assert_eq!(body["code"], "throttled");
    }

    #[tokio::test]
    async fn a_failed_or_silent_database_is_a_503_that_says_the_outcome_is_unknown() {
        let err = StoreError::Unavailable {
            operation: "TransactWriteItems",
            reason: "service error: InternalServerError".into(),
        };
        let (status, headers, body) = render(err.into()).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(headers[header::RETRY_AFTER], "1");
        assert_eq!(body["code"], "outcome_unknown");
        assert!(!body.to_string().contains("InternalServerError"));
    }

    #[tokio::test]
    async fn a_detail_is_cut_to_its_most_characters() {
        let long = "\\".repeat(3_000_000);
        let (status, _, body) = render(Problem::new(Code::InvalidBody, long)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let detail = body["detail"].as_str().unwrap();
        assert_eq!(detail.chars().count(), MAX_DETAIL_CHARS + 1);
        assert!(detail.ends_with('…'));
    }

    #[tokio::test]
    async fn a_format_change_as_the_period_turns_is_a_503_with_retry_after() {
        let err = crate::orders::OrderError::PeriodTurning;
        let (status, headers, body) = render(err.into()).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(headers[header::RETRY_AFTER], "1");
        assert_eq!(body["code"], "contention");
        assert!(body["detail"].as_str().unwrap().contains("turning"));
    }

    #[tokio::test]
    async fn internal_errors_hide_their_details() {
        let err = StoreError::Service {
            operation: "TransactWriteItems",
            message: "secret table layout".into(),
        };
        let (status, _, body) = render(err.into()).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["code"], "internal_error");
        assert!(!body.to_string().contains("secret"));
    }
}
