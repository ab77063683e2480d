//! Defining, reading and changing a series.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};

use super::super::AppState;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::Problem;
use super::super::timestamp;
use crate::domain::ids::SeriesId;
use crate::domain::order::Reason;
use crate::domain::series::{
    Calendar, DEFAULT_FORMAT, MAX_COUNTER, Reset, Series, SeriesDefinition, Timezone,
};
use crate::orders::{SeriesChange, SeriesStatus};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SeriesBody {
    format: Option<String>,
    reset: Option<String>,
    gapless: Option<bool>,
    start: Option<u64>,
    timezone: Option<String>,
    fiscal_year_start: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ChangeBody {
    format: Option<String>,
    next: Option<u64>,
    reason: Option<String>,
}

#[derive(Serialize)]
struct FormatResponse {
    version: u32,
    format: String,
    /// The first period numbered in it; `null` for the format the series was created with.
    from: Option<String>,
}

#[derive(Serialize)]
pub(super) struct SeriesResponse {
    series_id: String,
    format: String,
    formats: Vec<FormatResponse>,
    reset: &'static str,
    gapless: bool,
    start: u64,
    timezone: String,
    fiscal_year_start: u32,
    created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    period: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_counter: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    last_number: Option<Option<String>>,
}

impl From<Series> for SeriesResponse {
    fn from(series: Series) -> Self {
        let d = series.definition;
        Self {
            series_id: series.series_id.to_string(),
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
            reset: d.reset.as_str(),
            gapless: d.gapless,
            start: d.start,
            timezone: d.calendar.timezone.as_str().to_owned(),
            fiscal_year_start: d.calendar.fiscal_year_start,
            created_at: timestamp(series.created_at),
            period: None,
            last_counter: None,
            last_number: None,
        }
    }
}

impl From<SeriesStatus> for SeriesResponse {
    fn from(status: SeriesStatus) -> Self {
        Self {
            period: Some(status.period.to_string()),
            last_counter: Some(status.last_counter),
            last_number: Some(status.last_number),
            ..status.series.into()
        }
    }
}

pub(super) async fn put_series(
    State(state): State<AppState>,
    PathParams(series_id): PathParams<String>,
    JsonBody(body): JsonBody<SeriesBody>,
) -> Result<impl IntoResponse, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let reset = Reset::parse(body.reset.as_deref().unwrap_or("yearly"))?;
    let timezone = match &body.timezone {
        Some(name) => Timezone::parse(name)?,
        None => Timezone::utc(),
    };
    let calendar = Calendar::new(timezone, body.fiscal_year_start.unwrap_or(1))?;
    let definition = SeriesDefinition::new(
        body.format.as_deref().unwrap_or(DEFAULT_FORMAT),
        reset,
        body.gapless.unwrap_or(true),
        body.start.unwrap_or(1),
    )?
    .with_calendar(calendar);
    let (series, created) = state.orders.define_series(&series_id, definition).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(SeriesResponse::from(series))))
}

pub(super) async fn get_series(
    State(state): State<AppState>,
    PathParams(series_id): PathParams<String>,
) -> Result<Json<SeriesResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    Ok(Json(state.orders.series_status(&series_id).await?.into()))
}

pub(super) async fn patch_series(
    State(state): State<AppState>,
    PathParams(series_id): PathParams<String>,
    JsonBody(body): JsonBody<ChangeBody>,
) -> Result<Json<SeriesResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let next = match (body.next, &body.reason) {
        (None, None) => None,
        (Some(next), Some(reason)) => {
            if !(2..=MAX_COUNTER).contains(&next) {
                return Err(Problem::bad_request(
                    "invalid_next",
                    format!("`next` must be between 2 and {MAX_COUNTER}"),
                ));
            }
            Some((next, Reason::parse(reason)?))
        }
        (Some(_), None) => {
            return Err(Problem::bad_request(
                "invalid_reason",
                "a move of the counter needs a `reason`",
            ));
        }
        (None, Some(_)) => {
            return Err(Problem::bad_request(
                "invalid_body",
                "`reason` goes with `next`",
            ));
        }
    };
    if body.format.is_none() && next.is_none() {
        return Err(Problem::bad_request(
            "invalid_body",
            "give `format`, or `next` with `reason`",
        ));
    }
    let change = SeriesChange {
        format: body.format,
        next,
    };
    Ok(Json(
        state.orders.change_series(&series_id, change).await?.into(),
    ))
}
