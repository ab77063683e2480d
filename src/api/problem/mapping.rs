//! Each error of the services and the domain becomes a problem with its stable code.

use serde_json::{Value, json};
use tracing::{error, warn};

use super::{Code, Problem};
use crate::orders::OrderError;
use crate::store::StoreError;
use crate::tickets::TicketError;
use tally_domain::draw::DrawConfigError;
use tally_domain::ids::InvalidId;
use tally_domain::order::InvalidReason;
use tally_domain::schedule::ScheduleError;
use tally_domain::series::SeriesError;
use tally_domain::spend::SpendError;
use tally_domain::time::rfc3339_millis;

impl From<InvalidId> for Problem {
    fn from(err: InvalidId) -> Self {
        Problem::new(Code::invalid(err.field), err.to_string())
    }
}

impl From<DrawConfigError> for Problem {
    fn from(err: DrawConfigError) -> Self {
        let code = match err {
            DrawConfigError::TotalTickets(_) => Code::InvalidTotalTickets,
            DrawConfigError::MaxPerPurchase(_) => Code::InvalidMaxPerPurchase,
            DrawConfigError::Stripes(_)
            | DrawConfigError::StripesTooLong { .. }
            | DrawConfigError::PurchaseTooSpread { .. } => Code::InvalidStripes,
            DrawConfigError::MaxPerPayer(_) => Code::InvalidMaxPerPayer,
            DrawConfigError::InstantWins(_) => Code::InvalidInstantWins,
            DrawConfigError::HoldSeconds(_) => Code::InvalidHoldSeconds,
            DrawConfigError::MaxHeldPerPayer(_) => Code::InvalidMaxHeldPerPayer,
            DrawConfigError::MaxHeldPercent(_) => Code::InvalidMaxHeldPercent,
            DrawConfigError::Prizes(_) => Code::InvalidPrizes,
        };
        Problem::new(code, err.to_string())
    }
}

impl From<SpendError> for Problem {
    fn from(err: SpendError) -> Self {
        let name = match err {
            SpendError::Currency | SpendError::PriceWithoutCurrency => "currency",
            SpendError::TicketPrice(_) => "ticket_price",
            SpendError::Limit(_) | SpendError::Currencies(_) => "limits",
            SpendError::Amount(_) => "amount",
            SpendError::ExclusionPast => "excluded_until",
        };
        Problem::new(Code::invalid(name), err.to_string())
    }
}

impl From<ScheduleError> for Problem {
    fn from(err: ScheduleError) -> Self {
        let code = match err {
            ScheduleError::OutOfRange(field) => Code::invalid(field),
            ScheduleError::Order => Code::InvalidSchedule,
        };
        Problem::new(code, err.to_string())
    }
}

impl From<StoreError> for Problem {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Throttled => {
                warn!(error = %err, "throttled by DynamoDB");
                Problem::new(
                    Code::Throttled,
                    "the service is busy; retry after the indicated delay",
                )
                .retry_after(1)
            }
            StoreError::Contention { .. } => {
                warn!(error = %err, "contention");
                Problem::new(Code::Contention, "too many concurrent requests for the same numbers; retry after the indicated delay",
                )
                .retry_after(1)
            }
            StoreError::Unavailable { .. } => {
                error!(error = %err, "DynamoDB unavailable; outcome unknown");
                Problem::outcome_unknown(
                    "the database failed or did not answer in time, so whether the request took effect is unknown; repeat it as it was, which is always safe",
                )
            }
            StoreError::Service { .. }
            | StoreError::Corrupt { .. }
            | StoreError::Invariant(_)
            | StoreError::TableLayout(_) => {
                error!(error = %err, "internal error");
                Problem::new(Code::InternalError, "an internal error occurred")
            }
        }
    }
}

