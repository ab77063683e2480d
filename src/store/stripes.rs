//! Stripe cursor items: what the table holds of a stripe (the two counters, the offsets
//! buyers chose ahead of them, the close flag), and the conditional updates a purchase
//! sends for a lucky dip or for chosen numbers.

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::codec::{Item, Reader, key, n};
use super::error::build_error;
use super::{Store, StoreError, keys};
use crate::domain::ids::DrawId;
use crate::domain::stripes::{Chosen, ChosenTake, Held, Side, StripeCounters, StripeTake};

/// Tickets sold upwards from the stripe's start.
pub(crate) const BOTTOM: &str = "c";
/// Tickets sold downwards from the stripe's end.
pub(crate) const TOP: &str = "t";
pub(crate) const CLOSED: &str = "closed";
/// Postal entries of the purchases that wrote this stripe first.
const POSTAL: &str = "postal";
/// A chosen offset ahead of both counters is an attribute of its own, `x<offset>`, so that
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

fn chosen_name(offset: u64) -> String {
    format!("{CHOSEN_PREFIX}{offset}")
}

fn held_name(offset: u64) -> String {
    format!("{HELD_PREFIX}{offset}")
}

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
    pub counters: StripeCounters,
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
            counters: StripeCounters {
                bottom: reader.opt_num(BOTTOM)?.unwrap_or(0),
                top: reader.opt_num(TOP)?.unwrap_or(0),
            },
            closed: reader.flag(CLOSED),
            chosen,
            postal: reader.opt_num(POSTAL)?.unwrap_or(0),
        })
    }

    /// Numbers that live holds keep at `now` (Unix ms), ahead of the cursors or behind.
    pub fn live_held(&self, now: i64) -> u64 {
        self.held.values().filter(|&&end| end > now).count() as u64
    }

    /// Tickets sold from a stripe of `len` offsets: by either cursor, or chosen ahead
    /// of them, less the held offsets a cursor passed (held or free again, never sold).
    pub fn sold(&self, len: u64) -> u64 {
        let behind = self
            .held
            .keys()
            .filter(|&&o| o < self.counters.bottom || o >= len.saturating_sub(self.counters.top))
            .count() as u64;
        (self.counters.bottom + self.counters.top + self.chosen.len() as u64).saturating_sub(behind)
    }
}

/// Builds one conditional update of a stripe item, naming each offset's attribute once.
struct StripeUpdate {
    update: aws_sdk_dynamodb::types::builders::UpdateBuilder,
    conditions: Vec<String>,
    sets: Vec<String>,
    removes: Vec<String>,
    adds: Vec<String>,
    /// Hold marks this write adds (removes, when negative).
    hold_marks: i64,
    names: usize,
    /// Values, given to the update only if the expressions use them (DynamoDB refuses
    /// unused ones).
    values: Vec<(String, AttributeValue)>,
}

