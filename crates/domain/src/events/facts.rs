//! The `detail` of each kind of event, as consumers receive it. The doc comments are the
//! descriptions of the published JSON Schemas (`docs/events/*.schema.json`).

use serde::Serialize;

/// Tickets were sold to one payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PurchaseCreated {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The draw the tickets belong to.
    pub draw_id: String,
    /// The purchase's idempotency key.
    pub payment_id: String,
    /// Who paid, when the purchase named a payer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub payer_id: Option<String>,
    /// How many tickets were sold.
    pub quantity: u32,
    /// What the buyer was charged, in minor units of `currency` (0 for a free entry);
    /// absent in a draw without a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub amount: Option<u64>,
    /// The draw's ISO 4217 currency, with `amount`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub currency: Option<String>,
    /// The ticket numbers, in the order they were sold (ascending when chosen).
    pub tickets: Vec<u64>,
    /// `true` when the buyer chose the numbers, `false` for a lucky dip.
    pub chosen: bool,
    /// `online`, or `postal` for a free entry by post.
    pub channel: String,
    /// When the purchase committed (RFC 3339, UTC, milliseconds).
    pub created_at: String,
}

/// A purchase and its tickets were voided (a refund, a chargeback): the tickets are never
/// sold again. Voided before the draw's freeze they leave the eligible list and cannot win;
/// after it they stay in the frozen list and may still be drawn, as flagged winners.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PurchaseVoided {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The draw the tickets belong to.
    pub draw_id: String,
    /// The voided purchase's idempotency key.
    pub payment_id: String,
    /// Who paid, when the purchase named a payer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub payer_id: Option<String>,
    /// How many tickets were voided.
    pub quantity: u32,
    /// What the buyer was charged, in minor units of `currency` (0 for a free entry);
    /// absent in a draw without a price.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub amount: Option<u64>,
    /// The draw's ISO 4217 currency, with `amount`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub currency: Option<String>,
    /// The voided ticket numbers.
    pub tickets: Vec<u64>,
    /// Why the purchase was voided, as the operator gave it.
    pub reason: String,
    /// When the void committed (RFC 3339, UTC, milliseconds).
    pub voided_at: String,
    /// `true` when the void came after the draw's freeze (its tickets stay in the frozen
    /// eligible list), `false` before it; absent for a void stored without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub voided_after_freeze: Option<bool>,
}

/// A draw's winners were drawn: the public summary of the drawing. Each prize's winner
/// is its own `Prize Awarded` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WinnersDrawn {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The drawn draw.
    pub draw_id: String,
    /// How many prizes were drawn.
    pub prizes: u32,
    /// How many tickets could win: sold and not voided when the list was frozen at the
    /// close.
    pub eligible_count: u64,
    /// Hex SHA-256 of the eligible list, as `GET /draws/{draw_id}/eligible` serves it.
    pub eligible_digest: String,
    /// The round of the draw's drand network that the drawing hashed, when the draw
    /// declared a beacon.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub beacon_round: Option<u64>,
    /// When the winners were drawn (RFC 3339, UTC, milliseconds).
    pub drawn_at: String,
}

/// A prize went to a ticket: at the drawing, or by a redraw (with its reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PrizeAwarded {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The drawn draw.
    pub draw_id: String,
    /// The prize, from 1.
    pub prize: u32,
    /// The pick of the drawing procedure that chose the ticket: the first picks go to
    /// the prizes in order, each later one is a redraw.
    pub pick: u64,
    /// The winning ticket number.
    pub ticket: u64,
    /// The purchase that holds the ticket.
    pub payment_id: String,
    /// Who paid for the ticket, when the purchase named a payer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub payer_id: Option<String>,
    /// Why the prize's previous winner was replaced; absent at the drawing.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub redraw_reason: Option<String>,
    /// When the prize was awarded (RFC 3339, UTC, milliseconds).
    pub awarded_at: String,
}

/// A purchase bought a number that wins an instant prize: published once its purchase
/// committed, never before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InstantWinAwarded {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The draw the ticket belongs to.
    pub draw_id: String,
    /// The winning ticket number.
    pub ticket: u64,
    /// The prize, as the draw was created with it.
    pub prize: String,
    /// The purchase that bought the ticket.
    pub payment_id: String,
    /// Who paid, when the purchase named a payer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub payer_id: Option<String>,
    /// When the purchase committed (RFC 3339, UTC, milliseconds).
    pub awarded_at: String,
}

/// A draw stopped selling: every stripe is closed, no purchase can commit any more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DrawClosed {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The closed draw.
    pub draw_id: String,
    /// When the close finished (RFC 3339, UTC, milliseconds).
    pub closed_at: String,
}

/// An order got its number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OrderCreated {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The series that numbered the order.
    pub series: String,
    /// The order's number as text, such as `UABC26000042`.
    pub order_number: String,
    /// The period of the series the number belongs to (`all`, `2026`, `2026-11`,
    /// `2026-11-29` or `FY2027`).
    pub period: String,
    /// The number's counter within the period.
    pub counter: u64,
    /// The system that posted the order.
    pub source: String,
    /// The source's own reference of the order.
    pub external_ref: String,
    /// When the order was numbered (RFC 3339, UTC, milliseconds).
    pub created_at: String,
}

/// An order kept its number and became void.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OrderVoided {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The series that numbered the order.
    pub series: String,
    /// The order's number as text.
    pub order_number: String,
    /// The period of the series the number belongs to.
    pub period: String,
    /// The number's counter within the period.
    pub counter: u64,
    /// The system that posted the order.
    pub source: String,
    /// The source's own reference of the order.
    pub external_ref: String,
    /// Why the order was voided, as the operator gave it.
    pub reason: String,
    /// When the void committed (RFC 3339, UTC, milliseconds).
    pub voided_at: String,
}

/// A series' counter was moved forward: the numbers `from` to `to` of the period are a
/// declared gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CounterMoved {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The series whose counter moved.
    pub series: String,
    /// The period whose counter moved.
    pub period: String,
    /// The first skipped counter.
    pub from: u64,
    /// The last skipped counter: the next order gets `to + 1`.
    pub to: u64,
    /// Why the counter moved, as the operator gave it.
    pub reason: String,
    /// When the move committed (RFC 3339, UTC, milliseconds).
    pub moved_at: String,
}

/// An authorised range of a series passed its low mark (90% used unless the series says
/// otherwise): time to ask the tax authority for the next one. Fires once per range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RangeRunningLow {
    /// The fact's id (32 hex digits): a delivery of the same fact carries the same id.
    pub event_id: String,
    /// The series whose range runs low.
    pub series: String,
    /// The authority's reference of the range (a CAF file, a resolution number).
    pub authority_ref: String,
    /// The range's first counter.
    pub from: u64,
    /// The range's last counter.
    pub to: u64,
    /// The share of the range used when the event fired, in percent.
    pub percent: u8,
    /// The counter that reached that share.
    pub mark: u64,
    /// Counters of the range left after `mark`.
    pub remaining: u64,
    /// When the range expires (RFC 3339, UTC, milliseconds), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub valid_until: Option<String>,
    /// When the mark was passed (RFC 3339, UTC, milliseconds).
    pub reached_at: String,
}
