//! The table's stream, read as domain facts: which item changes are purchases, voids,
//! closes, drawings, awards, instant-win awards, orders, order voids, counter moves and ranges running low.
//! Cursors, counters, leases, allowances, tickets, references and series definitions are
//! mechanics, not facts.

use std::fmt;

use super::StoreError;
use super::codec::{Item, Reader, parse_timestamp};
use super::draws::winners_of;
use super::instant::decode_award;
use super::kind;
use super::orders::{decode_move, decode_order, decode_range_low};
use super::purchases::decode_purchase;
use super::table::ItemNames;
use super::winners::decode_pick;
use tally_domain::draw::DrawStatus;
use tally_domain::events::{Award, DomainEvent};
use tally_domain::ids::DrawId;
use tally_domain::winners::PickRecord;

/// What happened to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Insert,
    Modify,
    Remove,
}

/// One change of one item, with its images before and after.
#[derive(Clone)]
pub struct ItemChange {
    pub kind: ChangeKind,
    pub old: Option<Item>,
    pub new: Option<Item>,
}

/// The images by their attribute names alone: a draw's image holds its seed.
impl fmt::Debug for ItemChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemChange")
            .field("kind", &self.kind)
            .field("old", &ItemNames(self.old.as_ref()))
            .field("new", &ItemNames(self.new.as_ref()))
            .finish()
    }
}

/// The `kind` attribute every domain item carries.
fn item_kind(item: Option<&Item>) -> Result<Option<&str>, StoreError> {
    item.map(|item| Reader::new(item).opt_str(kind::ATTRIBUTE))
        .transpose()
        .map(Option::flatten)
}

impl ItemChange {
    /// The facts this change records: none for most items.
    pub fn domain_events(&self) -> Result<Vec<DomainEvent>, StoreError> {
        let new = self.new.as_ref();
        let events = match (self.kind, item_kind(new)?, new) {
            (ChangeKind::Insert, Some(kind::PURCHASE), Some(item)) => {
                vec![DomainEvent::purchase_created(&decode_purchase(item)?)]
            }
            (ChangeKind::Modify, Some(kind::PURCHASE), Some(item)) => self.purchase_voided(item)?,
            (ChangeKind::Insert, Some(kind::ORDER), Some(item)) => {
                vec![DomainEvent::order_created(&decode_order(item)?)]
            }
            (ChangeKind::Modify, Some(kind::ORDER), Some(item)) => self.order_voided(item)?,
            (ChangeKind::Insert, Some(kind::MOVE), Some(item)) => {
                let period = Reader::new(item).str("period")?;
                vec![DomainEvent::counter_moved(period, &decode_move(item)?)]
            }
            (ChangeKind::Modify, Some(kind::DRAW), Some(item)) => {
                let mut events: Vec<DomainEvent> = self.draw_closed(item)?.into_iter().collect();
                events.extend(self.winners_drawn(item)?);
                events
            }
            (ChangeKind::Insert, Some(kind::PICK), Some(item)) => vec![prize_awarded(item)?],
            (ChangeKind::Insert, Some(kind::INSTANT_WIN), Some(item)) => {
                let (draw_id, award) = decode_award(item)?;
                DomainEvent::instant_wins_awarded(&draw_id, &award)
            }
            (ChangeKind::Insert, Some(kind::RANGE_LOW), Some(item)) => {
                vec![DomainEvent::range_running_low(&decode_range_low(item)?)]
            }
            _ => Vec::new(),
        };
        Ok(events)
    }

    /// A purchase that became void in this change.
    fn purchase_voided(&self, new: &Item) -> Result<Vec<DomainEvent>, StoreError> {
        let was_void = match &self.old {
            Some(old) => decode_purchase(old)?.void.is_some(),
            None => false,
        };
        if was_void {
            return Ok(Vec::new());
        }
        Ok(DomainEvent::purchase_voided(&decode_purchase(new)?)
            .into_iter()
            .collect())
    }

    /// An order (its number item) that became void in this change.
    fn order_voided(&self, new: &Item) -> Result<Vec<DomainEvent>, StoreError> {
        let was_void = match &self.old {
            Some(old) => decode_order(old)?.void.is_some(),
            None => false,
        };
        if was_void {
            return Ok(Vec::new());
        }
        Ok(DomainEvent::order_voided(&decode_order(new)?)
            .into_iter()
            .collect())
    }

    /// A draw whose winners were recorded in this change.
    fn winners_drawn(&self, new: &Item) -> Result<Option<DomainEvent>, StoreError> {
        let had_winners = match &self.old {
            Some(old) => winners_of(old)?.is_some(),
            None => false,
        };
        Ok(match (winners_of(new)?, had_winners) {
            (Some(record), false) => {
                let draw_id = Reader::new(new).parsed("draw_id", |v| DrawId::parse(v).ok())?;
                Some(DomainEvent::winners_drawn(&draw_id, &record))
            }
            _ => None,
        })
    }

    /// A draw whose status became `closed` in this change.
    fn draw_closed(&self, new: &Item) -> Result<Option<DomainEvent>, StoreError> {
        let status = |item: &Item| Reader::new(item).parsed("status", DrawStatus::parse);
        let was_closed = match &self.old {
            Some(old) => status(old)? == DrawStatus::Closed,
            None => false,
        };
        if was_closed || status(new)? != DrawStatus::Closed {
            return Ok(None);
        }
        let reader = Reader::new(new);
        let draw_id = reader.parsed("draw_id", |v| DrawId::parse(v).ok())?;
        let closed_at = reader.parsed("closed_at", parse_timestamp)?;
        Ok(Some(DomainEvent::draw_closed(&draw_id, closed_at)))
    }
}

/// A pick item: a prize given at the drawing or by a redraw.
fn prize_awarded(item: &Item) -> Result<DomainEvent, StoreError> {
    let draw_id = Reader::new(item).parsed("draw_id", |v| DrawId::parse(v).ok())?;
    let pick = decode_pick(item)?;
    let award = Award {
        pick: PickRecord {
            pick: pick.pick,
            prize: pick.prize,
            ticket: pick.ticket,
        },
        payment_id: pick.payment_id,
        payer_id: pick.payer_id,
        redraw_reason: pick.reason,
        at: pick.at,
    };
    Ok(DomainEvent::prize_awarded(&draw_id, &award))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;

    #[test]
    fn debug_shows_the_images_by_their_attribute_names_alone() {
        let image = |seed: &str| {
            Item::from([
                ("perm_key".to_owned(), AttributeValue::S("PERMPERM".into())),
                ("seed".to_owned(), AttributeValue::S(seed.into())),
            ])
        };
        let change = ItemChange {
            kind: ChangeKind::Modify,
            old: Some(image("SEEDSEEDSEED")),
            new: Some(image("SEEDSEEDSEED")),
        };
        assert_eq!(
            format!("{change:?}"),
            "ItemChange { kind: Modify, old: Some(<item: perm_key, seed>), \
             new: Some(<item: perm_key, seed>) }"
        );
    }
}
