//! Series definitions, their counters, and order items.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use sha2::{Digest, Sha256};

use super::codec::{Item, Reader, key, n, parse_timestamp, s, timestamp};
use super::error::{build_error, sdk_error};
use super::table::{Inserted, PutNew, Transaction, Verdict, put_if_absent};
use super::{PARTITION_KEY, Store, StoreError, keys};
use crate::domain::ids::{ExternalRef, SeriesId, SourceId};
use crate::domain::order::{Order, OrderData};
use crate::domain::purchase::hex;
use crate::domain::series::{Reset, Series, SeriesDefinition};

const LAST: &str = "last";
/// A value unique to one create request: finding its own token on the existing item tells a
/// writer that the item is its own earlier write, re-sent by the SDK after a lost response.
const WRITE_TOKEN: &str = "write_token";

/// The series as asked for, at the moment it was asked for: a repeat of the request by the
/// SDK carries the same token, a later request another one.
fn write_token(series: &Series) -> String {
    let d = &series.definition;
    let mut hasher = Sha256::new();
    for part in [
        series.series_id.as_str(),
        d.format.as_str(),
        d.reset.as_str(),
        if d.gapless { "gapless" } else { "fast" },
    ] {
        hasher.update(part);
        hasher.update([0]);
    }
    hasher.update(d.start.to_be_bytes());
    hasher.update(series.created_at.timestamp_micros().to_be_bytes());
    hex(&hasher.finalize()[..16])
}

fn encode_series(series: &Series) -> Item {
    let d = &series.definition;
    let mut item = key(keys::series(&series.series_id));
    item.insert("kind".into(), s("series"));
    item.insert("series_id".into(), s(series.series_id.as_str()));
    item.insert("format".into(), s(d.format.as_str()));
    item.insert("reset".into(), s(d.reset.as_str()));
    item.insert("gapless".into(), AttributeValue::Bool(d.gapless));
    item.insert("start".into(), n(d.start));
    item.insert("created_at".into(), timestamp(series.created_at));
    item.insert(WRITE_TOKEN.into(), s(write_token(series)));
    item
}

fn decode_series(item: &Item) -> Result<Series, StoreError> {
    let r = Reader::new(item);
    let definition = SeriesDefinition::new(
        r.str("format")?,
        r.parsed("reset", |v| Reset::parse(v).ok())?,
        r.flag("gapless"),
        r.num("start")?,
    )
    .map_err(|e| StoreError::Corrupt {
        key: r.str(PARTITION_KEY).unwrap_or("<no key>").to_owned(),
        reason: e.to_string(),
    })?;
    Ok(Series {
        series_id: r.parsed("series_id", |v| SeriesId::parse(v).ok())?,
        definition,
        created_at: r.parsed("created_at", parse_timestamp)?,
    })
}

fn encode_order(pk: String, kind: &str, order: &Order) -> Item {
    let mut item = key(pk);
    item.insert("kind".into(), s(kind));
    item.insert("order_number".into(), s(&order.order_number));
    item.insert("series".into(), s(order.series.as_str()));
    item.insert("source".into(), s(order.source.as_str()));
    item.insert("external_ref".into(), s(order.external_ref.as_str()));
    item.insert("data".into(), s(order.data.as_raw()));
    item.insert("fingerprint".into(), s(&order.fingerprint));
    item.insert("period".into(), s(&order.period));
    item.insert("counter".into(), n(order.counter));
    item.insert("created_at".into(), timestamp(order.created_at));
    item
}

pub(crate) fn decode_order(item: &Item) -> Result<Order, StoreError> {
    let r = Reader::new(item);
    Ok(Order {
        order_number: r.str("order_number")?.to_owned(),
        series: r.parsed("series", |v| SeriesId::parse(v).ok())?,
        source: r.parsed("source", |v| SourceId::parse(v).ok())?,
        external_ref: r.parsed("external_ref", |v| ExternalRef::parse(v).ok())?,
        data: r.parsed("data", |v| OrderData::parse(Some(v)).ok())?,
        fingerprint: r.str("fingerprint")?.to_owned(),
        period: r.str("period")?.to_owned(),
        counter: r.num("counter")?,
        created_at: r.parsed("created_at", parse_timestamp)?,
    })
}

/// Why DynamoDB cancelled an order transaction, item by item.
#[derive(Debug, Default)]
pub struct OrdersCancellation {
    /// The counter was not at the expected value: its value now.
    pub counter_now: Option<u64>,
    /// Positions (in the chunk) whose reference already has an order: that order.
    pub existing: Vec<(usize, Order)>,
    /// Positions whose number is already used by some order.
    pub number_taken: Vec<usize>,
    pub conflict: bool,
}

/// The result of one order transaction.
#[derive(Debug)]
pub enum OrdersCommit {
    Committed,
    Cancelled(OrdersCancellation),
}

/// The counter check of a gapless chunk: the value it must still have.
#[derive(Debug, Clone, Copy)]
pub struct CounterMove {
    /// `None` when the period's counter item does not exist yet.
    pub expected: Option<u64>,
    pub new: u64,
}

impl Store {
    /// Writes a new series; `false` when the id is taken.
    /// Writes a new series, or returns the one that has the id.
    pub async fn insert_series(&self, series: &Series) -> Result<Inserted<Series>, StoreError> {
        match self.insert_once(encode_series(series), WRITE_TOKEN).await? {
            PutNew::Written => Ok(Inserted::New),
            PutNew::Exists(item) => Ok(Inserted::Existing(decode_series(&item)?)),
        }
    }

