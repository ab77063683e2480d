//! Each error of the services and the domain becomes a problem with its stable code.

use axum::http::StatusCode;
use serde_json::{Value, json};
use tracing::{error, warn};

use super::Problem;
use crate::domain::draw::DrawConfigError;
use crate::domain::ids::InvalidId;
use crate::domain::order::InvalidReason;
use crate::domain::schedule::ScheduleError;
use crate::domain::series::SeriesError;
use crate::orders::OrderError;
use crate::store::StoreError;
use crate::tickets::TicketError;

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
            DrawConfigError::HoldSeconds => "invalid_hold_seconds",
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
            TicketError::ClosesAtPassed(_) => Problem::bad_request("invalid_closes_at", detail),
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
            TicketError::UnknownBeaconNetwork { known, .. } => {
                Problem::bad_request("unknown_beacon_network", detail).with("known", known)
            }
            TicketError::BeaconSignatureRequired { round } => {
                Problem::bad_request("beacon_signature_required", detail).with("round", round)
            }
            TicketError::InvalidBeaconSignature { round } => {
                Problem::bad_request("invalid_beacon_signature", detail).with("round", round)
            }
            TicketError::WrongBeaconRound { round, .. } => {
                Problem::bad_request("wrong_beacon_round", detail).with("round", round)
            }
            TicketError::BeaconNotPublished {
                round,
                publishes_at,
            } => Problem::new(StatusCode::CONFLICT, "beacon_not_published", detail)
                .with("round", round)
                .with(
                    "publishes_at",
                    publishes_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                ),
            TicketError::BeaconNotDeclared => Problem::bad_request("beacon_not_declared", detail),
            TicketError::RedrawPending(prize) => {
                Problem::new(StatusCode::CONFLICT, "redraw_pending", detail).with("prize", prize)
            }
            TicketError::RedrawNotRequested => {
                Problem::new(StatusCode::CONFLICT, "redraw_not_requested", detail)
            }
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
            TicketError::NumbersTaken(numbers) => {
                Problem::new(StatusCode::CONFLICT, "numbers_taken", detail).with("numbers", numbers)
            }
            TicketError::InvalidNumbers(_) => Problem::bad_request("invalid_numbers", detail),
            TicketError::TooFragmented { remaining } => {
                Problem::new(StatusCode::CONFLICT, "tickets_fragmented", detail)
                    .with("remaining", remaining)
            }
            TicketError::IdempotencyConflict(_) | TicketError::HoldConflict(_) => {
                Problem::new(StatusCode::CONFLICT, "idempotency_conflict", detail)
            }
            TicketError::HoldNotFound(_) => {
                Problem::new(StatusCode::NOT_FOUND, "hold_not_found", detail)
            }
            TicketError::HoldExpired(_) => {
                Problem::new(StatusCode::CONFLICT, "hold_expired", detail)
            }
            TicketError::HoldUsed(_) => Problem::new(StatusCode::CONFLICT, "hold_used", detail),
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
        let code = match &err {
            SeriesError::Format(_) => "invalid_format",
            SeriesError::Reset => "invalid_reset",
            SeriesError::ResetNeedsToken { .. } => "format_missing_date_token",
            SeriesError::Start | SeriesError::StartTooWide { .. } => "invalid_start",
            SeriesError::Timezone => "invalid_timezone",
            SeriesError::FiscalYearStart => "invalid_fiscal_year_start",
            SeriesError::MaxLength => "invalid_max_length",
            SeriesError::CharacterRule => "invalid_allowed_characters",
            SeriesError::TooLong { .. } => "number_too_long",
            SeriesError::CharacterRefused { .. } => "character_not_allowed",
            SeriesError::ValidationCode => "invalid_validation_code",
            SeriesError::CodeMissing => "validation_code_required",
            SeriesError::Ranges(_) => "invalid_ranges",
            SeriesError::RangeInUse(_) => {
                return Problem::new(StatusCode::CONFLICT, "range_in_use", err.to_string());
            }
            SeriesError::LowPercent => "invalid_range_low_percent",
            SeriesError::Credits(_) => "invalid_credits",
        };
        let problem = Problem::bad_request(code, err.to_string());
        match err {
            SeriesError::TooLong { number, max } => {
                problem.with("number", number).with("max_length", max)
            }
            SeriesError::CharacterRefused {
                number, refused, ..
            } => problem
                .with("number", number)
                .with("character", refused.to_string()),
            _ => problem,
        }
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
            OrderError::CodeInUse => Problem::new(StatusCode::CONFLICT, "code_in_use", detail),
            OrderError::TooManyFormats(_) => {
                Problem::new(StatusCode::CONFLICT, "too_many_formats", detail)
            }
            OrderError::InvoiceCredited { .. } => {
                Problem::new(StatusCode::CONFLICT, "invoice_credited", detail)
            }
            OrderError::SourceNotAllowed(_) => {
                Problem::new(StatusCode::FORBIDDEN, "source_not_allowed", detail)
            }
            OrderError::Series(err) => err.into(),
            OrderError::Period(_) => Problem::bad_request("invalid_period", detail),
            OrderError::Store(err) => err.into(),
        }
    }
}
