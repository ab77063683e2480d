//! Buying tickets, reading a purchase or a ticket, voiding a purchase.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};

use super::super::AppState;
use super::super::extract::{JsonBody, PathParams};
use super::super::problem::Problem;
use super::super::timestamp;
use super::{free_text, required_text};
use crate::domain::ids::{DrawId, PayerId, PaymentId};
use crate::domain::purchase::{MAX_FREE_TEXT_LEN, MAX_REASON_LEN, Purchase, PurchaseRequest};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PurchaseBody {
    payment_id: String,
    quantity: u32,
    payer_id: Option<String>,
    token: Option<String>,
}

/// `active`, or `void` with the reason and time.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum PurchaseStatus {
    Active,
    Void,
}

#[derive(Serialize)]
pub(super) struct PurchaseResponse {
    draw_id: String,
    payment_id: String,
    quantity: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    payer_id: Option<String>,
    tickets: Vec<u64>,
    status: PurchaseStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    void_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    voided_at: Option<String>,
    created_at: String,
}

impl From<Purchase> for PurchaseResponse {
    fn from(purchase: Purchase) -> Self {
        Self {
            draw_id: purchase.draw_id.to_string(),
            payment_id: purchase.payment_id.to_string(),
            quantity: purchase.quantity,
            payer_id: purchase.payer_id.map(|p| p.to_string()),
            tickets: purchase.tickets,
            status: if purchase.void.is_some() {
                PurchaseStatus::Void
            } else {
                PurchaseStatus::Active
            },
            void_reason: purchase.void.as_ref().map(|v| v.reason.clone()),
            voided_at: purchase.void.map(|v| timestamp(v.at)),
            created_at: timestamp(purchase.created_at),
        }
    }
}

pub(super) async fn purchase(
    State(state): State<AppState>,
    PathParams(draw_id): PathParams<String>,
    JsonBody(body): JsonBody<PurchaseBody>,
) -> Result<impl IntoResponse, Problem> {
    let request = PurchaseRequest {
        draw_id: DrawId::parse(&draw_id)?,
        payment_id: PaymentId::parse(&body.payment_id)?,
        quantity: body.quantity,
        payer_id: body.payer_id.as_deref().map(PayerId::parse).transpose()?,
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

pub(super) async fn get_purchase(
    State(state): State<AppState>,
    PathParams((draw_id, payment_id)): PathParams<(String, String)>,
) -> Result<Json<PurchaseResponse>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let payment_id = PaymentId::parse(&payment_id)?;
    let purchase = state.tickets.get_purchase(&draw_id, &payment_id).await?;
    Ok(Json(purchase.into()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VoidBody {
    reason: Option<String>,
}

pub(super) async fn void_purchase(
    State(state): State<AppState>,
    PathParams((draw_id, payment_id)): PathParams<(String, String)>,
    JsonBody(body): JsonBody<VoidBody>,
) -> Result<impl IntoResponse, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let payment_id = PaymentId::parse(&payment_id)?;
    let reason = required_text("reason", body.reason, MAX_REASON_LEN)?;
    let purchase = state
        .tickets
        .void_purchase(&draw_id, &payment_id, &reason)
        .await?;
    Ok(Json(PurchaseResponse::from(purchase)))
}

#[derive(Serialize)]
pub(super) struct TicketBody {
    draw_id: String,
    number: u64,
    payment_id: String,
    payer_id: Option<String>,
    status: PurchaseStatus,
}

pub(super) async fn get_ticket(
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
        payer_id: ticket.payer_id.map(|p| p.to_string()),
        status: if ticket.voided {
            PurchaseStatus::Void
        } else {
            PurchaseStatus::Active
        },
    }))
}
