//! A period's numbers in counter order, from the period index (a global secondary index
//! whose partition is the period and whose sort key is the counter). The index follows
//! the table within about a second: a page may miss the very latest orders.

use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::AttributeValue;

use super::super::codec::n;
use super::super::error::sdk_error;
use super::super::keys::{self, COUNTER, PERIOD_INDEX, PERIOD_KEY};
use super::super::{Store, StoreError};
use super::codec::decode_entry;
use tally_domain::audit::Entry;
use tally_domain::ids::SeriesId;
use tally_domain::order::Order;
use tally_domain::series::Period;

/// Entries read at a time while looking for the last order behind moves.
const LAST_ORDER_PAGE: i32 = 10;

/// One page of a period.
#[derive(Debug)]
pub struct PeriodPage {
    pub entries: Vec<Entry>,
    /// The counter to go on after, when there may be more.
    pub next_after: Option<u64>,
}

impl Store {
    /// A Query of a period's index partition, for the counters `op` (`<`, `>`) `counter`.
    fn period_query(
        &self,
        series_id: &SeriesId,
        period: &Period,
        op: &str,
        counter: u64,
    ) -> QueryFluentBuilder {
        self.client()
            .query()
            .table_name(self.table())
            .index_name(PERIOD_INDEX)
            .key_condition_expression(format!("#period = :period AND #counter {op} :counter"))
            .expression_attribute_names("#period", PERIOD_KEY)
            .expression_attribute_names("#counter", COUNTER)
            .expression_attribute_values(
                ":period",
                AttributeValue::S(keys::series_counter(series_id, period)),
            )
            .expression_attribute_values(":counter", n(counter))
    }

    /// The period's last order below counter `below`, skipping moves, from the index.
    pub async fn last_order_below(
        &self,
        series_id: &SeriesId,
        period: &Period,
        below: u64,
    ) -> Result<Option<Order>, StoreError> {
        let mut start = None;
        loop {
            let output = self
                .period_query(series_id, period, "<", below)
                .scan_index_forward(false)
                .limit(LAST_ORDER_PAGE)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| sdk_error("Query", e))?;
            for item in output.items() {
                if let Entry::Order(order) = decode_entry(item)? {
                    return Ok(Some(*order));
                }
            }
            match output.last_evaluated_key() {
                Some(last) if !last.is_empty() => start = Some(last.clone()),
                _ => return Ok(None),
            }
        }
    }

    /// Up to `limit` entries of a period whose counter is above `after`.
    pub async fn list_period(
        &self,
        series_id: &SeriesId,
        period: &Period,
        after: u64,
        limit: usize,
    ) -> Result<PeriodPage, StoreError> {
        let output = self
            .period_query(series_id, period, ">", after)
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .send()
            .await
            .map_err(|e| sdk_error("Query", e))?;
        let entries = output
            .items()
            .iter()
            .map(decode_entry)
            .collect::<Result<Vec<_>, _>>()?;
        let more = output.last_evaluated_key().is_some_and(|k| !k.is_empty());
        let next_after = more.then(|| entries.last().map(Entry::counter)).flatten();
        Ok(PeriodPage {
            entries,
            next_after,
        })
    }
}
