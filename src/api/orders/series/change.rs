//! Changing a series: its settings, the format of the periods that have not started, a
//! move of the counter.

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::super::AppState;
use super::super::super::caller::{Acting, Caller};
use super::super::super::extract::{JsonBody, PathParams};
use super::super::super::problem::{Code, Problem};
use super::super::SeriesPath;
use super::response::SeriesResponse;
use super::{RangeBody, ranges_of, series_operator};
use crate::orders::{SeriesChange, SettingsChange};
use tally_domain::ids::SeriesId;
use tally_domain::order::Reason;
use tally_domain::series::{MAX_COUNTER, ValidationCode};

/// One change of a series: its settings, a new format, or a move of the counter.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(in crate::api) struct ChangeBody {
    /// For the periods that have not started; 1 to 64 characters, as a definition's.
    #[schema(min_length = 1, max_length = 64)]
    format: Option<String>,
    /// The next number of the current period (2 to 10^18); needs `reason`.
    #[schema(minimum = 2, maximum = 1_000_000_000_000_000_000_u64)]
    next: Option<u64>,
    /// The period `next` is for, as `GET` shows the current one (`2026`, `2026-11`,
    /// `2026-11-29`, `FY2027` or `all`). A move repeated after that period ended then
    /// answers the move made in it (`period_not_current` if none was), where a move
    /// without `period` would move the new period too.
    period: Option<String>,
    /// Why the counter moves: 1 to 200 characters without control characters, line or
    /// paragraph separators or bidirectional controls.
    #[schema(
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069]{1,200}$"
    )]
    reason: Option<String>,
    /// A new validation code, until the series numbers (`code_in_use` after).
    #[schema(pattern = "^[A-Za-z0-9]{1,32}$")]
    validation_code: Option<String>,
    /// The whole list of ranges: until the series numbers, any; then the same ranges
    /// followed by new ones, each past the counter.
    #[schema(max_items = 100)]
    ranges: Option<Vec<RangeBody>>,
    #[schema(minimum = 1, maximum = 100)]
    range_low_percent: Option<u8>,
}

/// The codes of `patch_series`'s own errors (the document adds those of its parameters and body).
pub(in crate::api) const PATCH_SERIES_CODES: &[Code] = &[
    Code::SeriesNotAllowed,
    Code::InvalidNext,
    Code::InvalidReason,
    Code::InvalidBody,
    Code::InvalidPeriod,
    Code::InvalidFormat,
    Code::FormatMissingDateToken,
    Code::NumberTooLong,
    Code::CharacterNotAllowed,
    Code::InvalidValidationCode,
    Code::ValidationCodeRequired,
    Code::InvalidRanges,
    Code::InvalidRangeLowPercent,
    Code::SeriesNotFound,
    Code::MoveNotForward,
    Code::PeriodNotCurrent,
    Code::FormatInUse,
    Code::TooManyFormats,
    Code::CodeInUse,
    Code::RangeInUse,
    Code::FormatOverlaps,
    Code::IssuerFull,
];

/// Move the counter, change the format
///
/// One change a request, each its own write: settings, `format`, or `next` with `reason`.
/// A move goes forward only, and the numbers it skips are a declared gap; repeating it
/// answers as done, after the period's end too when it names its `period`.
#[utoipa::path(
    patch,
    path = "/series/{series_id}",
    tag = "series",
    params(SeriesPath),
    request_body = ChangeBody,
    responses(
        (status = 200, description = "The series as `GET` answers it", body = SeriesResponse),
    )
)]
pub(in crate::api) async fn patch_series(
    State(state): State<AppState>,
    Caller(access): Caller,
    Acting(by): Acting,
    PathParams(SeriesPath { series_id }): PathParams<SeriesPath>,
    JsonBody(body): JsonBody<ChangeBody>,
) -> Result<Json<SeriesResponse>, Problem> {
    series_operator(&access)?;
    let series_id = SeriesId::parse(&series_id)?;
    let change = change_of(body)?;
    let status = state.orders.change_series(&series_id, change, &by).await?;
    let overlaps = state.orders.overlaps(&status.series).await?;
    Ok(Json(SeriesResponse::status(status, &access, overlaps)))
}

/// The one change `body` asks for: settings, a format or a move, each its own write, so
/// a body naming two is refused rather than half applied.
fn change_of(body: ChangeBody) -> Result<SeriesChange, Problem> {
    let settings =
        body.validation_code.is_some() || body.ranges.is_some() || body.range_low_percent.is_some();
    let move_asked = body.next.is_some() || body.reason.is_some() || body.period.is_some();
    match (settings, body.format, move_asked) {
        (true, None, false) => Ok(SeriesChange::Settings(SettingsChange {
            validation_code: body
                .validation_code
                .as_deref()
                .map(ValidationCode::parse)
                .transpose()?,
            ranges: body.ranges.as_deref().map(ranges_of).transpose()?,
            range_low_percent: body.range_low_percent,
        })),
        (false, Some(format), false) => Ok(SeriesChange::Format(format)),
        (false, None, true) => move_of(body.next, body.reason, body.period),
        (false, None, false) => Err(Problem::new(
            Code::InvalidBody,
            "give `format`, `next` with `reason`, or settings: `validation_code`, `ranges`, `range_low_percent`",
        )),
        _ => Err(Problem::new(
            Code::InvalidBody,
            "one change a request: `format`, `next` with `reason`, or settings \
             (`validation_code`, `ranges`, `range_low_percent`); each is its own write",
        )),
    }
}

/// A move of the counter to `next`, for `reason`, in `period` when named.
fn move_of(
    next: Option<u64>,
    reason: Option<String>,
    period: Option<String>,
) -> Result<SeriesChange, Problem> {
    let (next, reason) = match (next, reason) {
        (Some(next), Some(reason)) => (next, reason),
        (Some(_), None) => {
            return Err(Problem::new(
                Code::InvalidReason,
                "a move of the counter needs a `reason`",
            ));
        }
        (None, Some(_)) => {
            return Err(Problem::new(Code::InvalidBody, "`reason` goes with `next`"));
        }
        (None, None) => {
            return Err(Problem::new(Code::InvalidBody, "`period` goes with `next`"));
        }
    };
    if !(2..=MAX_COUNTER).contains(&next) {
        return Err(Problem::new(
            Code::InvalidNext,
            format!("`next` must be between 2 and {MAX_COUNTER}, not {next}"),
        ));
    }
    Ok(SeriesChange::Move {
        next,
        reason: Reason::parse(&reason)?,
        period,
    })
}
