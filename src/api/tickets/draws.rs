//! Creating, reading, changing and closing a draw.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::super::AppState;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::Problem;
use super::super::timestamp;
use super::free_text;
use crate::domain::draw::{Draw, DrawConfig, DrawStatus, MAX_BEACON_LEN, MAX_NAME_LEN};
use crate::domain::ids::DrawId;
use crate::domain::schedule::Schedule;
use crate::tickets::{DrawSummary, NewDraw};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateDrawBody {
    draw_id: Option<String>,
    name: Option<String>,
    total_tickets: u64,
    max_per_purchase: Option<u32>,
    stripes: Option<u32>,
    max_per_payer: Option<u64>,
    opens_at: Option<DateTime<Utc>>,
    closes_at: Option<DateTime<Utc>>,
    beacon: Option<String>,
}

/// What every response says of a draw, lists included.
#[derive(Serialize)]
pub(super) struct DrawFields {
    draw_id: String,
    name: Option<String>,
    total_tickets: u64,
    max_per_purchase: u32,
    max_per_payer: Option<u64>,
    stripes: u32,
    status: &'static str,
    opens_at: Option<String>,
    closes_at: Option<String>,
    beacon: Option<String>,
    /// Hex SHA-256 of the secret seed, from the first response on.
    seed_commitment: String,
    voided: u64,
    /// When the winners were drawn.
    drawn_at: Option<String>,
    created_at: String,
}

impl DrawFields {
    pub(super) fn new(draw: Draw, status: DrawStatus) -> Self {
        Self {
            draw_id: draw.draw_id.to_string(),
            name: draw.name,
            total_tickets: draw.config.total_tickets(),
            max_per_purchase: draw.config.max_per_purchase(),
            max_per_payer: draw.config.max_per_payer(),
            stripes: draw.config.stripes(),
            status: status.as_str(),
            opens_at: draw.schedule.opens_at().map(timestamp),
            closes_at: draw.schedule.closes_at().map(timestamp),
            beacon: draw.beacon,
            seed_commitment: draw.seed.commitment(),
            voided: draw.voided,
            drawn_at: draw.winners.map(|w| timestamp(w.drawn_at)),
            created_at: timestamp(draw.created_at),
        }
    }
}

/// A draw with its live counts.
#[derive(Serialize)]
pub(super) struct DrawBody {
    #[serde(flatten)]
    draw: DrawFields,
    sold: u64,
    remaining: u64,
}

impl From<DrawSummary> for DrawBody {
    fn from(summary: DrawSummary) -> Self {
        Self {
            sold: summary.sold,
            remaining: summary.remaining(),
            draw: DrawFields::new(summary.draw, summary.status),
        }
    }
}

pub(super) async fn create_draw(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<CreateDrawBody>,
) -> Result<impl IntoResponse, Problem> {
    let new = NewDraw {
        draw_id: body.draw_id.as_deref().map(DrawId::parse).transpose()?,
        name: free_text("name", body.name, MAX_NAME_LEN)?,
        config: DrawConfig::new(body.total_tickets, body.max_per_purchase, body.stripes)?
            .with_max_per_payer(body.max_per_payer)?,
        schedule: Schedule::new(body.opens_at, body.closes_at)?,
        beacon: free_text("beacon", body.beacon, MAX_BEACON_LEN)?,
    };
    let created = state.tickets.create_draw(new).await?;
    let location = format!("/draws/{}", created.summary.draw.draw_id);
    let mut headers = HeaderMap::new();
    if let Ok(value) = HeaderValue::from_str(&location) {
        headers.insert(header::LOCATION, value);
    }
    let status = if created.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, headers, Json(DrawBody::from(created.summary))))
}

pub(super) async fn get_draw(
    State(state): State<AppState>,
    PathParams(draw_id): PathParams<String>,
) -> Result<Json<DrawBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    Ok(Json(state.tickets.get_draw(&draw_id).await?.into()))
}

/// `{"beacon": "..."}` declares the beacon, `{"beacon": null}` withdraws it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PatchDrawBody {
    beacon: Value,
}

pub(super) async fn patch_draw(
    State(state): State<AppState>,
    PathParams(draw_id): PathParams<String>,
    JsonBody(body): JsonBody<PatchDrawBody>,
) -> Result<Json<DrawBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let beacon = match body.beacon {
        Value::Null => None,
        Value::String(text) => free_text("beacon", Some(text), MAX_BEACON_LEN)?,
        _ => {
            return Err(Problem::bad_request(
                "invalid_beacon",
                "`beacon` must be a string or null",
            ));
        }
    };
    Ok(Json(
        state.tickets.set_beacon(&draw_id, beacon).await?.into(),
    ))
}

pub(super) async fn close_draw(
    State(state): State<AppState>,
    PathParams(draw_id): PathParams<String>,
) -> Result<Json<DrawBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    Ok(Json(state.tickets.close_draw(&draw_id).await?.into()))
}
