//! RFC 9457 problem details: the one place where errors become HTTP responses.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use tracing::{error, warn};

use crate::domain::draw::DrawConfigError;
use crate::domain::ids::InvalidId;
use crate::domain::order::InvalidReason;
use crate::domain::schedule::ScheduleError;
use crate::domain::series::SeriesError;
use crate::orders::OrderError;
use crate::store::StoreError;
use crate::tickets::TicketError;

/// An error response: `application/problem+json` with a snake_case `code` member.
#[derive(Debug)]
pub struct Problem {
    status: StatusCode,
    code: String,
    detail: String,
    extra: Map<String, Value>,
    retry_after: Option<u32>,
}

impl Problem {
    pub fn new(status: StatusCode, code: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            status,
            code: code.into(),
            detail: detail.into(),
            extra: Map::new(),
            retry_after: None,
        }
    }

    pub fn bad_request(code: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, detail)
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
        self.status
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    /// DynamoDB failed or did not answer in time: whatever the request asked may or may
    /// not have been done. Every Tally request is safe to repeat as it was.
    pub fn outcome_unknown(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::SERVICE_UNAVAILABLE, "outcome_unknown", detail).retry_after(1)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let mut body = json!({
            "type": "about:blank",
            "title": self.status.canonical_reason().unwrap_or("Error"),
            "status": self.status.as_u16(),
            "detail": self.detail,
            "code": self.code,
        });
        if let Value::Object(members) = &mut body {
            members.extend(self.extra);
        }
        let mut response = (self.status, body.to_string()).into_response();
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

impl From<InvalidId> for Problem {
    fn from(err: InvalidId) -> Self {
        Problem::bad_request(format!("invalid_{}", err.field), err.to_string())
    }
}

impl From<DrawConfigError> for Problem {
    fn from(err: DrawConfigError) -> Self {
        let code = match err {
            DrawConfigError::TotalTickets => "invalid_total_tickets",
            DrawConfigError::MaxPerPurchase => "invalid_max_per_purchase",
            DrawConfigError::Stripes | DrawConfigError::PurchaseTooSpread { .. } => {
                "invalid_stripes"
            }
            DrawConfigError::MaxPerPayer => "invalid_max_per_payer",
        };
        Problem::bad_request(code, err.to_string())
    }
}

impl From<ScheduleError> for Problem {
    fn from(err: ScheduleError) -> Self {
        let code = match err {
            ScheduleError::OutOfRange(field) => format!("invalid_{field}"),
            ScheduleError::Order => "invalid_schedule".to_owned(),
        };
        Problem::bad_request(code, err.to_string())
    }
}

impl From<StoreError> for Problem {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Throttled => {
                warn!(error = %err, "throttled by DynamoDB");
                Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "throttled",
                    "the service is busy; retry after the indicated delay",
                )
                .retry_after(1)
            }
            StoreError::Contention { .. } => {
                warn!(error = %err, "contention");
                Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "contention",
                    "too many concurrent requests for the same numbers; retry after the indicated delay",
                )
                .retry_after(1)
            }
            StoreError::Unavailable { .. } => {
                error!(error = %err, "DynamoDB unavailable; outcome unknown");
                Problem::outcome_unknown(
                    "the database failed or did not answer in time, so whether the request took effect is unknown; repeat it as it was, which is always safe",
                )
            }
            StoreError::Service { .. } | StoreError::Corrupt { .. } | StoreError::Invariant(_) => {
                error!(error = %err, "internal error");
                Problem::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal_error",
                    "an internal error occurred",
                )
            }
        }
    }
}

