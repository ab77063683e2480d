//! Every problem code, declared once with its HTTP status: a problem is made from its
//! code, so a new code cannot forget its status, and no code is spelled anywhere else.

use std::borrow::Cow;

use axum::http::StatusCode;

use crate::orders::RejectionCode;

/// `Name = STATUS "code" ["member", ...],` declares [`Code::Name`], answered with
/// `StatusCode::STATUS`, whose problem documents carry the members listed (if any).
macro_rules! problem_codes {
    ($($code:ident = $status:ident $text:literal $([$($member:literal),+])?,)+) => {
        /// What went wrong, for programs: the `code` of a problem document.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Code {
            $($code,)+
            /// A member of the body or a parameter of the path of the wrong type or out of
            /// range: `invalid_<name>`.
            Invalid(Cow<'static, str>),
        }

        impl Code {
            /// Every code but the `invalid_<name>` family.
            #[cfg(test)]
            pub const FIXED: &'static [Code] = &[$(Self::$code),+];

            pub fn status(&self) -> StatusCode {
                match self {
                    $(Self::$code => StatusCode::$status,)+
                    Self::Invalid(_) => StatusCode::BAD_REQUEST,
                }
            }

            /// The members a problem of this code carries besides the standard ones.
            pub fn members(&self) -> &'static [&'static str] {
                match self {
                    $(Self::$code => &[$($($member),+)?],)+
                    Self::Invalid(_) => &[],
                }
            }

            pub fn as_str(&self) -> Cow<'static, str> {
                match self {
                    $(Self::$code => Cow::Borrowed($text),)+
                    Self::Invalid(name) => Cow::Owned(format!("invalid_{name}")),
                }
            }
        }
    };
}

