//! Domain events: the facts Tally tells integrators about, with ids that never change.
//!
//! Each fact has one event id, derived from the fact's own identity (a purchase's draw and
//! payment, an order's series and number), so a fact delivered twice carries the same id
//! and a consumer drops the duplicate. Events carry ids and numbers only: never a secret,
//! never an order's free-form data.

mod facts;
mod schema;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

pub use facts::{
    CounterMoved, DrawClosed, InstantWinAwarded, OrderCreated, OrderVoided, PrizeAwarded,
    PurchaseCreated, PurchaseVoided, RangeRunningLow, WinnersDrawn,
};
pub use schema::{EventSchema, schemas};

use super::draw::WinnersRecord;
use super::ids::{DrawId, PayerId, PaymentId};
use super::instant::InstantAward;
use super::order::{Move, Order};
use super::purchase::{Purchase, hex};
use super::series::RangeLow;
use super::winners::PickRecord;

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

/// A pick and who holds its ticket, as the event tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Award {
    pub pick: PickRecord,
    pub payment_id: PaymentId,
    pub payer_id: Option<PayerId>,
    /// Why the prize's previous winner was replaced; `None` at the drawing.
    pub redraw_reason: Option<String>,
    pub at: DateTime<Utc>,
}

/// One fact, as published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomainEvent {
    PurchaseCreated(PurchaseCreated),
    PurchaseVoided(PurchaseVoided),
    DrawClosed(DrawClosed),
    WinnersDrawn(WinnersDrawn),
    PrizeAwarded(PrizeAwarded),
    OrderCreated(OrderCreated),
    OrderVoided(OrderVoided),
    CounterMoved(CounterMoved),
    RangeRunningLow(RangeRunningLow),
    InstantWinAwarded(InstantWinAwarded),
}

impl DomainEvent {
    /// The EventBridge `detail-type` of each kind of event.
    pub const DETAIL_TYPES: [&'static str; 10] = [
        "Purchase Created",
        "Purchase Voided",
        "Draw Closed",
        "Winners Drawn",
        "Prize Awarded",
        "Order Created",
        "Order Voided",
        "Counter Moved",
        "Range Running Low",
        "Instant Win Awarded",
    ];

    pub fn purchase_created(purchase: &Purchase) -> Self {
        let (draw_id, payment_id) = (purchase.draw_id.as_str(), purchase.payment_id.as_str());
        Self::PurchaseCreated(PurchaseCreated {
            event_id: event_id("Purchase Created", &[draw_id, payment_id]),
            draw_id: draw_id.to_owned(),
            payment_id: payment_id.to_owned(),
            payer_id: purchase.payer_id.as_ref().map(ToString::to_string),
            quantity: purchase.quantity,
            tickets: purchase.tickets.clone(),
            chosen: purchase.chosen,
            channel: purchase.channel.as_str().to_owned(),
            created_at: timestamp(purchase.created_at),
        })
    }

    /// `None` unless the purchase is void.
    pub fn purchase_voided(purchase: &Purchase) -> Option<Self> {
        let void = purchase.void.as_ref()?;
        let (draw_id, payment_id) = (purchase.draw_id.as_str(), purchase.payment_id.as_str());
        Some(Self::PurchaseVoided(PurchaseVoided {
            event_id: event_id("Purchase Voided", &[draw_id, payment_id]),
            draw_id: draw_id.to_owned(),
            payment_id: payment_id.to_owned(),
            payer_id: purchase.payer_id.as_ref().map(ToString::to_string),
            quantity: purchase.quantity,
            tickets: purchase.tickets.clone(),
            reason: void.reason.clone(),
            voided_at: timestamp(void.at),
        }))
    }

    pub fn winners_drawn(draw_id: &DrawId, record: &WinnersRecord) -> Self {
        Self::WinnersDrawn(WinnersDrawn {
            event_id: event_id("Winners Drawn", &[draw_id.as_str()]),
            draw_id: draw_id.to_string(),
            prizes: record.prizes,
            eligible_count: record.eligible_count,
            eligible_digest: record.eligible_digest.clone(),
            beacon_round: record.beacon.as_ref().map(|b| b.round),
            drawn_at: timestamp(record.drawn_at),
        })
    }

    /// One pick of a draw: the first picks go to the prizes, each later one is a redraw.
    pub fn prize_awarded(draw_id: &DrawId, award: &Award) -> Self {
        let pick = award.pick.pick.to_string();
        Self::PrizeAwarded(PrizeAwarded {
            event_id: event_id("Prize Awarded", &[draw_id.as_str(), &pick]),
            draw_id: draw_id.to_string(),
            prize: award.pick.prize,
            pick: award.pick.pick,
            ticket: award.pick.ticket,
            payment_id: award.payment_id.to_string(),
            payer_id: award.payer_id.as_ref().map(ToString::to_string),
            redraw_reason: award.redraw_reason.clone(),
            awarded_at: timestamp(award.at),
        })
    }

