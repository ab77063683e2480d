//! Stripe cursor items: what the table holds of a stripe (the two cursors, the offsets
//! buyers chose ahead of them, the hold marks and their count, the close flag). The
//! conditional updates a purchase or hold sends are built in `update.rs` and written in
//! `writes.rs`: a lucky dip's, and one of numbers a buyer named.

mod update;
mod writes;

use super::StoreError;
use super::codec::{Item, Reader};
use tally_domain::availability::StripeMarks;
use tally_domain::stripes::{Chosen, Held, StripeCursors};

/// Tickets sold upwards from the stripe's start.
pub(crate) const BOTTOM: &str = "c";
/// Tickets sold downwards from the stripe's end.
pub(crate) const TOP: &str = "t";
pub(crate) const CLOSED: &str = "closed";
/// Postal entries of the purchases that wrote this stripe first.
const POSTAL: &str = "postal";
/// A chosen offset ahead of both cursors is an attribute of its own, `x<offset>`, so that
/// a purchase can condition on single offsets and add or drop them without touching
/// the others.
const CHOSEN_PREFIX: char = 'x';
/// A held offset is an attribute `h<offset>` holding the end of its hold (Unix ms), which
/// conditions compare with the writer's clock.
const HELD_PREFIX: char = 'h';
/// How many hold marks (`h<offset>`) the stripe item carries, live or ended: every write
/// that adds or removes one moves it, and a hold's write is conditioned on it staying
/// within the stripe's cap.
const HOLD_MARKS: &str = "hn";

/// What a write of offsets a buyer named does to each of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChosenWrite {
    /// Sell them (chosen numbers bought directly).
    Sell,
    /// Hold them until `end` (Unix ms).
    Hold { end: i64 },
    /// Sell them to the hold that holds them until `end`.
    Convert { end: i64 },
    /// Give back the hold that holds them until `end`.
    Release { end: i64 },
}

/// What the table holds for one stripe. A stripe nobody sold from has no item.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StripeState {
    pub cursors: StripeCursors,
    pub closed: bool,
    pub chosen: Chosen,
    /// Postal entries counted on this stripe.
    pub postal: u64,
    pub held: Held,
}

impl StripeState {
    pub(crate) fn decode(item: &Item) -> Result<Self, StoreError> {
        let reader = Reader::new(item);
        let chosen = item
            .keys()
            .filter_map(|name| name.strip_prefix(CHOSEN_PREFIX))
            .filter_map(|digits| digits.parse::<u64>().ok())
            .collect();
        let held = item
            .iter()
            .filter_map(|(name, value)| {
                let offset = name.strip_prefix(HELD_PREFIX)?.parse::<u64>().ok()?;
                Some((offset, value.as_n().ok()?.parse::<i64>().ok()?))
            })
            .collect();
        Ok(Self {
            held,
            cursors: StripeCursors {
                bottom: reader.opt_num(BOTTOM)?.unwrap_or(0),
                top: reader.opt_num(TOP)?.unwrap_or(0),
            },
            closed: reader.flag(CLOSED),
            chosen,
            postal: reader.opt_num(POSTAL)?.unwrap_or(0),
        })
    }

    /// Numbers that live holds keep at `now` (Unix ms), ahead of the cursors or behind:
    /// none on a closed stripe, whose close ended its holds.
    pub fn live_held(&self, now: i64) -> u64 {
        if self.closed {
            return 0;
        }
        self.held.values().filter(|&&end| end > now).count() as u64
    }

    /// What the grid and the facts count the stripe from: its cursors, chosen offsets and
    /// hold marks, each mark ended at once on a closed stripe.
    pub fn into_marks(self) -> StripeMarks {
        let mut held = self.held;
        if self.closed {
            held.values_mut().for_each(|end| *end = i64::MIN);
        }
        (self.cursors, self.chosen, held)
    }

    /// Tickets sold from a stripe of `len` offsets: by either cursor, or chosen ahead
    /// of them, less the held offsets a cursor passed (held or free again, never sold).
    pub fn sold(&self, len: u64) -> u64 {
        let behind = self
            .held
            .keys()
            .filter(|&&o| o < self.cursors.bottom || o >= len.saturating_sub(self.cursors.top))
            .count() as u64;
        (self.cursors.bottom + self.cursors.top + self.chosen.len() as u64).saturating_sub(behind)
    }
}