problem_codes! {
    BeaconNotDeclared = BAD_REQUEST "beacon_not_declared",
    BeaconSignatureRequired = BAD_REQUEST "beacon_signature_required" ["round"],
    CharacterNotAllowed = BAD_REQUEST "character_not_allowed" ["number", "character"],
    CorrectsRequired = BAD_REQUEST "corrects_required",
    DataTooLarge = BAD_REQUEST "data_too_large",
    FormatMissingDateToken = BAD_REQUEST "format_missing_date_token",
    InvalidAllowedCharacters = BAD_REQUEST "invalid_allowed_characters",
    InvalidBatchSize = BAD_REQUEST "invalid_batch_size",
    InvalidBeacon = BAD_REQUEST "invalid_beacon",
    InvalidBeaconSignature = BAD_REQUEST "invalid_beacon_signature" ["round"],
    InvalidBody = BAD_REQUEST "invalid_body",
    InvalidChannel = BAD_REQUEST "invalid_channel",
    InvalidClosesAt = BAD_REQUEST "invalid_closes_at",
    InvalidCorrects = BAD_REQUEST "invalid_corrects",
    InvalidCredits = BAD_REQUEST "invalid_credits",
    InvalidCursor = BAD_REQUEST "invalid_cursor",
    InvalidData = BAD_REQUEST "invalid_data",
    InvalidExternalRef = BAD_REQUEST "invalid_external_ref",
    InvalidFiscalYearStart = BAD_REQUEST "invalid_fiscal_year_start",
    InvalidFormat = BAD_REQUEST "invalid_format",
    InvalidHoldSeconds = BAD_REQUEST "invalid_hold_seconds",
    InvalidInstantWins = BAD_REQUEST "invalid_instant_wins",
    InvalidLimit = BAD_REQUEST "invalid_limit",
    InvalidMaxLength = BAD_REQUEST "invalid_max_length",
    InvalidMaxPerPayer = BAD_REQUEST "invalid_max_per_payer",
    InvalidMaxPerPurchase = BAD_REQUEST "invalid_max_per_purchase",
    InvalidNext = BAD_REQUEST "invalid_next",
    InvalidNumbers = BAD_REQUEST "invalid_numbers",
    InvalidOrder = BAD_REQUEST "invalid_order",
    InvalidOrderNumber = BAD_REQUEST "invalid_order_number",
    InvalidPath = BAD_REQUEST "invalid_path",
    InvalidPeriod = BAD_REQUEST "invalid_period",
    InvalidPrize = BAD_REQUEST "invalid_prize",
    InvalidPrizes = BAD_REQUEST "invalid_prizes",
    InvalidQuantity = BAD_REQUEST "invalid_quantity" ["max_per_purchase"],
    InvalidQuery = BAD_REQUEST "invalid_query",
    InvalidRangeLowPercent = BAD_REQUEST "invalid_range_low_percent",
    InvalidRanges = BAD_REQUEST "invalid_ranges",
    InvalidReason = BAD_REQUEST "invalid_reason",
    InvalidReset = BAD_REQUEST "invalid_reset",
    InvalidSchedule = BAD_REQUEST "invalid_schedule",
    InvalidStart = BAD_REQUEST "invalid_start",
    InvalidStripes = BAD_REQUEST "invalid_stripes",
    InvalidStatus = BAD_REQUEST "invalid_status",
    InvalidTicketNumber = BAD_REQUEST "invalid_ticket_number",
    InvalidTimezone = BAD_REQUEST "invalid_timezone",
    InvalidTotalTickets = BAD_REQUEST "invalid_total_tickets",
    InvalidValidationCode = BAD_REQUEST "invalid_validation_code",
    MalformedJson = BAD_REQUEST "malformed_json",
    NumberTooLong = BAD_REQUEST "number_too_long" ["number", "max_length"],
    PayerIdRequired = BAD_REQUEST "payer_id_required",
    TicketOutOfRange = BAD_REQUEST "ticket_out_of_range",
    UnknownBeaconNetwork = BAD_REQUEST "unknown_beacon_network" ["known"],
    UnreadableBody = BAD_REQUEST "unreadable_body",
    ValidationCodeRequired = BAD_REQUEST "validation_code_required",
    WrongBeaconRound = BAD_REQUEST "wrong_beacon_round" ["round"],
    SourceNotAllowed = FORBIDDEN "source_not_allowed",
    DrawNotFound = NOT_FOUND "draw_not_found",
    HoldNotFound = NOT_FOUND "hold_not_found",
    NoInstantWins = NOT_FOUND "no_instant_wins",
    OrderNotFound = NOT_FOUND "order_not_found",
    PrizeNotFound = NOT_FOUND "prize_not_found",
    PurchaseNotFound = NOT_FOUND "purchase_not_found",
    RouteNotFound = NOT_FOUND "route_not_found",
    SeriesNotFound = NOT_FOUND "series_not_found",
    TicketNotSold = NOT_FOUND "ticket_not_sold",
    VerifyPageNotBuilt = NOT_FOUND "verify_page_not_built",
    WinnersNotDrawn = NOT_FOUND "winners_not_drawn",
    MethodNotAllowed = METHOD_NOT_ALLOWED "method_not_allowed",
    BodyTimeout = REQUEST_TIMEOUT "body_timeout",
    AlreadyVoided = CONFLICT "already_voided" ["reason"],
    AmbiguousOrderNumber = CONFLICT "ambiguous_order_number" ["candidates"],
    BeaconNotPublished = CONFLICT "beacon_not_published" ["round", "publishes_at"],
    CodeInUse = CONFLICT "code_in_use",
    DrawClosed = CONFLICT "draw_closed",
    DrawExists = CONFLICT "draw_exists",
    DrawNotOpen = CONFLICT "draw_not_open" ["opens_at"],
    DrawOpen = CONFLICT "draw_open",
    FormatInUse = CONFLICT "format_in_use",
    HoldExpired = CONFLICT "hold_expired",
    HoldUsed = CONFLICT "hold_used",
    IdempotencyConflict = CONFLICT "idempotency_conflict",
    InvoiceCredited = CONFLICT "invoice_credited",
    InvoiceNotFound = CONFLICT "invoice_not_found",
    InvoiceVoid = CONFLICT "invoice_void",
    MoveNotForward = CONFLICT "move_not_forward" ["next"],
    NotEnoughEligible = CONFLICT "not_enough_eligible" ["eligible"],
    NumbersTaken = CONFLICT "numbers_taken" ["numbers"],
    PayerLimit = CONFLICT "payer_limit" ["max_per_payer", "left"],
    RangeExhausted = CONFLICT "range_exhausted",
    RangeExpired = CONFLICT "range_expired",
    RangeInUse = CONFLICT "range_in_use",
    RedrawNotRequested = CONFLICT "redraw_not_requested",
    RedrawPending = CONFLICT "redraw_pending" ["prize"],
    SeriesExhausted = CONFLICT "series_exhausted",
    SeriesExists = CONFLICT "series_exists",
    SoldOut = CONFLICT "sold_out" ["remaining"],
    TicketsFragmented = CONFLICT "tickets_fragmented" ["remaining"],
    TooManyFormats = CONFLICT "too_many_formats",
    WinnerChanged = CONFLICT "winner_changed",
    WinnersDrawn = CONFLICT "winners_drawn",
    BodyTooLarge = PAYLOAD_TOO_LARGE "body_too_large" ["limit"],
    UnsupportedMediaType = UNSUPPORTED_MEDIA_TYPE "unsupported_media_type",
    InternalError = INTERNAL_SERVER_ERROR "internal_error",
    Contention = SERVICE_UNAVAILABLE "contention",
    OutcomeUnknown = SERVICE_UNAVAILABLE "outcome_unknown",
    Throttled = SERVICE_UNAVAILABLE "throttled",
}