    /// One event per prize of an award: a number is won at most once, so the draw and
    /// the ticket name the fact.
    pub fn instant_wins_awarded(draw_id: &DrawId, award: &InstantAward) -> Vec<Self> {
        award
            .wins
            .iter()
            .map(|win| {
                let ticket = win.ticket.to_string();
                Self::InstantWinAwarded(InstantWinAwarded {
                    event_id: event_id("Instant Win Awarded", &[draw_id.as_str(), &ticket]),
                    draw_id: draw_id.to_string(),
                    ticket: win.ticket,
                    prize: win.prize.clone(),
                    payment_id: award.payment_id.to_string(),
                    payer_id: award.payer_id.as_ref().map(ToString::to_string),
                    awarded_at: timestamp(award.awarded_at),
                })
            })
            .collect()
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

    /// `None` unless the order is void.
    pub fn order_voided(order: &Order) -> Option<Self> {
        let void = order.void.as_ref()?;
        let series = order.series.as_str();
        let counter = order.counter.to_string();
        Some(Self::OrderVoided(OrderVoided {
            event_id: event_id("Order Voided", &[series, &order.period, &counter]),
            series: series.to_owned(),
            order_number: order.order_number.clone(),
            period: order.period.clone(),
            counter: order.counter,
            source: order.source.to_string(),
            external_ref: order.external_ref.to_string(),
            reason: void.reason.as_str().to_owned(),
            voided_at: timestamp(void.at),
        }))
    }

    /// A move's identity is its series, period and first skipped number.
    pub fn counter_moved(period: &str, moved: &Move) -> Self {
        let series = moved.series.as_str();
        let from = moved.from.to_string();
        Self::CounterMoved(CounterMoved {
            event_id: event_id("Counter Moved", &[series, period, &from]),
            series: series.to_owned(),
            period: period.to_owned(),
            from: moved.from,
            to: moved.to,
            reason: moved.reason.as_str().to_owned(),
            moved_at: timestamp(moved.at),
        })
    }

    /// A range's identity is its series and first counter.
    pub fn range_running_low(low: &RangeLow) -> Self {
        let series = low.series.as_str();
        let from = low.range.from.to_string();
        Self::RangeRunningLow(RangeRunningLow {
            event_id: event_id("Range Running Low", &[series, &from]),
            series: series.to_owned(),
            authority_ref: low.range.authority_ref.clone(),
            from: low.range.from,
            to: low.range.to,
            percent: low.percent,
            mark: low.mark,
            remaining: low.range.to - low.mark,
            valid_until: low.range.valid_until.map(timestamp),
            reached_at: timestamp(low.at),
        })
    }

    pub fn detail_type(&self) -> &'static str {
        match self {
            Self::PurchaseCreated(_) => Self::DETAIL_TYPES[0],
            Self::PurchaseVoided(_) => Self::DETAIL_TYPES[1],
            Self::DrawClosed(_) => Self::DETAIL_TYPES[2],
            Self::WinnersDrawn(_) => Self::DETAIL_TYPES[3],
            Self::PrizeAwarded(_) => Self::DETAIL_TYPES[4],
            Self::OrderCreated(_) => Self::DETAIL_TYPES[5],
            Self::OrderVoided(_) => Self::DETAIL_TYPES[6],
            Self::CounterMoved(_) => Self::DETAIL_TYPES[7],
            Self::RangeRunningLow(_) => Self::DETAIL_TYPES[8],
            Self::InstantWinAwarded(_) => Self::DETAIL_TYPES[9],
        }
    }

    pub fn event_id(&self) -> &str {
        match self {
            Self::PurchaseCreated(e) => &e.event_id,
            Self::PurchaseVoided(e) => &e.event_id,
            Self::DrawClosed(e) => &e.event_id,
            Self::WinnersDrawn(e) => &e.event_id,
            Self::PrizeAwarded(e) => &e.event_id,
            Self::OrderCreated(e) => &e.event_id,
            Self::OrderVoided(e) => &e.event_id,
            Self::CounterMoved(e) => &e.event_id,
            Self::RangeRunningLow(e) => &e.event_id,
            Self::InstantWinAwarded(e) => &e.event_id,
        }
    }

    /// The event's `detail`, as JSON text.
    pub fn detail(&self) -> String {
        let detail = match self {
            Self::PurchaseCreated(e) => serde_json::to_string(e),
            Self::PurchaseVoided(e) => serde_json::to_string(e),
            Self::DrawClosed(e) => serde_json::to_string(e),
            Self::WinnersDrawn(e) => serde_json::to_string(e),
            Self::PrizeAwarded(e) => serde_json::to_string(e),
            Self::OrderCreated(e) => serde_json::to_string(e),
            Self::OrderVoided(e) => serde_json::to_string(e),
            Self::CounterMoved(e) => serde_json::to_string(e),
            Self::RangeRunningLow(e) => serde_json::to_string(e),
            Self::InstantWinAwarded(e) => serde_json::to_string(e),
        };
        detail.expect("events serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{ExternalRef, SeriesId, SourceId};
    use crate::domain::order::OrderData;

    fn purchase(draw: &str, payment: &str) -> Purchase {
        Purchase {
            draw_id: DrawId::parse(draw).unwrap(),
            payment_id: PaymentId::parse(payment).unwrap(),
            quantity: 1,
            payer_id: None,
            tickets: vec![7],
            chosen: false,
            channel: Default::default(),
            fingerprint: "f".into(),
            created_at: Utc::now(),
            void: None,
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
            hash: None,
            void: None,
            corrects: None,
            credit_notes: Vec::new(),
        };
        assert_eq!(DomainEvent::order_voided(&order), None);
        let event = DomainEvent::order_created(&order);
        let detail: serde_json::Value = serde_json::from_str(&event.detail()).unwrap();
        assert_eq!(detail["event_id"], event.event_id());
        assert_eq!(detail["order_number"], "S26000001");
        assert_eq!(detail["counter"], 1);
        assert!(!event.detail().contains("Ann"));
        assert_eq!(event.detail_type(), "Order Created");
    }
}
