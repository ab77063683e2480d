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
use crate::domain::stripes::{Chosen, ChosenTake, Side, StripeCounters, StripeTake};

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

fn chosen_name(offset: u64) -> String {
    format!("{CHOSEN_PREFIX}{offset}")
}

/// What the table holds for one stripe. A stripe nobody sold from has no item.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StripeState {
    pub counters: StripeCounters,
    pub closed: bool,
    pub chosen: Chosen,
    /// Postal entries counted on this stripe.
    pub postal: u64,
}

impl StripeState {
    pub(crate) fn decode(item: &Item) -> Result<Self, StoreError> {
        let reader = Reader::new(item);
        let chosen = item
            .keys()
            .filter_map(|name| name.strip_prefix(CHOSEN_PREFIX))
            .filter_map(|digits| digits.parse::<u64>().ok())
            .collect();
        Ok(Self {
            counters: StripeCounters {
                bottom: reader.opt_num(BOTTOM)?.unwrap_or(0),
                top: reader.opt_num(TOP)?.unwrap_or(0),
            },
            closed: reader.flag(CLOSED),
            chosen,
            postal: reader.opt_num(POSTAL)?.unwrap_or(0),
        })
    }

    /// Tickets sold from the stripe: by either cursor, or chosen ahead of them.
    pub fn sold(&self) -> u64 {
        self.counters.bottom + self.counters.top + self.chosen.len() as u64
    }
}

/// Builds one conditional update of a stripe item, naming each offset's attribute once.
struct StripeUpdate {
    update: aws_sdk_dynamodb::types::builders::UpdateBuilder,
    conditions: Vec<String>,
    sets: Vec<String>,
    removes: Vec<String>,
    adds: Vec<String>,
    names: usize,
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
            names: 0,
        }
    }

    /// A placeholder for the attribute of a chosen offset.
    fn chosen(&mut self, offset: u64) -> String {
        let placeholder = format!("#x{}", self.names);
        self.names += 1;
        self.update = std::mem::take(&mut self.update)
            .expression_attribute_names(&placeholder, chosen_name(offset));
        placeholder
    }

    fn value(&mut self, name: &str, value: AttributeValue) {
        self.update = std::mem::take(&mut self.update).expression_attribute_values(name, value);
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
        let update = self
            .update
            .update_expression(expression.trim())
            .condition_expression(self.conditions.join(" AND "))
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
    pub(crate) fn dip_update(
        &self,
        draw_id: &DrawId,
        take: &StripeTake,
        postal: u64,
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
        if take.cursor == 0 {
            update
                .conditions
                .push("attribute_not_exists(#mine)".to_owned());
        } else {
            update.value(":old", n(take.cursor));
            update.conditions.push("#mine = :old".to_owned());
        }
        update.counter_at_most("#other", ":other_max", take.other_at_most);
        for &offset in &take.taken {
            let name = update.chosen(offset);
            update
                .conditions
                .push(format!("attribute_not_exists({name})"));
        }
        for &offset in &take.skipped {
            let name = update.chosen(offset);
            update.conditions.push(format!("attribute_exists({name})"));
            update.removes.push(name);
        }
        update.count_postal(postal);
        update.build()
    }

    /// A purchase of chosen numbers on one stripe: each offset joins the chosen set, on
    /// the condition that no cursor has reached it and nobody chose it before. `postal`
    /// entries are counted on the stripe.
    pub(crate) fn choose_update(
        &self,
        draw_id: &DrawId,
        take: &ChosenTake,
        postal: u64,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut update = StripeUpdate::new(self, draw_id, take.stripe);
        update.name("#bottom", BOTTOM);
        update.name("#top", TOP);
        update.counter_at_most("#bottom", ":bottom_max", take.bottom_at_most);
        update.counter_at_most("#top", ":top_max", take.top_at_most);
        update.value(":yes", AttributeValue::Bool(true));
        for &offset in &take.offsets {
            let name = update.chosen(offset);
            update
                .conditions
                .push(format!("attribute_not_exists({name})"));
            update.sets.push(format!("{name} = :yes"));
        }
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
        assert_eq!(state.sold(), 14);
    }
}
