//! One conditional update of a stripe item, built name by name: each offset's attribute
//! named once, values given only where the expressions use them, and the count of hold
//! marks moved with every mark the update adds or removes.

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::super::codec::{key, n};
use super::super::error::build_error;
use super::super::{Store, StoreError, keys};
use super::{CLOSED, HOLD_MARKS, POSTAL, chosen_name, held_name};
use tally_domain::ids::DrawId;

/// Builds one conditional update of a stripe item, naming each offset's attribute once.
pub(super) struct StripeUpdate {
    update: aws_sdk_dynamodb::types::builders::UpdateBuilder,
    pub(super) conditions: Vec<String>,
    pub(super) sets: Vec<String>,
    pub(super) removes: Vec<String>,
    adds: Vec<String>,
    /// Hold marks this write adds (removes, when negative).
    pub(super) hold_marks: i64,
    names: usize,
    /// Values, given to the update only if the expressions use them (DynamoDB refuses
    /// unused ones).
    values: Vec<(String, AttributeValue)>,
}

impl StripeUpdate {
    pub(super) fn new(store: &Store, draw_id: &DrawId, stripe: u32) -> Self {
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
    pub(super) fn chosen(&mut self, offset: u64) -> String {
        self.placeholder(chosen_name(offset))
    }

    /// A placeholder for the attribute of a held offset.
    pub(super) fn held(&mut self, offset: u64) -> String {
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
    pub(super) fn now(&mut self, now: i64) {
        self.value(":now", n(now));
    }

    pub(super) fn value(&mut self, name: &str, value: AttributeValue) {
        self.values.retain(|(n, _)| n != name);
        self.values.push((name.to_owned(), value));
    }

    pub(super) fn name(&mut self, placeholder: &str, name: &str) {
        self.update =
            std::mem::take(&mut self.update).expression_attribute_names(placeholder, name);
    }

    /// A counter's condition: it must be at most `most` (a missing counter is zero).
    pub(super) fn counter_at_most(&mut self, placeholder: &str, value: &str, most: u64) {
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

    /// The condition that an offset is neither chosen nor held; answers the placeholders
    /// of its chosen and hold marks.
    pub(super) fn free(&mut self, offset: u64) -> (String, String) {
        let (chosen, held) = (self.chosen(offset), self.held(offset));
        self.conditions.push(format!(
            "attribute_not_exists({chosen}) AND attribute_not_exists({held})"
        ));
        (chosen, held)
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
            self.counter_at_most("#marks", ":marks_before", most - added);
        }
        Ok(())
    }

    pub(super) fn build(self) -> Result<TransactWriteItem, StoreError> {
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
