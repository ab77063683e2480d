//! Defining and reading a series; changing one is `change.rs`, what the answers say is
//! `response.rs`.

mod change;
mod response;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::super::AppState;
use super::super::caller::{Acting, Caller};
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::{Code, Problem};
use super::super::timestamp;
use super::SeriesPath;
use tally_domain::access::SourceAccess;
use tally_domain::ids::{IssuerId, SeriesId};
use tally_domain::series::{
    AuthorisedRange, Calendar, DEFAULT_FORMAT, DEFAULT_LOW_PERCENT, NumberRules, Ranges, Reset,
    SeriesDefinition, SeriesError, Timezone, ValidationCode,
};
use tally_domain::time::parse_rfc3339;

pub(super) use change::{__path_patch_series, PATCH_SERIES_CODES, patch_series};
pub(super) use response::OverlapResponse;
use response::SeriesResponse;

/// A series' definition; every field has a default.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SeriesBody {
    /// Tokens `{yyyy}`, `{yy}`, `{mm}`, `{dd}`, `{fy}`, `{series}` and exactly one
    /// `{seq:N}` (N from 1 to 18); other text is letters, digits, `-`, `_`, `/`, `.`.
    /// `{series}{yy}{seq:6}` by default. 1 to 64 characters.
    #[schema(min_length = 1, max_length = 64)]
    format: Option<String>,
    /// `never`, `yearly` (the default), `monthly`, `daily` or `fiscal_yearly`.
    #[schema(value_type = Option<Reset>)]
    reset: Option<String>,
    /// Every counter from the first to the last is used by exactly one order; `true` by
    /// default.
    gapless: Option<bool>,
    /// The first counter of each period, 1 by default.
    #[schema(minimum = 1, maximum = 1_000_000_000_000_000_u64)]
    start: Option<u64>,
    /// An IANA time zone name, `UTC` by default: it decides periods and date tokens.
    #[schema(min_length = 1, max_length = 64)]
    timezone: Option<String>,
    /// The month (1 to 12) a fiscal year starts in, 1 by default.
    #[schema(minimum = 1, maximum = 12)]
    fiscal_year_start: Option<u32>,
    /// The longest number (1 to 256 characters): a definition whose first number is
    /// longer is refused, and a counter whose number would be is refused when numbered
    /// (`series_exhausted`), never issued.
    #[schema(minimum = 1, maximum = 256)]
    max_length: Option<usize>,
    /// The characters numbers may hold, as a character class without brackets, such as
    /// `A-Za-z0-9/-` (a `-` is itself at the start or the end): 1 to 64 characters.
    #[schema(min_length = 1, max_length = 64)]
    allowed_characters: Option<String>,
    /// What `{code}` shows: the tax authority's validation code of the series (1 to 32
    /// letters and digits). Fixed once the series numbers.
    #[schema(pattern = "^[A-Za-z0-9]{1,32}$")]
    validation_code: Option<String>,
    /// Authorised ranges, in counter order, never overlapping: numbers are only issued
    /// inside a live one. Needs `reset` `never`; `start` is the first range's `from` by
    /// default.
    #[schema(max_items = 100)]
    ranges: Option<Vec<RangeBody>>,
    /// `Range Running Low` fires once this share (1 to 100 percent) of a range is used;
    /// 90 by default.
    #[schema(minimum = 1, maximum = 100)]
    range_low_percent: Option<u8>,
    /// The series whose invoices this series' orders correct: each of its orders is a
    /// credit note naming its invoice in `corrects`.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,32}$")]
    credits: Option<String>,
    /// The company whose numbers these are (`default`, the deployment's, when none is
    /// named): no two series of one issuer may render the same text, so a format that
    /// could render one of another series' texts, past formats included, is refused
    /// (`409 format_overlaps`). Fixed once defined.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    issuer: Option<String>,
}

/// Counters `from` to `to` authorised by the tax authority.
#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RangeBody {
    #[schema(minimum = 1, maximum = 1_000_000_000_000_000_000_u64)]
    from: u64,
    #[schema(minimum = 1, maximum = 1_000_000_000_000_000_000_u64)]
    to: u64,
    /// The authority's reference (a CAF file, a resolution number): 1 to 48 characters
    /// without control characters, line separators or bidirectional controls.
    #[schema(
        pattern = "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069]{1,48}$"
    )]
    authority_ref: String,
    /// No number of the range is issued at or after this time (RFC 3339, no leap second);
    /// none: it does not expire.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(format = DateTime, nullable = false)]
    valid_until: Option<String>,
}

impl From<&AuthorisedRange> for RangeBody {
    fn from(range: &AuthorisedRange) -> Self {
        Self {
            from: range.from,
            to: range.to,
            authority_ref: range.authority_ref.clone(),
            valid_until: range.valid_until.map(timestamp),
        }
    }
}

fn ranges_of(bodies: &[RangeBody]) -> Result<Ranges, SeriesError> {
    let mut ranges = Vec::with_capacity(bodies.len());
    for body in bodies {
        let valid_until = body
            .valid_until
            .as_deref()
            .map(|text| {
                parse_rfc3339(text)
                    .map_err(|err| SeriesError::Ranges(format!("`valid_until` is {err}")))
            })
            .transpose()?;
        ranges.push(AuthorisedRange::new(
            body.from,
            body.to,
            &body.authority_ref,
            valid_until,
        )?);
    }
    Ranges::new(ranges)
}

