//! What responses say of a series: its definition, formats and overlaps, and its current
//! period.

use serde::Serialize;
use utoipa::ToSchema;

use super::super::super::timestamp;
use super::RangeBody;
use crate::orders::SeriesStatus;
use tally_domain::access::SourceAccess;
use tally_domain::series::Reset;
use tally_domain::series::Series;
use tally_domain::series::issuer::Overlap;

/// One format a series has had.
#[derive(Serialize, ToSchema)]
struct FormatResponse {
    version: u32,
    format: String,
    /// The first period numbered in it; `null` for the format the series was created with.
    #[schema(required = true)]
    from: Option<String>,
}

/// Another series of the same issuer that could render a text this one could: only
/// between series defined before the rule that refuses it.
#[derive(Serialize, ToSchema)]
pub(in crate::api::orders) struct OverlapResponse {
    /// The other series.
    series: String,
    /// A text both could render.
    example: String,
}

impl OverlapResponse {
    pub(in crate::api::orders) fn list(overlaps: Vec<Overlap>) -> Vec<Self> {
        overlaps
            .into_iter()
            .map(|o| Self {
                series: o.series.to_string(),
                example: o.example,
            })
            .collect()
    }
}

/// A series' definition; read with `GET`, also its current period and last number.
#[derive(Serialize, ToSchema)]
pub(in crate::api::orders) struct SeriesResponse {
    series_id: String,
    /// The company whose numbers these are.
    issuer: String,
    format: String,
    formats: Vec<FormatResponse>,
    reset: Reset,
    gapless: bool,
    start: u64,
    timezone: String,
    fiscal_year_start: u32,
    #[schema(format = DateTime)]
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    max_length: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    allowed_characters: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    validation_code: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ranges: Vec<RangeBody>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    range_low_percent: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    credits: Option<String>,
    /// The current period.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    period: Option<String>,
    /// The counter of the current period: the last counter issued, in a fast series the
    /// last one reserved (numbers below it may still wait in a block); `null` before the
    /// first.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<u64>)]
    last_counter: Option<Option<u64>>,
    /// The number of the order at `last_counter` (after a move, of the last order before
    /// it), as stored; `null` when none holds it: before the first, or in a fast series
    /// whose last block is not used up. Left out for a caller bound to some sources: it
    /// may be another source's order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    last_number: Option<Option<String>>,
    /// Other series of the issuer that could render a text this one could: series
    /// defined before no two of one issuer could keep numbering, flagged here. Left out
    /// when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    overlaps: Vec<OverlapResponse>,
}

impl From<Series> for SeriesResponse {
    fn from(series: Series) -> Self {
        let d = series.definition;
        Self {
            series_id: series.series_id.to_string(),
            issuer: d.issuer.to_string(),
            format: d.format.as_str().to_owned(),
            formats: series
                .formats
                .into_iter()
                .map(|f| FormatResponse {
                    version: f.version,
                    format: f.format.as_str().to_owned(),
                    from: f.from.map(|p| p.to_string()),
                })
                .collect(),
            reset: d.reset,
            gapless: d.gapless,
            start: d.start,
            timezone: d.calendar.timezone.as_str().to_owned(),
            fiscal_year_start: d.calendar.fiscal_year_start,
            created_at: timestamp(series.created_at),
            max_length: d.rules.max_length,
            allowed_characters: d
                .rules
                .allowed_characters
                .as_ref()
                .map(|rule| rule.as_str().to_owned()),
            validation_code: d.validation_code.as_ref().map(|c| c.as_str().to_owned()),
            ranges: d.ranges.as_slice().iter().map(RangeBody::from).collect(),
            range_low_percent: (!d.ranges.is_empty()).then_some(d.range_low_percent),
            credits: d.credits.as_ref().map(ToString::to_string),
            period: None,
            last_counter: None,
            last_number: None,
            overlaps: Vec::new(),
        }
    }
}

impl SeriesResponse {
    /// The series with its current period, as `access` may see it: a caller bound to some
    /// sources is not shown the last number, which may be another source's order.
    pub(super) fn status(
        status: SeriesStatus,
        access: &SourceAccess,
        overlaps: Vec<Overlap>,
    ) -> Self {
        Self {
            period: Some(status.period.to_string()),
            last_counter: Some(status.last_counter),
            last_number: (!access.is_bound()).then_some(status.last_number),
            ..Self::from(status.series).with_overlaps(overlaps)
        }
    }

    /// The series, flagging the other series of its issuer that could render its texts.
    pub(super) fn with_overlaps(self, overlaps: Vec<Overlap>) -> Self {
        Self {
            overlaps: OverlapResponse::list(overlaps),
            ..self
        }
    }
}