impl From<TicketError> for Problem {
    fn from(err: TicketError) -> Self {
        let detail = err.to_string();
        match err {
            TicketError::DrawNotFound(_) => Problem::new(Code::DrawNotFound, detail),
            TicketError::DrawExists(_) => Problem::new(Code::DrawExists, detail),
            TicketError::InvalidConfig(err) => err.into(),
            TicketError::DrawClosed(_) => Problem::new(Code::DrawClosed, detail),
            TicketError::BeaconFixed(_) => Problem::new(Code::BeaconFixed, detail),
            TicketError::ClosesAtPassed(_) => Problem::new(Code::InvalidClosesAt, detail),
            TicketError::DrawNotOpen { opens_at, .. } => {
                Problem::new(Code::DrawNotOpen, detail).with("opens_at", rfc3339_millis(opens_at))
            }
            TicketError::PayerRequired => Problem::new(Code::PayerIdRequired, detail),
            TicketError::PayerLimit {
                max_per_payer,
                left,
            } => Problem::new(Code::PayerLimit, detail)
                .with("max_per_payer", max_per_payer)
                .with("left", left),
            TicketError::PayerExcluded { until } => Problem::new(Code::PayerExcluded, detail)
                .with("excluded_until", until.map(rfc3339_millis)),
            TicketError::SpendLimit(over) => Problem::new(Code::SpendLimit, detail)
                .with("span", over.span.as_str())
                .with("window", over.window.as_str())
                .with("currency", over.currency.as_str())
                .with("spend_limit", over.limit)
                .with("left", over.left),
            TicketError::Spend(err) => err.into(),
            TicketError::PayerHoldLimit {
                max_held_per_payer,
                left,
            } => Problem::new(Code::PayerHoldLimit, detail)
                .with("max_held_per_payer", max_held_per_payer)
                .with("left", left),
            TicketError::DrawOpen(_) => Problem::new(Code::DrawOpen, detail),
            TicketError::NotFrozen(_) => Problem::new(Code::NotFrozen, detail),
            TicketError::WinnersDrawn(_) => Problem::new(Code::WinnersDrawn, detail),
            TicketError::WinnersNotDrawn(_) => Problem::new(Code::WinnersNotDrawn, detail),
            TicketError::UnknownBeaconNetwork { known, .. } => {
                Problem::new(Code::UnknownBeaconNetwork, detail).with("known", known)
            }
            TicketError::BeaconSignatureRequired { round } => {
                Problem::new(Code::BeaconSignatureRequired, detail).with("round", round)
            }
            TicketError::InvalidBeaconSignature { round } => {
                Problem::new(Code::InvalidBeaconSignature, detail).with("round", round)
            }
            TicketError::WrongBeaconRound { round, .. } => {
                Problem::new(Code::WrongBeaconRound, detail).with("round", round)
            }
            TicketError::BeaconNotPublished {
                round,
                publishes_at,
            } => Problem::new(Code::BeaconNotPublished, detail)
                .with("round", round)
                .with("publishes_at", rfc3339_millis(publishes_at)),
            TicketError::BeaconNotDeclared => Problem::new(Code::BeaconNotDeclared, detail),
            TicketError::RedrawPending(prize) => {
                Problem::new(Code::RedrawPending, detail).with("prize", prize)
            }
            TicketError::RedrawNotRequested => Problem::new(Code::RedrawNotRequested, detail),
            TicketError::NotEnoughEligible { eligible, .. } => {
                Problem::new(Code::NotEnoughEligible, detail).with("eligible", eligible)
            }
            TicketError::PrizesFixed { fixed, .. } => {
                Problem::new(Code::PrizesFixed, detail).with("prizes", fixed)
            }
            TicketError::PrizesRequired => Problem::new(Code::InvalidPrizes, detail),
            TicketError::NoInstantWins(_) => Problem::new(Code::NoInstantWins, detail),
            TicketError::PrizeNotFound(_) => Problem::new(Code::PrizeNotFound, detail),
            TicketError::WinnerChanged(_) => Problem::new(Code::WinnerChanged, detail),
            TicketError::InvalidQuantity { max, .. } => {
                Problem::new(Code::InvalidQuantity, detail).with("max_per_purchase", max)
            }
            TicketError::SoldOut { remaining, held } => Problem::new(Code::SoldOut, detail)
                .with("remaining", remaining)
                .with("held", held),
            TicketError::TicketsHeld {
                remaining,
                held,
                first_hold_ends_at,
            } => Problem::new(Code::TicketsHeld, detail)
                .with("remaining", remaining)
                .with("held", held)
                .with("first_hold_ends_at", rfc3339_millis(first_hold_ends_at)),
            TicketError::HoldsFull {
                max_held_percent,
                first_hold_ends_at,
            } => {
                let problem = Problem::new(Code::HoldsFull, detail)
                    .with("max_held_percent", max_held_percent);
                match first_hold_ends_at {
                    Some(at) => problem.with("first_hold_ends_at", rfc3339_millis(at)),
                    None => problem,
                }
            }
            TicketError::NumbersTaken(numbers) => {
                Problem::new(Code::NumbersTaken, detail).with("numbers", numbers)
            }
            TicketError::InvalidNumbers(_) => Problem::new(Code::InvalidNumbers, detail),
            TicketError::TooFragmented { remaining } => {
                Problem::new(Code::TicketsFragmented, detail).with("remaining", remaining)
            }
            TicketError::HoldConflict(_) => Problem::new(Code::IdempotencyConflict, detail),
            TicketError::HoldNotFound(_) => Problem::new(Code::HoldNotFound, detail),
            TicketError::HoldExpired(_) => Problem::new(Code::HoldExpired, detail),
            TicketError::HoldUsed(_) => Problem::new(Code::HoldUsed, detail),
            TicketError::IdempotencyConflict(_) => Problem::new(Code::IdempotencyConflict, detail),
            TicketError::PurchaseNotFound(_) => Problem::new(Code::PurchaseNotFound, detail),
            TicketError::TicketOutOfRange { .. } => Problem::new(Code::TicketOutOfRange, detail),
            TicketError::TicketNotSold(_) => Problem::new(Code::TicketNotSold, detail),
            TicketError::InvalidCursor => Problem::new(Code::InvalidCursor, detail),
            TicketError::Store(err) => err.into(),
        }
    }
}

