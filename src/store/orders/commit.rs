//! The transaction that writes orders: per order its number item (keyed by series,
//! period and counter) and its reference item, both new; in a gapless series also the
//! counter, moved by the writer that leased it, and a declared jump to the next
//! authorised range; for a credit note the invoice it corrects, which must be live; and
//! the marks of the ranges its orders take past their low share. Each item's role is recorded beside it,
//! so that a cancellation is read by role, not by position.

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::super::codec::{Item, key, n, s};
use super::super::error::build_error;
use super::super::metrics::item_units;
use super::super::table::{Verdict, put_if_absent};
use super::super::transaction::{Roled, RoledOutcome};
use super::super::{PARTITION_KEY, Store, StoreError, keys};
use super::codec::{
    CREDIT_NOTES, VOIDED_AT, decode_order, encode_move, encode_order, encode_range_low,
};
use super::counter::{CounterAdvance, CounterState, decode_counter, gapless_counter_update};
use tally_domain::ids::SeriesId;
use tally_domain::order::{MAX_CREDIT_NOTES, Move, Order};
use tally_domain::series::{Period, RangeLow};

/// The invoice a credit note corrects, as found: where it is and what it is.
#[derive(Debug, Clone)]
pub struct InvoiceRef {
    pub series: SeriesId,
    pub period: Period,
    pub order: Order,
}

/// What one transaction writes besides its orders.
#[derive(Debug, Default)]
pub struct OrdersExtras<'a> {
    /// Gapless series: the counter's move, by the writer that leased it.
    pub advance: Option<&'a CounterAdvance>,
    /// A declared gap before the orders (the way to the next authorised range).
    pub jump: Option<&'a Move>,
    /// Per order, the invoice it corrects (credit notes only).
    pub invoices: &'a [Option<InvoiceRef>],
    /// The ranges these orders take past their low share, one mark each.
    pub lows: &'a [RangeLow],
}

/// Why an invoice refused a credit note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceRefusal {
    /// It is no longer there.
    Gone,
    /// It was voided.
    Void,
    /// It has as many credit notes as one invoice takes.
    Full,
}

impl InvoiceRefusal {
    /// Why `invoice`, as read, refuses a credit note; `None` when it takes one.
    pub fn of_read(invoice: &Order) -> Option<Self> {
        if invoice.void.is_some() {
            Some(Self::Void)
        } else if invoice.credit_notes.len() >= MAX_CREDIT_NOTES {
            Some(Self::Full)
        } else {
            None
        }
    }

    /// Why `invoice`, as a cancelled transaction found it, refused the credit note.
    fn of(invoice: &Order) -> Self {
        Self::of_read(invoice).unwrap_or(Self::Gone)
    }
}

/// Why DynamoDB cancelled an order transaction, item by item.
#[derive(Debug, Default)]
pub struct OrdersCancellation {
    /// The counter was no longer the writer's to move (its lease was taken over, or the
    /// period's format changed): the counter as it is.
    pub counter_now: Option<CounterState>,
    /// Positions (in the chunk) whose reference already has an order: that order.
    pub existing: Vec<(usize, Order)>,
    /// Positions whose invoice refused the credit note.
    pub invoices: Vec<(usize, InvoiceRefusal)>,
    /// Positions whose number item exists already, while the counter was the writer's to
    /// move (a fast series' counter always is): the writer decides whether that can be.
    pub taken: Vec<usize>,
    /// Positions (in `lows`) whose range's mark was written already.
    pub lows_written: Vec<usize>,
    /// Another transaction or write held an item, or DynamoDB throttled one.
    pub conflict: bool,
}

/// The result of one order transaction.
#[derive(Debug)]
pub enum OrdersCommit {
    Committed,
    /// Boxed: a cancellation is rare and much larger than a commit.
    Cancelled(Box<OrdersCancellation>),
}

/// What an item of the transaction is for.
#[derive(Debug, Clone, Copy)]
enum Role {
    Counter,
    Jump,
    Number(usize),
    Reference(usize),
    Invoice(usize),
    Low(usize),
}

