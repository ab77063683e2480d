//! Domain events: the facts Tally tells integrators about, with ids that never change.
//!
//! Each fact has one event id, derived from the fact's own identity (a purchase's draw and
//! payment, an order's series and number), so a fact delivered twice carries the same id
//! and a consumer drops the duplicate. Events carry ids and numbers only: never a secret,
//! never an order's free-form data.

mod facts;
#[cfg(feature = "openapi")]
mod schema;

use jiff::Timestamp;
use sha2::{Digest, Sha256};
#[cfg(feature = "openapi")]
use utoipa::openapi::{RefOr, schema::Schema};

pub use facts::{
    CounterMoved, DrawClosed, InstantWinAwarded, OrderCreated, OrderVoided, PrizeAwarded,
    PurchaseCreated, PurchaseVoided, RangeRunningLow, WinnersDrawn,
};
#[cfg(feature = "openapi")]
pub use schema::{EventSchema, schemas};

use super::draw::WinnersRecord;
use super::hex;
use super::ids::{DrawId, PayerId, PaymentId};
use super::instant::InstantAward;
use super::order::{Move, Order};
use super::purchase::Purchase;
use super::series::RangeLow;
use super::time::rfc3339_millis as timestamp;
use super::winners::PickRecord;

/// Every event's `source`.
pub const EVENT_SOURCE: &str = "tally";

/// A stable id for one fact: the same fact always gets the same id.
fn event_id(detail_type: &str, fact: &[&str]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(detail_type);
    for part in fact {
        hasher.update([0]);
        hasher.update(part);
    }
    hex::encode(&hasher.finalize()[..16])
}

/// A pick and who holds its ticket, as the event tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Award {
    pub pick: PickRecord,
    pub payment_id: PaymentId,
    pub payer_id: Option<PayerId>,
    /// Why the prize's previous winner was replaced; `None` at the drawing.
    pub redraw_reason: Option<String>,
    pub at: Timestamp,
}

/// Declares every kind of event once: its variant of [`DomainEvent`] and its `detail`
/// type (both named for the fact, the type in `facts`), and its EventBridge
/// `detail-type`. The matches, [`DomainEvent::DETAIL_TYPES`] and the schemas all follow
/// from it: adding an event is one entry here plus its type.
macro_rules! domain_events {
    ($($fact:ident => $detail_type:literal),+ $(,)?) => {
        /// One fact, as published.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum DomainEvent {
            $($fact($fact)),+
        }

        $(impl $fact {
            /// Its EventBridge `detail-type`.
            pub const DETAIL_TYPE: &'static str = $detail_type;
        })+

        impl DomainEvent {
            /// The EventBridge `detail-type` of each kind of event.
            pub const DETAIL_TYPES: &'static [&'static str] = &[$($detail_type),+];

            pub fn detail_type(&self) -> &'static str {
                match self {
                    $(Self::$fact(_) => $fact::DETAIL_TYPE),+
                }
            }

            pub fn event_id(&self) -> &str {
                match self {
                    $(Self::$fact(e) => &e.event_id),+
                }
            }

            /// The event's `detail`, as JSON text.
            pub fn detail(&self) -> String {
                let detail = match self {
                    $(Self::$fact(e) => serde_json::to_string(e)),+
                };
                detail.expect("events serialise")
            }

            /// Each kind's `detail-type` and the JSON Schema of its `detail`, in the order
            /// of [`Self::DETAIL_TYPES`].
            #[cfg(feature = "openapi")]
            fn detail_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
                vec![$(($detail_type, <$fact as utoipa::PartialSchema>::schema())),+]
            }
        }
    };
}

domain_events! {
    PurchaseCreated => "Purchase Created",
    PurchaseVoided => "Purchase Voided",
    DrawClosed => "Draw Closed",
    WinnersDrawn => "Winners Drawn",
    PrizeAwarded => "Prize Awarded",
    OrderCreated => "Order Created",
    OrderVoided => "Order Voided",
    CounterMoved => "Counter Moved",
    RangeRunningLow => "Range Running Low",
    InstantWinAwarded => "Instant Win Awarded",
}