impl StripeUpdate {
    fn new(store: &Store, draw_id: &DrawId, stripe: u32) -> Self {
        Self {
            update: Update::builder()
                .table_name(store.table())
                .set_key(Some(key(keys::stripe(draw_id, stripe))))
                .expression_attribute_names("#closed", CLOSED)
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                ),
            conditions: vec!["attribute_not_exists(#closed)".to_owned()],
            sets: Vec::new(),
            removes: Vec::new(),
            adds: Vec::new(),
            hold_marks: 0,
            names: 0,
            values: Vec::new(),
        }
    }

    /// A placeholder for the attribute of a chosen offset.
    fn chosen(&mut self, offset: u64) -> String {
        self.placeholder(chosen_name(offset))
    }

    /// A placeholder for the attribute of a held offset.
    fn held(&mut self, offset: u64) -> String {
        self.placeholder(held_name(offset))
    }

    fn placeholder(&mut self, name: String) -> String {
        let placeholder = format!("#x{}", self.names);
        self.names += 1;
        self.update =
            std::mem::take(&mut self.update).expression_attribute_names(&placeholder, name);
        placeholder
    }

    /// The writer's clock, for conditions on the end of holds.
    fn now(&mut self, now: i64) {
        self.value(":now", n(now));
    }

    fn value(&mut self, name: &str, value: AttributeValue) {
        self.values.retain(|(n, _)| n != name);
        self.values.push((name.to_owned(), value));
    }

    fn name(&mut self, placeholder: &str, name: &str) {
        self.update =
            std::mem::take(&mut self.update).expression_attribute_names(placeholder, name);
    }

    /// A counter's condition: it must be at most `most` (a missing counter is zero).
    fn counter_at_most(&mut self, placeholder: &str, value: &str, most: u64) {
        self.value(value, n(most));
        self.conditions.push(format!(
            "(attribute_not_exists({placeholder}) OR {placeholder} <= {value})"
        ));
    }

    /// Counts `postal` entries on the stripe (none when 0).
    fn count_postal(&mut self, postal: u64) {
        if postal > 0 {
            self.name("#postal", POSTAL);
            self.value(":postal", n(postal));
            self.adds.push("#postal :postal".to_owned());
        }
    }

    /// An offset whose hold ended by the writer's clock is taken: its mark goes.
    fn hold_ended(&mut self, offset: u64) {
        let held = self.held(offset);
        self.conditions.push(format!("{held} <= :now"));
        self.remove_mark(held);
    }

    /// Ends the mark of `held` (a placeholder) that the hold ending at `:end` set: 0, a
    /// hold that ended, by which its number is free.
    fn release(&mut self, held: String) {
        self.conditions.push(format!("{held} = :end"));
        self.value(":released", n(0));
        self.sets.push(format!("{held} = :released"));
    }

    /// Removes the hold mark of `held` (a placeholder), which the conditions say is there.
    fn remove_mark(&mut self, held: String) {
        self.removes.push(held);
        self.hold_marks -= 1;
    }

    /// Counts the hold marks added or removed on the stripe; with `most`, on the condition
    /// that the stripe then carries at most that many (a hold's write).
    fn count_hold_marks(&mut self, most: Option<u64>) -> Result<(), StoreError> {
        if self.hold_marks == 0 {
            return Ok(());
        }
        self.name("#marks", HOLD_MARKS);
        self.value(":marks", n(self.hold_marks));
        self.adds.push("#marks :marks".to_owned());
        if let (Some(most), true) = (most, self.hold_marks > 0) {
            let added = self.hold_marks as u64;
            if added > most {
                return Err(StoreError::Invariant(format!(
                    "a hold adds {added} marks to a stripe that may carry {most}"
                )));
            }
            self.counter_at_most("#marks", ":marks_before", most - added);
        }
        Ok(())
    }

    fn build(self) -> Result<TransactWriteItem, StoreError> {
        let mut expression = String::new();
        if !self.sets.is_empty() {
            expression.push_str("SET ");
            expression.push_str(&self.sets.join(", "));
        }
        if !self.removes.is_empty() {
            expression.push_str(" REMOVE ");
            expression.push_str(&self.removes.join(", "));
        }
        if !self.adds.is_empty() {
            expression.push_str(" ADD ");
            expression.push_str(&self.adds.join(", "));
        }
        let condition = self.conditions.join(" AND ");
        let mut builder = self.update;
        for (name, value) in self.values {
            let used = |text: &str| {
                text.match_indices(name.as_str()).any(|(at, _)| {
                    !text[at + name.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            };
            if used(&expression) || used(&condition) {
                builder = builder.expression_attribute_values(name, value);
            }
        }
        let update = builder
            .update_expression(expression.trim())
            .condition_expression(condition)
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}

impl Store {
    /// A lucky dip's write of one stripe end: the counter moves from the value the view
    /// knew past the offsets taken and the chosen ones it passes (which leave the set),
    /// on the condition that the counter is unchanged, the other end has not come this
    /// far, the offsets taken are not chosen and the ones passed are. `postal` entries
    /// are counted on the stripe.
    ///
    /// Offsets held on the way are passed and stay held (or, if their hold was paid for
    /// meanwhile, are counted like chosen ones); offsets whose hold ended by `now`
    /// (the writer's clock, Unix ms), ahead of the cursor or behind it, are taken back.
    pub(crate) fn dip_update(
        &self,
        draw_id: &DrawId,
        take: &StripeTake,
        postal: u64,
        now: i64,
    ) -> Result<TransactWriteItem, StoreError> {
        let (mine, other) = match take.side {
            Side::Bottom => (BOTTOM, TOP),
            Side::Top => (TOP, BOTTOM),
        };
        let mut update = StripeUpdate::new(self, draw_id, take.stripe);
        update.name("#mine", mine);
        update.name("#other", other);
        update.value(":new", n(take.next_cursor()));
        update.sets.push("#mine = :new".to_owned());
        update.value(":old", n(take.cursor));
        // A take that only takes back offsets behind the other end leaves its own counter
        // where it was, so a counter of zero may be stored or missing: both read as zero.
        update.conditions.push(if take.cursor == 0 {
            "(attribute_not_exists(#mine) OR #mine = :old)".to_owned()
        } else {
            "#mine = :old".to_owned()
        });
        update.counter_at_most("#other", ":other_max", take.other_at_most);
        update.now(now);
        for &offset in &take.taken {
            if take.ended.contains(&offset) {
                update.hold_ended(offset);
            } else {
                let chosen = update.chosen(offset);
                let held = update.held(offset);
                update.conditions.push(format!(
                    "attribute_not_exists({chosen}) AND attribute_not_exists({held})"
                ));
            }
        }
        for &offset in &take.returned {
            update.hold_ended(offset);
        }
        // A hold passed may have been paid for since the view saw it: ahead of the cursors
        // it became chosen. Either way the offset is not free, and the cursor passes it; a
        // chosen mark leaves, as for a skipped offset, and a hold mark stays behind.
        for &offset in &take.passed {
            let held = update.held(offset);
            let chosen = update.chosen(offset);
            update.conditions.push(format!(
                "(attribute_exists({held}) OR attribute_exists({chosen}))"
            ));
            update.removes.push(chosen);
        }
        for &offset in &take.skipped {
            let name = update.chosen(offset);
            update.conditions.push(format!("attribute_exists({name})"));
            update.removes.push(name);
        }
        update.count_hold_marks(None)?;
        update.count_postal(postal);
        update.build()
    }

    /// A write of offsets a buyer named on one stripe (`write` says what it does to
    /// them). Offsets ahead of the cursors are conditioned on no cursor having reached
    /// them; offsets behind one (`returned`) on a hold that ended. To sell or hold, an
    /// offset must be neither chosen nor held by a hold that lives at `now` (the writer's
    /// clock, Unix ms): without a hold mark, or, where the take says one is, with the mark
    /// of a hold that ended. To convert or release, held by that very hold. A sale and a
    /// conversion remove the marks they meet; a release ends them (0), so that a lucky
    /// dip that means to pass them as held still finds them; a hold removes the ended
    /// marks it sweeps and is conditioned on the stripe's count of marks staying within
    /// its cap. `postal` entries are counted on the stripe.
    pub(crate) fn choose_update(
        &self,
        draw_id: &DrawId,
        take: &ChosenTake,
        write: ChosenWrite,
        postal: u64,
        now: i64,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut update = StripeUpdate::new(self, draw_id, take.stripe);
        update.now(now);
        // A release ends a mark the same way ahead of the cursors or behind them.
        let ahead = !take.offsets.is_empty() && !matches!(write, ChosenWrite::Release { .. });
        if ahead || !take.swept.is_empty() {
            update.name("#bottom", BOTTOM);
            update.name("#top", TOP);
            update.counter_at_most("#bottom", ":bottom_max", take.bottom_at_most);
            update.counter_at_most("#top", ":top_max", take.top_at_most);
        }
        let end = match write {
            ChosenWrite::Sell => None,
            ChosenWrite::Hold { end }
            | ChosenWrite::Convert { end }
            | ChosenWrite::Release { end } => Some(end),
        };
        if let Some(end) = end {
            update.value(":end", n(end));
        }
        update.value(":yes", AttributeValue::Bool(true));
        for &offset in &take.offsets {
            let held = update.held(offset);
            match write {
                ChosenWrite::Sell | ChosenWrite::Hold { .. } => {
                    let chosen = update.chosen(offset);
                    let marked = take.hold_marked.contains(&offset);
                    update.conditions.push(if marked {
                        format!("attribute_not_exists({chosen}) AND {held} <= :now")
                    } else {
                        format!("attribute_not_exists({chosen}) AND attribute_not_exists({held})")
                    });
                    match (write, marked) {
                        (ChosenWrite::Sell, true) => {
                            update.sets.push(format!("{chosen} = :yes"));
                            update.remove_mark(held);
                        }
                        (ChosenWrite::Sell, false) => update.sets.push(format!("{chosen} = :yes")),
                        (_, marked) => {
                            update.sets.push(format!("{held} = :end"));
                            update.hold_marks += i64::from(!marked);
                        }
                    }
                }
                ChosenWrite::Convert { .. } => {
                    update.conditions.push(format!("{held} = :end"));
                    let chosen = update.chosen(offset);
                    update.sets.push(format!("{chosen} = :yes"));
                    update.remove_mark(held);
                }
                ChosenWrite::Release { .. } => update.release(held),
            }
        }
        // Behind a cursor the mark of an ended hold means a free number: a release leaves
        // it there, ended, as ahead of them; a sale or a conversion removes it (the
        // cursor's count covers the number).
        for &offset in &take.returned {
            let held = update.held(offset);
            match write {
                ChosenWrite::Sell => {
                    update.conditions.push(format!("{held} <= :now"));
                    update.remove_mark(held);
                }
                ChosenWrite::Hold { .. } => {
                    update.conditions.push(format!("{held} <= :now"));
                    update.sets.push(format!("{held} = :end"));
                }
                ChosenWrite::Convert { .. } => {
                    update.conditions.push(format!("{held} = :end"));
                    update.remove_mark(held);
                }
                ChosenWrite::Release { .. } => update.release(held),
            }
        }
        for &offset in &take.swept {
            update.hold_ended(offset);
        }
        let most = matches!(write, ChosenWrite::Hold { .. }).then_some(take.hold_marks_most);
        update.count_hold_marks(most)?;
        update.count_postal(postal);
        update.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;

    #[test]
    fn a_stripe_item_decodes_its_counters_and_chosen_offsets() {
        let item: Item = [
            ("pk", AttributeValue::S("DRAW#d#STRIPE#3".into())),
            ("c", n(12)),
            ("x40", AttributeValue::Bool(true)),
            ("x7", AttributeValue::Bool(true)),
            ("closed", AttributeValue::Bool(true)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let state = StripeState::decode(&item).unwrap();
        assert_eq!(state.counters, StripeCounters { bottom: 12, top: 0 });
        assert!(state.closed);
        assert_eq!(state.chosen, Chosen::from([7, 40]));
        assert_eq!(state.sold(100), 14);
    }
}