impl Code {
    /// `invalid_<name>`, for a member or parameter called `name`.
    pub fn invalid(name: impl Into<Cow<'static, str>>) -> Self {
        Self::Invalid(name.into())
    }

    /// [`Self::invalid`] for the lists of a route's codes.
    pub const fn member(name: &'static str) -> Self {
        Self::Invalid(Cow::Borrowed(name))
    }
}

impl From<RejectionCode> for Code {
    fn from(code: RejectionCode) -> Self {
        match code {
            RejectionCode::InvalidExternalRef => Self::InvalidExternalRef,
            RejectionCode::InvalidData => Self::InvalidData,
            RejectionCode::DataTooLarge => Self::DataTooLarge,
            RejectionCode::InvalidOrder => Self::InvalidOrder,
            RejectionCode::IdempotencyConflict => Self::IdempotencyConflict,
            RejectionCode::Contention => Self::Contention,
            RejectionCode::CorrectsRequired => Self::CorrectsRequired,
            RejectionCode::InvalidCorrects => Self::InvalidCorrects,
            RejectionCode::InvoiceNotFound => Self::InvoiceNotFound,
            RejectionCode::InvoiceVoid => Self::InvoiceVoid,
            RejectionCode::SeriesExhausted => Self::SeriesExhausted,
            RejectionCode::RangeExhausted => Self::RangeExhausted,
            RejectionCode::RangeExpired => Self::RangeExpired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::orders::snake_case;

    #[test]
    fn each_code_reads_as_its_name_in_snake_case_and_is_an_error_status() {
        for code in Code::FIXED {
            assert_eq!(code.as_str(), snake_case(&format!("{code:?}")));
            assert!(code.status().as_u16() >= 400, "{code:?}");
        }
        assert_eq!(Code::invalid("limit").as_str(), "invalid_limit");
    }

    #[test]
    fn a_rejected_order_answers_the_status_its_kind_of_rejection_says() {
        for &rejection in RejectionCode::ALL {
            let code = Code::from(rejection);
            assert_eq!(code.as_str(), rejection.as_str());
            let status = if rejection.is_retryable() {
                StatusCode::SERVICE_UNAVAILABLE
            } else if rejection.is_conflict() {
                StatusCode::CONFLICT
            } else {
                StatusCode::BAD_REQUEST
            };
            assert_eq!(code.status(), status, "{rejection}");
        }
    }
}