/// Refuses a caller bound to some sources only: a series numbers every source's orders,
/// so defining or changing one is an operator's, bound to every source (`*`).
fn series_operator(access: &SourceAccess) -> Result<(), Problem> {
    if access.is_bound() {
        return Err(Problem::new(
            Code::SeriesNotAllowed,
            "defining or changing a series needs a caller bound to every source (`*`)",
        ));
    }
    Ok(())
}

/// The codes of `put_series`'s own errors (the document adds those of its parameters and body).
pub(super) const PUT_SERIES_CODES: &[Code] = &[
    Code::SeriesNotAllowed,
    Code::InvalidFormat,
    Code::InvalidReset,
    Code::InvalidStart,
    Code::InvalidTimezone,
    Code::InvalidFiscalYearStart,
    Code::FormatMissingDateToken,
    Code::InvalidMaxLength,
    Code::InvalidAllowedCharacters,
    Code::NumberTooLong,
    Code::CharacterNotAllowed,
    Code::InvalidValidationCode,
    Code::ValidationCodeRequired,
    Code::InvalidRanges,
    Code::InvalidRangeLowPercent,
    Code::InvalidCredits,
    Code::member("issuer"),
    Code::SeriesExists,
    Code::FormatOverlaps,
    Code::IssuerFull,
];

/// Define a series
///
/// `201` when created, `200` when an identical definition exists.
#[utoipa::path(
    put,
    path = "/series/{series_id}",
    tag = "series",
    params(SeriesPath),
    request_body = SeriesBody,
    responses(
        (status = 201, description = "Created", body = SeriesResponse),
        (status = 200, description = "The same definition existed", body = SeriesResponse),
    )
)]
pub(super) async fn put_series(
    State(state): State<AppState>,
    Caller(access): Caller,
    Acting(by): Acting,
    PathParams(SeriesPath { series_id }): PathParams<SeriesPath>,
    JsonBody(body): JsonBody<SeriesBody>,
) -> Result<impl IntoResponse, Problem> {
    series_operator(&access)?;
    let series_id = SeriesId::parse(&series_id)?;
    let reset = Reset::parse(body.reset.as_deref().unwrap_or("yearly"))?;
    let timezone = match &body.timezone {
        Some(name) => Timezone::parse(name)?,
        None => Timezone::utc(),
    };
    let calendar = Calendar::new(timezone, body.fiscal_year_start.unwrap_or(1))?;
    let ranges = ranges_of(body.ranges.as_deref().unwrap_or_default())?;
    let start = body
        .start
        .or_else(|| ranges.as_slice().first().map(|r| r.from))
        .unwrap_or(1);
    let definition = SeriesDefinition::new(
        body.format.as_deref().unwrap_or(DEFAULT_FORMAT),
        reset,
        body.gapless.unwrap_or(true),
        start,
    )?
    .with_calendar(calendar)
    .with_rules(NumberRules::new(
        body.max_length,
        body.allowed_characters.as_deref(),
    )?)
    .with_validation_code(
        body.validation_code
            .as_deref()
            .map(ValidationCode::parse)
            .transpose()?,
    )
    .with_ranges(
        ranges,
        body.range_low_percent.unwrap_or(DEFAULT_LOW_PERCENT),
    )?
    .crediting(body.credits.as_deref().map(SeriesId::parse).transpose()?)
    .issued_by(match body.issuer.as_deref() {
        Some(issuer) => IssuerId::parse(issuer)?,
        None => IssuerId::deployment(),
    });
    let (series, created) = state
        .orders
        .define_series(&series_id, definition, &by)
        .await?;
    if created {
        return Ok((StatusCode::CREATED, Json(SeriesResponse::from(series))));
    }
    // A series defined before issuers existed may overlap others: say so again.
    let overlaps = state.orders.overlaps(&series).await?;
    let response = SeriesResponse::from(series).with_overlaps(overlaps);
    Ok((StatusCode::OK, Json(response)))
}

/// The codes of `get_series`'s own errors (the document adds those of its parameters and body).
pub(super) const GET_SERIES_CODES: &[Code] = &[Code::member("series_id"), Code::SeriesNotFound];

/// Read a series
///
/// Its definition, current period, last counter and last number (not shown to a caller
/// bound to some sources), and the series of its issuer it overlaps, if it was defined
/// before the rule that refuses them.
#[utoipa::path(
    get,
    path = "/series/{series_id}",
    tag = "series",
    params(SeriesPath),
    responses(
        (status = 200, description = "The series with its current period and last number", body = SeriesResponse),
    )
)]
pub(super) async fn get_series(
    State(state): State<AppState>,
    Caller(access): Caller,
    PathParams(SeriesPath { series_id }): PathParams<SeriesPath>,
) -> Result<Json<SeriesResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let status = state.orders.series_status(&series_id).await?;
    let overlaps = state.orders.overlaps(&status.series).await?;
    Ok(Json(SeriesResponse::status(status, &access, overlaps)))
}
