//! What a purchase's answer says: the purchase, its numbers and the instant prizes it won.

use axum::Json;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

use super::super::super::timestamp;
use super::super::instant::InstantWinBody;
use crate::tickets::PurchaseReceipt;
use tally_domain::purchase::{Channel, Purchase, PurchaseStatus};

/// A purchase and its ticket numbers.
#[derive(Serialize, ToSchema)]
pub(in crate::api::tickets) struct PurchaseResponse {
    draw_id: String,
    payment_id: String,
    quantity: u32,
    #[schema(required = true)]
    payer_id: Option<String>,
    /// The numbers, in the order they were sold (ascending when chosen).
    tickets: Vec<u64>,
    /// `true` when the buyer chose the numbers, `false` for a lucky dip.
    chosen: bool,
    channel: Channel,
    /// What the buyer was charged, in minor units of `currency`; `null` in a draw without
    /// a price.
    #[schema(required = true)]
    amount: Option<u64>,
    /// The draw's ISO 4217 currency; `null` in a draw without a price.
    #[schema(required = true, pattern = "^[A-Z]{3}$")]
    currency: Option<String>,
    status: PurchaseStatus,
    #[schema(required = true)]
    void_reason: Option<String>,
    #[schema(required = true, format = DateTime)]
    voided_at: Option<String>,
    /// Whether the void came after the draw's freeze, as the void's own write found the
    /// draw: `false`, its tickets left the eligible list and cannot win; `true`, they stay
    /// in the frozen list and may still be drawn, flagged `voided` among the winners for
    /// the operator to redraw. `null` while the purchase stands, and for a void recorded
    /// without it.
    #[schema(required = true)]
    voided_after_freeze: Option<bool>,
    #[schema(format = DateTime)]
    created_at: String,
}

/// A purchase as its buyer's request answers it: with the instant prizes it won.
#[derive(Serialize, ToSchema)]
pub(super) struct PurchaseAnswer {
    #[serde(flatten)]
    purchase: PurchaseResponse,
    /// Each ticket of this purchase that wins an instant prize, present when one does;
    /// a replay answers the same.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(nullable = false)]
    instant_wins: Vec<InstantWinBody>,
}

impl From<Purchase> for PurchaseResponse {
    fn from(purchase: Purchase) -> Self {
        let status = purchase.status();
        Self {
            draw_id: purchase.draw_id.to_string(),
            payment_id: purchase.payment_id.to_string(),
            quantity: purchase.quantity,
            payer_id: purchase.payer_id.map(|p| p.to_string()),
            tickets: purchase.tickets,
            chosen: purchase.chosen,
            channel: purchase.channel,
            amount: purchase.amount.map(|a| a.minor),
            currency: purchase.amount.map(|a| a.currency.to_string()),
            status,
            void_reason: purchase.void.as_ref().map(|v| v.reason.clone()),
            voided_at: purchase.void.as_ref().map(|v| timestamp(v.at)),
            voided_after_freeze: purchase.void.and_then(|v| v.after_freeze),
            created_at: timestamp(purchase.created_at),
        }
    }
}

/// `201` with a new purchase, `200` with a replay.
pub(super) fn answer(receipt: PurchaseReceipt) -> (StatusCode, Json<PurchaseAnswer>) {
    let status = if receipt.replayed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    (
        status,
        Json(PurchaseAnswer {
            instant_wins: InstantWinBody::list(&receipt.instant_wins),
            purchase: PurchaseResponse::from(receipt.purchase),
        }),
    )
}
