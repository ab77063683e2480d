//! The transaction that writes orders: per order its number item (keyed by series,
//! period and counter) and its reference item, both new; in a gapless series also the
//! counter, moved by the writer that claimed it.

use super::super::codec::Item;
use super::super::table::{Transaction, Verdict, put_if_absent};
use super::super::{Store, StoreError, keys};
use super::codec::{decode_order, encode_order};
use super::counter::{CounterAdvance, CounterState, decode_counter, gapless_counter_update};
use crate::domain::ids::SeriesId;
use crate::domain::order::Order;
use crate::domain::series::Period;

/// Why DynamoDB cancelled an order transaction, item by item.
#[derive(Debug, Default)]
pub struct OrdersCancellation {
    /// The counter was no longer the writer's to move (its claim was taken over, or the
    /// period's format changed): the counter as it is.
    pub counter_now: Option<CounterState>,
    /// Positions (in the chunk) whose reference already has an order: that order.
    pub existing: Vec<(usize, Order)>,
    /// Another transaction or write held an item, or DynamoDB throttled one.
    pub conflict: bool,
}

/// The result of one order transaction.
#[derive(Debug)]
pub enum OrdersCommit {
    Committed,
    Cancelled(OrdersCancellation),
}

impl Store {
    /// Writes orders of one period atomically.
    pub async fn commit_orders(
        &self,
        series_id: &SeriesId,
        period: &Period,
        advance: Option<&CounterAdvance>,
        orders: &[Order],
    ) -> Result<OrdersCommit, StoreError> {
        let mut items = Vec::with_capacity(1 + 2 * orders.len());
        if let Some(advance) = advance {
            items.push(gapless_counter_update(
                self.table(),
                series_id,
                period,
                advance,
            )?);
        }
        let offset = items.len();
        let period_key = keys::series_counter(series_id, period);
        for order in orders {
            let number = keys::order_number(series_id, period, order.counter);
            let reference = keys::order_ref(&order.source, &order.external_ref);
            items.push(put_if_absent(
                self.table(),
                encode_order(number, order, Some(period_key.clone())),
                false,
            )?);
            items.push(put_if_absent(
                self.table(),
                encode_order(reference, order, None),
                true,
            )?);
        }
        let verdicts = match self.transact(items, 0).await? {
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
        // Numbers are written under the counter: a number item in the way is a bug while
        // the counter is the writer's (always, in a fast series, whose numbers were
        // reserved). A gapless writer whose claim was taken over finds the counter moved
        // on, and the next writer may have written those numbers: it claims again.
        let counter_held = offset == 0 || matches!(verdicts.first(), Some(Verdict::Passed));
        // Verdicts come in item order: the counter (gapless only), then per order its
        // number and its reference.
        for (position, verdict) in verdicts.into_iter().enumerate() {
            match verdict {
                Verdict::Passed => {}
                Verdict::Conflict | Verdict::Throttled => cancellation.conflict = true,
                Verdict::ConditionFailed(item) if position < offset => {
                    cancellation.counter_now = Some(match item {
                        Some(item) => decode_counter(&item)?,
                        None => CounterState::default(),
                    });
                }
                Verdict::ConditionFailed(item) => {
                    let index = (position - offset) / 2;
                    if (position - offset) % 2 == 0 {
                        if !counter_held {
                            continue;
                        }
                        return Err(StoreError::Invariant(format!(
                            "number {} of {series_id} {period} already exists",
                            orders[index].counter
                        )));
                    }
                    let item: Item = item.ok_or_else(|| {
                        StoreError::Invariant("order reference was not returned".into())
                    })?;
                    cancellation.existing.push((index, decode_order(&item)?));
                }
            }
        }
        Ok(OrdersCommit::Cancelled(cancellation))
    }
}