    pub async fn get_series(&self, series_id: &SeriesId) -> Result<Option<Series>, StoreError> {
        self.get_consistent(keys::series(series_id))
            .await?
            .as_ref()
            .map(decode_series)
            .transpose()
    }

    /// The last counter value issued in a period, if any.
    pub async fn get_counter(
        &self,
        series_id: &SeriesId,
        period: &str,
    ) -> Result<Option<u64>, StoreError> {
        match self
            .get_consistent(keys::series_counter(series_id, period))
            .await?
        {
            Some(item) => Reader::new(&item).opt_num(LAST),
            None => Ok(None),
        }
    }

    /// Fast series: reserves `count` numbers with one atomic update and returns the last
    /// one; the block is `last - count + 1 ..= last`. `first` is the period's first value.
    pub async fn reserve_numbers(
        &self,
        series_id: &SeriesId,
        period: &str,
        first: u64,
        count: u64,
    ) -> Result<u64, StoreError> {
        self.write_meter().single_write();
        let output = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::series_counter(series_id, period))))
            .update_expression("SET #last = if_not_exists(#last, :before_first) + :count")
            .expression_attribute_names("#last", LAST)
            .expression_attribute_values(":before_first", n(first - 1))
            .expression_attribute_values(":count", n(count))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        output
            .attributes()
            .map(|item| Reader::new(item).num(LAST))
            .transpose()?
            .ok_or_else(|| StoreError::Invariant("the counter was not returned".into()))
    }

    /// Writes orders atomically: per order its number item and its reference item, both
    /// new; for a gapless series also the counter, moved from its expected value.
    pub async fn commit_orders(
        &self,
        series_id: &SeriesId,
        period: &str,
        counter: Option<CounterMove>,
        orders: &[Order],
    ) -> Result<OrdersCommit, StoreError> {
        let mut items = Vec::with_capacity(1 + 2 * orders.len());
        if let Some(CounterMove { expected, new }) = counter {
            let mut update = Update::builder()
                .table_name(self.table())
                .set_key(Some(key(keys::series_counter(series_id, period))))
                .update_expression("SET #last = :new")
                .expression_attribute_names("#last", LAST)
                .expression_attribute_values(":new", n(new))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                );
            update = match expected {
                None => update.condition_expression("attribute_not_exists(#last)"),
                Some(old) => update
                    .condition_expression("#last = :old")
                    .expression_attribute_values(":old", n(old)),
            };
            items.push(
                TransactWriteItem::builder()
                    .update(update.build().map_err(build_error)?)
                    .build(),
            );
        }
        let offset = items.len();
        for order in orders {
            let number = keys::order_number(&order.order_number);
            let reference = keys::order_ref(&order.source, &order.external_ref);
            items.push(put_if_absent(
                self.table(),
                encode_order(number, "order", order),
                true,
            )?);
            items.push(put_if_absent(
                self.table(),
                encode_order(reference, "order_ref", order),
                true,
            )?);
        }
        let verdicts = match self.transact(items).await? {
            Transaction::Committed => return Ok(OrdersCommit::Committed),
            Transaction::Busy => {
                return Ok(OrdersCommit::Cancelled(OrdersCancellation {
                    conflict: true,
                    ..OrdersCancellation::default()
                }));
            }
            Transaction::Cancelled(verdicts) => verdicts,
        };
        let mut cancellation = OrdersCancellation::default();
        // Verdicts come in item order: the counter (gapless only), then per order its
        // number and its reference.
        for (position, verdict) in verdicts.into_iter().enumerate() {
            match verdict {
                Verdict::Passed => {}
                Verdict::Conflict | Verdict::Throttled => cancellation.conflict = true,
                Verdict::ConditionFailed(item) if position < offset => {
                    cancellation.counter_now = Some(match item {
                        Some(item) => Reader::new(&item).num(LAST)?,
                        None => 0,
                    });
                }
                Verdict::ConditionFailed(item) => {
                    let index = (position - offset) / 2;
                    if (position - offset) % 2 == 1 {
                        let item = item.ok_or_else(|| {
                            StoreError::Invariant("order reference was not returned".into())
                        })?;
                        cancellation.existing.push((index, decode_order(&item)?));
                    } else {
                        cancellation.number_taken.push(index);
                    }
                }
            }
        }
        Ok(OrdersCommit::Cancelled(cancellation))
    }

    pub async fn get_order_by_number(&self, number: &str) -> Result<Option<Order>, StoreError> {
        self.get_consistent(keys::order_number(number))
            .await?
            .as_ref()
            .map(decode_order)
            .transpose()
    }

    pub async fn get_order_by_ref(
        &self,
        source: &SourceId,
        external_ref: &ExternalRef,
    ) -> Result<Option<Order>, StoreError> {
        self.get_consistent(keys::order_ref(source, external_ref))
            .await?
            .as_ref()
            .map(decode_order)
            .transpose()
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
        let mut found = HashMap::new();
        for item in self.batch_get(keys).await? {
            let order = decode_order(&item)?;
            found.insert(order.external_ref.clone(), order);
        }
        Ok(found)
    }
}
