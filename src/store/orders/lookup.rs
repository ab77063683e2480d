//! Reading orders back: by reference, by (series, period, counter), and voiding one.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update};

use super::super::codec::{Item, Reader, key, s, timestamp};
use super::super::error::build_error;
use super::super::error::sdk_error;
use super::super::metrics::item_units;
use super::super::table::Verdict;
use super::super::transaction::{Roled, RoledOutcome};
use super::super::{PARTITION_KEY, Store, StoreError, keys};
use super::codec::{
    CREDIT_NOTES, VOID_REASON, VOIDED_AT, decode_entry, decode_order, encode_order,
};
use tally_domain::audit::Entry;
use tally_domain::ids::{ExternalRef, SeriesId, SourceId};
use tally_domain::journal::Draft;
use tally_domain::order::{Order, Void};
use tally_domain::series::Period;

/// How a void ended.
#[derive(Debug)]
pub enum Voided {
    Voided,
    /// The order was void already: as it is.
    Already(Box<Order>),
    /// The order is an invoice with credit notes: it stays live.
    Credited(Box<Order>),
    /// Another write held the order: try again.
    Conflict,
}

impl Store {
    pub async fn get_order_by_ref(
        &self,
        source: &SourceId,
        external_ref: &ExternalRef,
    ) -> Result<Option<Order>, StoreError> {
        let order = self
            .get_consistent(keys::order_ref(source, external_ref))
            .await?
            .as_ref()
            .map(decode_order)
            .transpose()?;
        Ok(match order {
            Some(order) => self.with_credit_notes(vec![order]).await?.pop(),
            None => None,
        })
    }

    /// The orders already on record for these references.
    pub async fn get_orders_by_refs(
        &self,
        source: &SourceId,
        refs: &[ExternalRef],
    ) -> Result<HashMap<ExternalRef, Order>, StoreError> {
        let keys = refs
            .iter()
            .map(|r| key(keys::order_ref(source, r)))
            .collect();
        let orders = self
            .batch_get(keys)
            .await?
            .iter()
            .map(decode_order)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self
            .with_credit_notes(orders)
            .await?
            .into_iter()
            .map(|order| (order.external_ref.clone(), order))
            .collect())
    }

    /// A reference item keeps the order as it was numbered (and voided); its credit notes
    /// are added to its number item alone, so they are read from there.
    pub async fn with_credit_notes(
        &self,
        mut orders: Vec<Order>,
    ) -> Result<Vec<Order>, StoreError> {
        if orders.is_empty() {
            return Ok(orders);
        }
        let keys = orders
            .iter()
            .map(|o| key(keys::order_number(&o.series, &o.period, o.counter)))
            .collect();
        let mut notes = HashMap::new();
        for item in self.batch_get(keys).await? {
            let numbered = decode_order(&item)?;
            let at = (numbered.series, numbered.period, numbered.counter);
            notes.insert(at, numbered.credit_notes);
        }
        for order in &mut orders {
            let at = (order.series.clone(), order.period.clone(), order.counter);
            if let Some(credit_notes) = notes.remove(&at) {
                order.credit_notes = credit_notes;
            }
        }
        Ok(orders)
    }

    /// The entries (orders, or moves kept under the number they end at) stored under
    /// these numbers, read consistently; absent ones are left out.
    pub async fn get_numbers(
        &self,
        numbers: &[(SeriesId, Period, u64)],
    ) -> Result<Vec<Entry>, StoreError> {
        let keys = numbers
            .iter()
            .map(|(series, period, counter)| key(keys::order_number(series, period, *counter)))
            .collect();
        self.batch_get(keys)
            .await?
            .iter()
            .map(decode_entry)
            .collect()
    }

    /// Every order, of any series, whose number is `text`: the list index holds each
    /// number item under its text (keys only), and the items are then read by key,
    /// strongly consistent. The index follows the table within about a second.
    pub async fn orders_by_text(&self, text: &str) -> Result<Vec<Order>, StoreError> {
        let mut pks = Vec::new();
        let mut start: Option<Item> = None;
        loop {
            let output = self
                .client()
                .query()
                .table_name(self.table())
                .index_name(keys::LIST_INDEX)
                .key_condition_expression("#pk = :pk")
                .expression_attribute_names("#pk", keys::LIST_PK)
                .expression_attribute_values(":pk", s(keys::number_text(text)))
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| sdk_error("Query", e))?;
            for item in output.items() {
                pks.push(key(Reader::new(item).str(PARTITION_KEY)?.to_owned()));
            }
            match output.last_evaluated_key() {
                Some(last) if !last.is_empty() => start = Some(last.clone()),
                _ => break,
            }
        }
        let mut orders = Vec::new();
        for item in self.batch_get(pks).await? {
            if let Entry::Order(order) = decode_entry(&item)?
                && order.order_number == text
            {
                orders.push(*order);
            }
        }
        Ok(orders)
    }

    /// Marks an order void on its number item and its reference item together, unless it
    /// is void already or is an invoice with credit notes.
    pub async fn void_order(
        &self,
        series_id: &SeriesId,
        period: &Period,
        order: &Order,
        void: &Void,
        entry: &Draft,
    ) -> Result<Voided, StoreError> {
        let mark = |pk: String, return_old: bool| -> Result<TransactWriteItem, StoreError> {
            let mut update = Update::builder()
                .table_name(self.table())
                .set_key(Some(key(pk)))
                .update_expression("SET #reason = :reason, #at = :at")
                .condition_expression(
                    "attribute_exists(#pk) AND attribute_not_exists(#at) AND attribute_not_exists(#notes)",
                )
                .expression_attribute_names("#pk", PARTITION_KEY)
                .expression_attribute_names("#reason", VOID_REASON)
                .expression_attribute_names("#at", VOIDED_AT)
                .expression_attribute_names("#notes", CREDIT_NOTES)
                .expression_attribute_values(
                    ":reason",
                    s(void.reason.as_str()),
                )
                .expression_attribute_values(":at", timestamp(void.at));
            if return_old {
                update = update.return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                );
            }
            Ok(TransactWriteItem::builder()
                .update(update.build().map_err(build_error)?)
                .build())
        };
        let number = keys::order_number(series_id, period, order.counter);
        // The number item is in the period index: its new version is written there too.
        let index_units = item_units(&encode_order(
            number.clone(),
            &Order {
                void: Some(void.clone()),
                ..order.clone()
            },
            Some(keys::series_counter(series_id, period)),
        ));
        // Roles: the number item comes first, the reference item second.
        let mut tx = Roled::with_capacity(2);
        tx.push((), mark(number, true)?);
        tx.push(
            (),
            mark(keys::order_ref(&order.source, &order.external_ref), false)?,
        );
        tx.add_index_updates(index_units);
        match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => Ok(Voided::Voided),
            RoledOutcome::Busy => Ok(Voided::Conflict),
            RoledOutcome::Cancelled(verdicts) => {
                match verdicts.into_iter().map(|(_, v)| v).next() {
                    Some(Verdict::ConditionFailed(Some(item))) => {
                        let stored = Box::new(decode_order(&item)?);
                        if stored.void.is_some() {
                            Ok(Voided::Already(stored))
                        } else {
                            Ok(Voided::Credited(stored))
                        }
                    }
                    Some(Verdict::ConditionFailed(None)) => Err(StoreError::Invariant(format!(
                        "order {} vanished while it was voided",
                        order.order_number
                    ))),
                    _ => Ok(Voided::Conflict),
                }
            }
        }
    }
}