impl From<InvalidReason> for Problem {
    fn from(err: InvalidReason) -> Self {
        Problem::new(Code::InvalidReason, err.to_string())
    }
}

impl From<SeriesError> for Problem {
    fn from(err: SeriesError) -> Self {
        let code = match &err {
            SeriesError::Format(_) => Code::InvalidFormat,
            SeriesError::Reset => Code::InvalidReset,
            SeriesError::ResetNeedsToken { .. } => Code::FormatMissingDateToken,
            SeriesError::Start(_) | SeriesError::StartTooWide { .. } => Code::InvalidStart,
            SeriesError::Timezone => Code::InvalidTimezone,
            SeriesError::FiscalYearStart(_) => Code::InvalidFiscalYearStart,
            SeriesError::MaxLength(_) => Code::InvalidMaxLength,
            SeriesError::CharacterRule => Code::InvalidAllowedCharacters,
            SeriesError::TooLong { .. } => Code::NumberTooLong,
            SeriesError::CharacterRefused { .. } => Code::CharacterNotAllowed,
            SeriesError::ValidationCode => Code::InvalidValidationCode,
            SeriesError::CodeMissing => Code::ValidationCodeRequired,
            SeriesError::Ranges(_) => Code::InvalidRanges,
            SeriesError::RangeInUse(_) => {
                return Problem::new(Code::RangeInUse, err.to_string());
            }
            SeriesError::LowPercent(_) => Code::InvalidRangeLowPercent,
            SeriesError::Credits(_) => Code::InvalidCredits,
        };
        let problem = Problem::new(code, err.to_string());
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
            OrderError::SeriesNotFound(_) => Problem::new(Code::SeriesNotFound, detail),
            OrderError::SeriesExists(_) => Problem::new(Code::SeriesExists, detail),
            OrderError::OrderNotFound => Problem::new(Code::OrderNotFound, detail),
            OrderError::AmbiguousNumber(orders) => {
                let candidates: Vec<Value> = orders
                    .iter()
                    .map(|o| {
                        json!({"series": o.series.as_str(), "period": o.period,
                               "counter": o.counter, "order_number": o.order_number})
                    })
                    .collect();
                Problem::new(Code::AmbiguousOrderNumber, detail).with("candidates", candidates)
            }
            OrderError::AlreadyVoided { reason, .. } => {
                Problem::new(Code::AlreadyVoided, detail).with("reason", reason)
            }
            OrderError::MoveNotForward { last } => {
                Problem::new(Code::MoveNotForward, detail).with("next", last + 1)
            }
            OrderError::PeriodNotCurrent { current, .. } => {
                Problem::new(Code::PeriodNotCurrent, detail).with("period", current.to_string())
            }
            OrderError::FormatInUse => Problem::new(Code::FormatInUse, detail),
            OrderError::CodeInUse => Problem::new(Code::CodeInUse, detail),
            OrderError::TooManyFormats(_) => Problem::new(Code::TooManyFormats, detail),
            OrderError::FormatOverlaps(overlap) | OrderError::FormatRepeats(overlap) => {
                Problem::new(Code::FormatOverlaps, detail)
                    .with("series", overlap.series.as_str())
                    .with("example", overlap.example)
            }
            OrderError::PeriodTurning => Problem::new(Code::Contention, detail).retry_after(1),
            OrderError::IssuerFull(_) => Problem::new(Code::IssuerFull, detail),
            OrderError::InvoiceCredited { .. } => Problem::new(Code::InvoiceCredited, detail),
            OrderError::SourceNotAllowed(_) => Problem::new(Code::SourceNotAllowed, detail),
            OrderError::Series(err) => err.into(),
            OrderError::Period(_) => Problem::new(Code::InvalidPeriod, detail),
            OrderError::Store(err) => err.into(),
        }
    }
}
