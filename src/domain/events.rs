//! Domain events: the facts Tally tells integrators about, with ids that never change.
//!
//! Each fact has one event id, derived from the fact's own identity (a purchase's draw and
//! payment, an order's series and number), so a fact delivered twice carries the same id
//! and a consumer drops the duplicate. Events carry ids and numbers only: never a secret,
//! never an order's free-form data.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::ids::DrawId;
use super::order::Order;
use super::purchase::{Purchase, hex};

/// Every event's `source`.
pub const EVENT_SOURCE: &str = "tally";

/// Times are written as RFC 3339 in UTC with milliseconds, as everywhere in Tally.
fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A stable id for one fact: the same fact always gets the same id.
fn event_id(detail_type: &str, fact: &[&str]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(detail_type);
    for part in fact {
        hasher.update([0]);
        hasher.update(part);
    }
    hex(&hasher.finalize()[..16])
}

/// Tickets were sold to one payment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PurchaseCreated {
    pub event_id: String,
    pub draw_id: String,
    pub payment_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payer_id: Option<String>,
    pub quantity: u32,
    pub tickets: Vec<u64>,
    pub created_at: String,
}

/// A draw stopped selling: every stripe is closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DrawClosed {
    pub event_id: String,
    pub draw_id: String,
    pub closed_at: String,
}

/// An order got its number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrderCreated {
    pub event_id: String,
    pub series: String,
    pub order_number: String,
    pub period: String,
    pub counter: u64,
    pub source: String,
    pub external_ref: String,
    pub created_at: String,
}

/// One fact, as published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainEvent {
    PurchaseCreated(PurchaseCreated),
    DrawClosed(DrawClosed),
    OrderCreated(OrderCreated),
}

impl DomainEvent {
    /// The EventBridge `detail-type` of each kind of event.
    pub const DETAIL_TYPES: [&'static str; 3] =
        ["Purchase Created", "Draw Closed", "Order Created"];

    pub fn purchase_created(purchase: &Purchase) -> Self {
        let (draw_id, payment_id) = (purchase.draw_id.as_str(), purchase.payment_id.as_str());
        Self::PurchaseCreated(PurchaseCreated {
            event_id: event_id("Purchase Created", &[draw_id, payment_id]),
            draw_id: draw_id.to_owned(),
            payment_id: payment_id.to_owned(),
            payer_id: purchase.payer_id.clone(),
            quantity: purchase.quantity,
            tickets: purchase.tickets.clone(),
            created_at: timestamp(purchase.created_at),
        })
    }

    pub fn draw_closed(draw_id: &DrawId, closed_at: DateTime<Utc>) -> Self {
        Self::DrawClosed(DrawClosed {
            event_id: event_id("Draw Closed", &[draw_id.as_str()]),
            draw_id: draw_id.to_string(),
            closed_at: timestamp(closed_at),
        })
    }

    /// An order's identity is its series, period and counter.
    pub fn order_created(order: &Order) -> Self {
        let series = order.series.as_str();
        let counter = order.counter.to_string();
        Self::OrderCreated(OrderCreated {
            event_id: event_id("Order Created", &[series, &order.period, &counter]),
            series: series.to_owned(),
            order_number: order.order_number.clone(),
            period: order.period.clone(),
            counter: order.counter,
            source: order.source.to_string(),
            external_ref: order.external_ref.to_string(),
            created_at: timestamp(order.created_at),
        })
    }

    pub fn detail_type(&self) -> &'static str {
        match self {
            Self::PurchaseCreated(_) => Self::DETAIL_TYPES[0],
            Self::DrawClosed(_) => Self::DETAIL_TYPES[1],
            Self::OrderCreated(_) => Self::DETAIL_TYPES[2],
        }
    }

    pub fn event_id(&self) -> &str {
        match self {
            Self::PurchaseCreated(e) => &e.event_id,
            Self::DrawClosed(e) => &e.event_id,
            Self::OrderCreated(e) => &e.event_id,
        }
    }

    /// The event's `detail`, as JSON text.
    pub fn detail(&self) -> String {
        let detail = match self {
            Self::PurchaseCreated(e) => serde_json::to_string(e),
            Self::DrawClosed(e) => serde_json::to_string(e),
            Self::OrderCreated(e) => serde_json::to_string(e),
        };
        detail.expect("events serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{ExternalRef, PaymentId, SeriesId, SourceId};
    use crate::domain::order::OrderData;

    fn purchase(draw: &str, payment: &str) -> Purchase {
        Purchase {
            draw_id: DrawId::parse(draw).unwrap(),
            payment_id: PaymentId::parse(payment).unwrap(),
            quantity: 1,
            payer_id: None,
            tickets: vec![7],
            fingerprint: "f".into(),
            created_at: Utc::now(),
        }
    }

    #[test]
    fn the_same_fact_always_has_the_same_id_and_different_facts_differ() {
        let id = |draw, payment| DomainEvent::purchase_created(&purchase(draw, payment));
        assert_eq!(id("d", "p").event_id(), id("d", "p").event_id());
        assert_ne!(id("d", "p").event_id(), id("d", "q").event_id());
        // The parts of a fact are separated: ("ab", "c") is not ("a", "bc").
        assert_ne!(id("ab", "c").event_id(), id("a", "bc").event_id());
        assert_eq!(id("d", "p").event_id().len(), 32);
    }

    #[test]
    fn an_order_event_names_its_id_and_numbers_and_not_its_data() {
        let order = Order {
            order_number: "S26000001".into(),
            series: SeriesId::parse("S").unwrap(),
            source: SourceId::parse("erp").unwrap(),
            external_ref: ExternalRef::parse("PO-1").unwrap(),
            data: OrderData::parse(Some(r#"{"customer": "Ann"}"#)).unwrap(),
            fingerprint: "f".into(),
            period: "2026".into(),
            counter: 1,
            created_at: Utc::now(),
        };
        let event = DomainEvent::order_created(&order);
        let detail: serde_json::Value = serde_json::from_str(&event.detail()).unwrap();
        assert_eq!(detail["event_id"], event.event_id());
        assert_eq!(detail["order_number"], "S26000001");
        assert_eq!(detail["counter"], 1);
        assert!(!event.detail().contains("Ann"));
        assert_eq!(event.detail_type(), "Order Created");
    }
}