impl From<TicketError> for Problem {
    fn from(err: TicketError) -> Self {
        let detail = err.to_string();
        match err {
            TicketError::DrawNotFound(_) => {
                Problem::new(StatusCode::NOT_FOUND, "draw_not_found", detail)
            }
            TicketError::DrawExists(_) => Problem::new(StatusCode::CONFLICT, "draw_exists", detail),
            TicketError::InvalidConfig(err) => err.into(),
            TicketError::DrawClosed(_) => Problem::new(StatusCode::CONFLICT, "draw_closed", detail),
            TicketError::DrawNotOpen { opens_at, .. } => {
                Problem::new(StatusCode::CONFLICT, "draw_not_open", detail).with(
                    "opens_at",
                    opens_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                )
            }
            TicketError::PayerRequired => Problem::bad_request("payer_id_required", detail),
            TicketError::PayerLimit {
                max_per_payer,
                left,
            } => Problem::new(StatusCode::CONFLICT, "payer_limit", detail)
                .with("max_per_payer", max_per_payer)
                .with("left", left),
            TicketError::DrawOpen(_) => Problem::new(StatusCode::CONFLICT, "draw_open", detail),
            TicketError::WinnersDrawn(_) => {
                Problem::new(StatusCode::CONFLICT, "winners_drawn", detail)
            }
            TicketError::WinnersNotDrawn(_) => {
                Problem::new(StatusCode::NOT_FOUND, "winners_not_drawn", detail)
            }
            TicketError::BeaconValueRequired => {
                Problem::bad_request("beacon_value_required", detail)
            }
            TicketError::BeaconNotDeclared => Problem::bad_request("beacon_not_declared", detail),
            TicketError::NotEnoughEligible { eligible, .. } => {
                Problem::new(StatusCode::CONFLICT, "not_enough_eligible", detail)
                    .with("eligible", eligible)
            }
            TicketError::PrizeNotFound(_) => {
                Problem::new(StatusCode::NOT_FOUND, "prize_not_found", detail)
            }
            TicketError::WinnerChanged(_) => {
                Problem::new(StatusCode::CONFLICT, "winner_changed", detail)
            }
            TicketError::InvalidQuantity { max } => {
                Problem::bad_request("invalid_quantity", detail).with("max_per_purchase", max)
            }
            TicketError::SoldOut { remaining } => {
                Problem::new(StatusCode::CONFLICT, "sold_out", detail).with("remaining", remaining)
            }
            TicketError::TooFragmented { remaining } => {
                Problem::new(StatusCode::CONFLICT, "tickets_fragmented", detail)
                    .with("remaining", remaining)
            }
            TicketError::IdempotencyConflict(_) => {
                Problem::new(StatusCode::CONFLICT, "idempotency_conflict", detail)
            }
            TicketError::PurchaseNotFound(_) => {
                Problem::new(StatusCode::NOT_FOUND, "purchase_not_found", detail)
            }
            TicketError::TicketOutOfRange { .. } => {
                Problem::bad_request("ticket_out_of_range", detail)
            }
            TicketError::TicketNotSold(_) => {
                Problem::new(StatusCode::NOT_FOUND, "ticket_not_sold", detail)
            }
            TicketError::Store(err) => err.into(),
        }
    }
}

impl From<InvalidReason> for Problem {
    fn from(err: InvalidReason) -> Self {
        Problem::bad_request("invalid_reason", err.to_string())
    }
}

impl From<SeriesError> for Problem {
    fn from(err: SeriesError) -> Self {
        let code = match err {
            SeriesError::Format(_) => "invalid_format",
            SeriesError::Reset => "invalid_reset",
            SeriesError::ResetNeedsToken { .. } => "format_missing_date_token",
            SeriesError::Start => "invalid_start",
            SeriesError::Timezone => "invalid_timezone",
            SeriesError::FiscalYearStart => "invalid_fiscal_year_start",
        };
        Problem::bad_request(code, err.to_string())
    }
}

impl From<OrderError> for Problem {
    fn from(err: OrderError) -> Self {
        let detail = err.to_string();
        match err {
            OrderError::SeriesNotFound(_) => {
                Problem::new(StatusCode::NOT_FOUND, "series_not_found", detail)
            }
            OrderError::SeriesExists(_) => {
                Problem::new(StatusCode::CONFLICT, "series_exists", detail)
            }
            OrderError::OrderNotFound => {
                Problem::new(StatusCode::NOT_FOUND, "order_not_found", detail)
            }
            OrderError::AmbiguousNumber(orders) => {
                let candidates: Vec<Value> = orders
                    .iter()
                    .map(|o| {
                        json!({"series": o.series.as_str(), "period": o.period,
                               "counter": o.counter, "order_number": o.order_number})
                    })
                    .collect();
                Problem::new(StatusCode::CONFLICT, "ambiguous_order_number", detail)
                    .with("candidates", candidates)
            }
            OrderError::AlreadyVoided { reason, .. } => {
                Problem::new(StatusCode::CONFLICT, "already_voided", detail).with("reason", reason)
            }
            OrderError::MoveNotForward { last } => {
                Problem::new(StatusCode::CONFLICT, "move_not_forward", detail)
                    .with("next", last + 1)
            }
            OrderError::FormatInUse => Problem::new(StatusCode::CONFLICT, "format_in_use", detail),
            OrderError::Series(err) => err.into(),
            OrderError::Period(_) => Problem::bad_request("invalid_period", detail),
            OrderError::Store(err) => err.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
