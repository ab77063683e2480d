//! Ticket routes.

use axum::Extension;
use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

use super::AppState;
use super::extract::{BodyLimit, JsonBody, MAX_BODY_BYTES, PathParams};
use super::problem::Problem;
use super::timestamp;
use crate::domain::draw::{DrawConfig, MAX_NAME_LEN};
use crate::domain::ids::{DrawId, PaymentId};
use crate::domain::purchase::{MAX_FREE_TEXT_LEN, Purchase, PurchaseRequest};
use crate::tickets::{DrawSummary, NewDraw};

pub(super) fn routes() -> Router<AppState> {
    Router::new()
        .route("/draws", post(create_draw))
        .route("/draws/{draw_id}", get(get_draw))
        .route("/draws/{draw_id}/close", post(close_draw))
        .route("/draws/{draw_id}/purchases", post(purchase))
        .route("/draws/{draw_id}/purchases/{payment_id}", get(get_purchase))
        .route("/draws/{draw_id}/tickets/{number}", get(get_ticket))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(Extension(BodyLimit(MAX_BODY_BYTES)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateDrawBody {
    draw_id: Option<String>,
    name: Option<String>,
    total_tickets: u64,
    max_per_purchase: Option<u32>,
    stripes: Option<u32>,
}

#[derive(Serialize)]
struct DrawBody {
    draw_id: String,
    name: Option<String>,
    total_tickets: u64,
    max_per_purchase: u32,
    stripes: u32,
    sold: u64,
    remaining: u64,
    status: &'static str,
    created_at: String,
}

impl From<DrawSummary> for DrawBody {
    fn from(summary: DrawSummary) -> Self {
        let remaining = summary.remaining();
        let draw = summary.draw;
        Self {
            draw_id: draw.draw_id.to_string(),
            name: draw.name,
            total_tickets: draw.config.total_tickets(),
            max_per_purchase: draw.config.max_per_purchase(),
            stripes: draw.config.stripes(),
            sold: summary.sold,
            remaining,
            status: draw.status.as_str(),
            created_at: timestamp(draw.created_at),
        }
    }
}

/// Free text that is stored and echoed: bounded, and without control characters.
pub(super) fn free_text(
    field: &str,
    value: Option<String>,
    max_len: usize,
) -> Result<Option<String>, Problem> {
    match value {
        Some(v)
            if v.is_empty() || v.chars().count() > max_len || v.chars().any(char::is_control) =>
        {
            Err(Problem::bad_request(
                format!("invalid_{field}"),
                format!("`{field}` must be 1 to {max_len} characters without control characters"),
            ))
        }
        other => Ok(other),
    }
}

async fn create_draw(
    State(state): State<AppState>,
    JsonBody(body): JsonBody<CreateDrawBody>,
) -> Result<impl IntoResponse, Problem> {
    let new = NewDraw {
        draw_id: body.draw_id.as_deref().map(DrawId::parse).transpose()?,
        name: free_text("name", body.name, MAX_NAME_LEN)?,
        config: DrawConfig::new(body.total_tickets, body.max_per_purchase, body.stripes)?,
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

async fn get_draw(
    State(state): State<AppState>,
    PathParams(draw_id): PathParams<String>,
) -> Result<Json<DrawBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    Ok(Json(state.tickets.get_draw(&draw_id).await?.into()))
}

async fn close_draw(
    State(state): State<AppState>,
    PathParams(draw_id): PathParams<String>,
) -> Result<Json<DrawBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    Ok(Json(state.tickets.close_draw(&draw_id).await?.into()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PurchaseBody {
    payment_id: String,
    quantity: u32,
    payer_id: Option<String>,
    token: Option<String>,
}

#[derive(Serialize)]
struct PurchaseResponse {
    draw_id: String,
    payment_id: String,
    quantity: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    payer_id: Option<String>,
    tickets: Vec<u64>,
    created_at: String,
}

impl From<Purchase> for PurchaseResponse {
    fn from(purchase: Purchase) -> Self {
        Self {
            draw_id: purchase.draw_id.to_string(),
            payment_id: purchase.payment_id.to_string(),
            quantity: purchase.quantity,
            payer_id: purchase.payer_id,
            tickets: purchase.tickets,
            created_at: timestamp(purchase.created_at),
        }
    }
}

async fn purchase(
    State(state): State<AppState>,
    PathParams(draw_id): PathParams<String>,
    JsonBody(body): JsonBody<PurchaseBody>,
) -> Result<impl IntoResponse, Problem> {
    let request = PurchaseRequest {
        draw_id: DrawId::parse(&draw_id)?,
        payment_id: PaymentId::parse(&body.payment_id)?,
        quantity: body.quantity,
        payer_id: free_text("payer_id", body.payer_id, MAX_FREE_TEXT_LEN)?,
        token: free_text("token", body.token, MAX_FREE_TEXT_LEN)?,
    };
    let receipt = state.tickets.purchase(request).await?;
    let status = if receipt.replayed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((status, Json(PurchaseResponse::from(receipt.purchase))))
}

async fn get_purchase(
    State(state): State<AppState>,
    PathParams((draw_id, payment_id)): PathParams<(String, String)>,
) -> Result<Json<PurchaseResponse>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let payment_id = PaymentId::parse(&payment_id)?;
    let purchase = state.tickets.get_purchase(&draw_id, &payment_id).await?;
    Ok(Json(purchase.into()))
}

#[derive(Serialize)]
struct TicketBody {
    draw_id: String,
    number: u64,
    payment_id: String,
    payer_id: Option<String>,
}

async fn get_ticket(
    State(state): State<AppState>,
    PathParams((draw_id, number)): PathParams<(String, String)>,
) -> Result<Json<TicketBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let number: u64 = number.parse().map_err(|_| {
        Problem::bad_request(
            "invalid_ticket_number",
            "the ticket number must be a positive integer",
        )
    })?;
    let ticket = state.tickets.get_ticket(&draw_id, number).await?;
    Ok(Json(TicketBody {
        draw_id: ticket.draw_id.to_string(),
        number: ticket.number,
        payment_id: ticket.payment_id.to_string(),
        payer_id: ticket.payer_id,
    }))
}
