//! One conditional update of a stripe item, built name by name: each offset's attribute
//! named once, values given only where the expressions use them, and the count of hold
//! marks moved with every mark the update adds or removes.

use std::collections::{HashMap, HashSet};

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::super::codec::{key, n};
use super::super::error::build_error;
use super::super::{Store, StoreError, keys};
use super::{CHOSEN_PREFIX, CLOSED, HELD_PREFIX, HOLD_MARKS, POSTAL};
use tally_domain::ids::DrawId;

/// One conditional update of a stripe item, which a closed stripe refuses.
#[derive(Default)]
pub(super) struct StripeUpdate {
    table: String,
    pk: String,
    pub(super) conditions: Vec<String>,
    pub(super) sets: Vec<String>,
    pub(super) removes: Vec<String>,
    adds: Vec<String>,
    /// Hold marks this write adds (removes, when negative).
    pub(super) hold_marks: i64,
    names: HashMap<String, String>,
    /// Placeholders handed out for offsets (`#x0`, `#x1`, ...), numbered as the
    /// expression budget of `STRIPE_WRITE_NAMES` assumes.
    placeholders: usize,
    values: HashMap<String, AttributeValue>,
}

impl StripeUpdate {
    /// `now` is the writer's clock (Unix ms), for conditions on the end of holds.
    pub(super) fn new(store: &Store, draw_id: &DrawId, stripe: u32, now: i64) -> Self {
        Self {
            table: store.table().to_owned(),
            pk: keys::stripe(draw_id, stripe),
            conditions: vec!["attribute_not_exists(#closed)".to_owned()],
            names: HashMap::from([("#closed".to_owned(), CLOSED.to_owned())]),
            values: HashMap::from([(":now".to_owned(), n(now))]),
            ..Self::default()
        }
    }

    pub(super) fn chosen(&mut self, offset: u64) -> String {
        self.placeholder(format!("{CHOSEN_PREFIX}{offset}"))
    }

    pub(super) fn held(&mut self, offset: u64) -> String {
        self.placeholder(format!("{HELD_PREFIX}{offset}"))
    }

    fn placeholder(&mut self, name: String) -> String {
        let placeholder = format!("#x{}", self.placeholders);
        self.placeholders += 1;
        self.names.insert(placeholder.clone(), name);
        placeholder
    }

    pub(super) fn name(&mut self, placeholder: &str, name: &str) {
        self.names.insert(placeholder.to_owned(), name.to_owned());
    }

    pub(super) fn value(&mut self, name: &str, value: AttributeValue) {
        self.values.insert(name.to_owned(), value);
    }

    /// A number's condition: it must be at most `most` (a missing number is zero).
    pub(super) fn at_most(&mut self, placeholder: &str, value: &str, most: u64) {
        self.value(value, n(most));
        self.conditions.push(format!(
            "(attribute_not_exists({placeholder}) OR {placeholder} <= {value})"
        ));
    }

    /// Counts `postal` entries on the stripe (none when 0).
    pub(super) fn count_postal(&mut self, postal: u64) {
        if postal > 0 {
            self.name("#postal", POSTAL);
            self.value(":postal", n(postal));
            self.adds.push("#postal :postal".to_owned());
        }
    }

    /// The condition that an offset is neither chosen nor held.
    pub(super) fn free(&mut self, offset: u64) {
        let (chosen, held) = (self.chosen(offset), self.held(offset));
        self.conditions.push(format!(
            "attribute_not_exists({chosen}) AND attribute_not_exists({held})"
        ));
    }

    /// An offset whose hold ended by the writer's clock is taken: its mark goes.
    pub(super) fn hold_ended(&mut self, offset: u64) {
        let held = self.held(offset);
        self.conditions.push(format!("{held} <= :now"));
        self.remove_mark(held);
    }

    /// Removes the hold mark of `held` (a placeholder), which the conditions say is there.
    pub(super) fn remove_mark(&mut self, held: String) {
        self.removes.push(held);
        self.hold_marks -= 1;
    }

    /// Counts the hold marks added or removed on the stripe; with `most`, on the condition
    /// that the stripe then carries at most that many (a hold's write).
    pub(super) fn count_hold_marks(&mut self, most: Option<u64>) -> Result<(), StoreError> {
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
            self.at_most("#marks", ":marks_before", most - added);
        }
        Ok(())
    }

    pub(super) fn build(self) -> Result<TransactWriteItem, StoreError> {
        let clauses = [
            ("SET", self.sets),
            ("REMOVE", self.removes),
            ("ADD", self.adds),
        ];
        let expression = clauses
            .iter()
            .filter(|(_, parts)| !parts.is_empty())
            .map(|(verb, parts)| format!("{verb} {}", parts.join(", ")))
            .collect::<Vec<_>>()
            .join(" ");
        let condition = self.conditions.join(" AND ");
        // DynamoDB refuses values that the expressions do not use.
        let text = format!("{expression} {condition}");
        let used: HashSet<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .collect();
        let values: HashMap<_, _> = self
            .values
            .into_iter()
            .filter(|(name, _)| used.contains(name.as_str()))
            .collect();
        let update = Update::builder()
            .table_name(self.table)
            .set_key(Some(key(self.pk)))
            .update_expression(expression)
            .condition_expression(condition)
            .set_expression_attribute_names(Some(self.names))
            .set_expression_attribute_values((!values.is_empty()).then_some(values))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}
