//! The table's stream, read as domain facts: which item changes are purchases, closes and
//! orders. Cursors, counters, claims, tickets and references are mechanics, not facts.

use super::StoreError;
use super::codec::{Item, Reader, parse_timestamp};
use super::orders::decode_order;
use super::purchases::decode_purchase;
use crate::domain::draw::DrawStatus;
use crate::domain::events::DomainEvent;
use crate::domain::ids::DrawId;

/// What happened to an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Insert,
    Modify,
    Remove,
}

/// One change of one item, with its images before and after.
#[derive(Debug, Clone)]
pub struct ItemChange {
    pub kind: ChangeKind,
    pub old: Option<Item>,
    pub new: Option<Item>,
}

/// The `kind` attribute every domain item carries.
fn item_kind(item: Option<&Item>) -> Result<Option<&str>, StoreError> {
    item.map(|item| Reader::new(item).opt_str("kind"))
        .transpose()
        .map(Option::flatten)
}

impl ItemChange {
    /// The facts this change records: none for most items.
    pub fn domain_events(&self) -> Result<Vec<DomainEvent>, StoreError> {
        let new = self.new.as_ref();
        let event = match (self.kind, item_kind(new)?, new) {
            (ChangeKind::Insert, Some("purchase"), Some(item)) => {
                Some(DomainEvent::purchase_created(&decode_purchase(item)?))
            }
            (ChangeKind::Insert, Some("order"), Some(item)) => {
                Some(DomainEvent::order_created(&decode_order(item)?))
            }
            (ChangeKind::Modify, Some("draw"), Some(item)) => self.draw_closed(item)?,
            _ => None,
        };
        Ok(event.into_iter().collect())
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