impl Store {
    /// Writes orders of one period atomically, with what `extras` asks for.
    pub async fn commit_orders(
        &self,
        series_id: &SeriesId,
        period: &Period,
        orders: &[Order],
        extras: &OrdersExtras<'_>,
    ) -> Result<OrdersCommit, StoreError> {
        let mut tx = Roled::with_capacity(2 + extras.lows.len() + 3 * orders.len());
        if let Some(advance) = extras.advance {
            let update = gapless_counter_update(self.table(), series_id, period, advance)?;
            tx.push(Role::Counter, update);
        }
        if let Some(jump) = extras.jump {
            let item = encode_move(series_id, period, jump);
            tx.push(Role::Jump, put_if_absent(self.table(), item, false)?);
        }
        let period_key = keys::series_counter(series_id, period);
        for (index, order) in orders.iter().enumerate() {
            let number = keys::order_number(series_id, period, order.counter);
            let reference = keys::order_ref(&order.source, &order.external_ref);
            let item = encode_order(number, order, Some(period_key.clone()));
            tx.push(
                Role::Number(index),
                put_if_absent(self.table(), item, false)?,
            );
            let item = encode_order(reference, order, None);
            tx.push(
                Role::Reference(index),
                put_if_absent(self.table(), item, true)?,
            );
            // The list index holds its text: keys only, one unit.
            tx.add_index_updates(1);
            if let Some(Some(invoice)) = extras.invoices.get(index) {
                let update = self.credit_invoice(invoice, &order.order_number)?;
                tx.push(Role::Invoice(index), update);
                tx.add_index_updates(invoice_index_units(invoice, &order.order_number));
            }
        }
        for (index, low) in extras.lows.iter().enumerate() {
            let item = encode_range_low(low);
            tx.push(Role::Low(index), put_if_absent(self.table(), item, false)?);
        }
        let verdicts = match self.transact_roled(tx).await? {
            RoledOutcome::Committed => return Ok(OrdersCommit::Committed),
            // A transaction still in progress may yet commit: its outcome is unknown.
            RoledOutcome::Busy => {
                return Err(StoreError::Unavailable {
                    operation: "TransactWriteItems",
                    reason: "the transaction was still in progress".into(),
                });
            }
            RoledOutcome::Cancelled(verdicts) => verdicts,
        };
        let mut cancellation = OrdersCancellation::default();
        // Numbers are written under the counter. A gapless writer whose counter moved on
        // may find the next writer's numbers in its way: that is the counter's verdict,
        // not theirs. Otherwise a number in the way is reported, for the writer to judge.
        let counter_held = !verdicts.iter().any(|(role, verdict)| {
            matches!(role, Role::Counter) && !matches!(verdict, Verdict::Passed)
        });
        for (role, verdict) in verdicts {
            let item = match verdict {
                Verdict::Passed => continue,
                Verdict::Conflict | Verdict::Throttled => {
                    cancellation.conflict = true;
                    continue;
                }
                Verdict::ConditionFailed(item) => item,
            };
            match role {
                Role::Counter => {
                    cancellation.counter_now = Some(match item {
                        Some(item) => decode_counter(&item)?,
                        None => CounterState::default(),
                    });
                }
                Role::Number(_) | Role::Jump if !counter_held => {}
                Role::Number(index) => cancellation.taken.push(index),
                Role::Jump => {
                    return Err(StoreError::Invariant(format!(
                        "an entry holds the end of a jump in {series_id} {period}"
                    )));
                }
                Role::Reference(index) => {
                    let item: Item = item.ok_or_else(|| {
                        StoreError::Invariant("order reference was not returned".into())
                    })?;
                    cancellation.existing.push((index, decode_order(&item)?));
                }
                Role::Invoice(index) => {
                    let refusal = match item.as_ref().map(decode_order).transpose()? {
                        Some(invoice) => InvoiceRefusal::of(&invoice),
                        None => InvoiceRefusal::Gone,
                    };
                    cancellation.invoices.push((index, refusal));
                }
                Role::Low(index) => cancellation.lows_written.push(index),
            }
        }
        Ok(OrdersCommit::Cancelled(Box::new(cancellation)))
    }

    /// Whether the mark of `low`'s range is written, read consistently: a writer that
    /// knows it carries no mark its transaction would be cancelled for.
    pub async fn range_low_written(&self, low: &RangeLow) -> Result<bool, StoreError> {
        let mark = keys::range_low(&low.series, low.range.from);
        Ok(self.get_consistent(mark).await?.is_some())
    }

    /// Adds a credit note to the invoice's number item, on condition that the invoice is
    /// there, not void and not full: a void of the invoice then waits for no credit note,
    /// and no credit note can point at a void invoice.
    fn credit_invoice(
        &self,
        invoice: &InvoiceRef,
        credit_note: &str,
    ) -> Result<TransactWriteItem, StoreError> {
        let number = keys::order_number(&invoice.series, &invoice.period, invoice.order.counter);
        let update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(number)))
            .update_expression("SET #notes = list_append(if_not_exists(#notes, :none), :note)")
            .condition_expression(
                "attribute_exists(#pk) AND attribute_not_exists(#voided) \
                 AND (attribute_not_exists(#notes) OR size(#notes) < :most)",
            )
            .expression_attribute_names("#notes", CREDIT_NOTES)
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#voided", VOIDED_AT)
            .expression_attribute_values(":none", AttributeValue::L(Vec::new()))
            .expression_attribute_values(":note", AttributeValue::L(vec![s(credit_note)]))
            .expression_attribute_values(":most", n(MAX_CREDIT_NOTES))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}

/// The invoice's number item changes in the period index, which holds it whole.
fn invoice_index_units(invoice: &InvoiceRef, credit_note: &str) -> u64 {
    let mut credited = invoice.order.clone();
    credited.credit_notes.push(credit_note.to_owned());
    let number = keys::order_number(&invoice.series, &invoice.period, credited.counter);
    let period_key = keys::series_counter(&invoice.series, &invoice.period);
    item_units(&encode_order(number, &credited, Some(period_key)))
}