impl DomainEvent {
    pub fn purchase_created(purchase: &Purchase) -> Self {
        let (draw_id, payment_id) = (purchase.draw_id.as_str(), purchase.payment_id.as_str());
        Self::PurchaseCreated(PurchaseCreated {
            event_id: event_id(PurchaseCreated::DETAIL_TYPE, &[draw_id, payment_id]),
            draw_id: draw_id.to_owned(),
            payment_id: payment_id.to_owned(),
            payer_id: purchase.payer_id.as_ref().map(ToString::to_string),
            quantity: purchase.quantity,
            amount: purchase.amount.map(|a| a.minor),
            currency: purchase.amount.map(|a| a.currency.to_string()),
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
            event_id: event_id(PurchaseVoided::DETAIL_TYPE, &[draw_id, payment_id]),
            draw_id: draw_id.to_owned(),
            payment_id: payment_id.to_owned(),
            payer_id: purchase.payer_id.as_ref().map(ToString::to_string),
            quantity: purchase.quantity,
            amount: purchase.amount.map(|a| a.minor),
            currency: purchase.amount.map(|a| a.currency.to_string()),
            tickets: purchase.tickets.clone(),
            reason: void.reason.clone(),
            voided_at: timestamp(void.at),
            voided_after_freeze: void.after_freeze,
        }))
    }

    pub fn winners_drawn(draw_id: &DrawId, record: &WinnersRecord) -> Self {
        Self::WinnersDrawn(WinnersDrawn {
            event_id: event_id(WinnersDrawn::DETAIL_TYPE, &[draw_id.as_str()]),
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
            event_id: event_id(PrizeAwarded::DETAIL_TYPE, &[draw_id.as_str(), &pick]),
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
                    event_id: event_id(
                        InstantWinAwarded::DETAIL_TYPE,
                        &[draw_id.as_str(), &ticket],
                    ),
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

    pub fn draw_closed(draw_id: &DrawId, closed_at: Timestamp) -> Self {
        Self::DrawClosed(DrawClosed {
            event_id: event_id(DrawClosed::DETAIL_TYPE, &[draw_id.as_str()]),
            draw_id: draw_id.to_string(),
            closed_at: timestamp(closed_at),
        })
    }

    /// An order's identity is its series, period and counter.
    pub fn order_created(order: &Order) -> Self {
        let series = order.series.as_str();
        let counter = order.counter.to_string();
        Self::OrderCreated(OrderCreated {
            event_id: event_id(
                OrderCreated::DETAIL_TYPE,
                &[series, &order.period, &counter],
            ),
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
            event_id: event_id(OrderVoided::DETAIL_TYPE, &[series, &order.period, &counter]),
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
            event_id: event_id(CounterMoved::DETAIL_TYPE, &[series, period, &from]),
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
            event_id: event_id(RangeRunningLow::DETAIL_TYPE, &[series, &from]),
            series: series.to_owned(),
            authority_ref: low.range.authority_ref.clone(),
            from: low.range.from,
            to: low.range.to,
            percent: low.percent,
            mark: low.threshold,
            remaining: low.range.to - low.threshold,
            valid_until: low.range.valid_until.map(timestamp),
            reached_at: timestamp(low.at),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ExternalRef, SeriesId, SourceId};
    use crate::order::OrderData;

    /// A purchase of ticket 7, not void.
    pub(super) fn purchase(draw: &str, payment: &str) -> Purchase {
        Purchase {
            draw_id: DrawId::parse(draw).unwrap(),
            payment_id: PaymentId::parse(payment).unwrap(),
            quantity: 1,
            payer_id: None,
            tickets: vec![7],
            chosen: false,
            channel: Default::default(),
            amount: None,
            fingerprint: "f".into(),
            created_at: Timestamp::now(),
            void: None,
            unfinished: None,
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
            created_at: Timestamp::now(),
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
