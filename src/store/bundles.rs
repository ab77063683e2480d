//! Bundles: purchases with more tickets than one transaction holds (`max_per_purchase` up
//! to 500).
//!
//! The transaction that decides a bundle is the one a smaller purchase sends: its record,
//! every stripe it touches, the payer's allowance and its instant-win award, with as many
//! ticket items as fit. Once it commits, the numbers are the buyer's: the stripes say so,
//! and every other sale, hold or choice is conditioned on them. So the ticket items that
//! did not fit can only be written, never refused. The record says `unfinished` until
//! they are; a repeat of the purchase writes them again (each write is new or finds the
//! bundle's own item) and clears `unfinished`.
//!
//! Should no repeat come, the bundle is also listed under its draw ([`unfinished_marker`]):
//! the eligible list finishes every bundle listed; a ticket read that finds no item reads
//! their records and finishes only the one holding its number.
//!
//! A void works alike: its transaction sets the record void, counts every ticket on the
//! draw and names the bundle in the draw's `voiding` set, with as many ticket voids as
//! fit; the rest follow. The eligible list finishes every bundle the draw still names
//! before it trusts the index of voided tickets, so a void cut short never blocks a close.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::builders::UpdateBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem, Update};
use futures::{StreamExt, TryStreamExt};

use super::codec::{Item, Reader, key, s};
use super::draws::VOIDING;
use super::error::{build_error, conditional, done_unless_failed, sdk_error};
use super::limits::MAX_TRANSACTION_ITEMS;
use super::purchases::{STATUS, VOID, decode_purchase, decode_ticket, encode_ticket};
use super::retry;
use super::table::PutNew;
use super::{Store, StoreError, keys, kind};
use tally_domain::ids::{DrawId, PaymentId};
use tally_domain::purchase::{Purchase, Unfinished};

/// On the record while follow-up writes are left.
const UNFINISHED: &str = "unfinished";
const TICKETS: &str = "tickets";
const VOID_MARKS: &str = "void";
const LATE_VOID_MARKS: &str = "late_void";
/// Follow-up writes of one bundle in flight at once.
const PARALLEL_WRITES: usize = 16;
/// Runs `write` until it succeeds, fails for good, or has failed as often as
/// [`retry::BUNDLE_WRITE`] allows (after the SDK's own retries each time).
async fn persist<F, Fut>(write: F) -> Result<(), StoreError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(), StoreError>>,
{
    let mut tries = 0;
    loop {
        tries += 1;
        match write().await {
            Err(err) if err.is_transient() && retry::BUNDLE_WRITE.allows_after(tries) => {
                retry::BUNDLE_WRITE.pause(tries).await;
            }
            outcome => return outcome,
        }
    }
}

/// `tickets` split into those that fit one transaction beside `other_items`, and those
/// that follow it.
pub(crate) fn split_tickets(tickets: &[u64], other_items: usize) -> (&[u64], &[u64]) {
    let room = MAX_TRANSACTION_ITEMS.saturating_sub(other_items);
    tickets.split_at(room.min(tickets.len()))
}

/// [`split_tickets`] for a bundle's deciding transaction, which has a place for the
/// [`unfinished_marker`] when tickets follow it.
pub(crate) fn split_bundle(tickets: &[u64], other_items: usize) -> (&[u64], &[u64]) {
    match split_tickets(tickets, other_items) {
        (inline, []) => (inline, &[]),
        _ => split_tickets(tickets, other_items + 1),
    }
}

fn unfinished_value(unfinished: Unfinished) -> &'static str {
    match unfinished {
        Unfinished::Tickets => TICKETS,
        Unfinished::Void { late: false } => VOID_MARKS,
        Unfinished::Void { late: true } => LATE_VOID_MARKS,
    }
}

/// Marks a new purchase record as a bundle whose ticket items follow its commit.
pub(crate) fn set_unfinished(item: &mut Item) {
    item.insert(UNFINISHED.into(), s(TICKETS));
}

/// The [`encode_unfinished_marker`] item, one more of the transaction deciding a bundle.
pub(crate) fn unfinished_marker(
    table: &str,
    purchase: &Purchase,
) -> Result<TransactWriteItem, StoreError> {
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(encode_unfinished_marker(purchase)))
        .build()
        .map_err(build_error)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// The item that lists a bundle under its draw (the `list` index) until its ticket items
/// are all written.
pub(crate) fn encode_unfinished_marker(purchase: &Purchase) -> Item {
    let mut item = key(keys::unfinished(&purchase.draw_id, &purchase.payment_id));
    item.insert(kind::ATTRIBUTE.into(), s(kind::UNFINISHED_BUNDLE));
    let list = keys::draw_unfinished(&purchase.draw_id);
    item.insert(keys::LIST_PK.into(), s(list));
    item.insert(keys::LIST_SK.into(), s(purchase.payment_id.as_str()));
    item
}

/// Sets the record's `unfinished` in a void's update: `SET` expression and its values.
pub(crate) fn set_void_unfinished(
    update: UpdateBuilder,
    expression: &str,
    late: bool,
) -> UpdateBuilder {
    update
        .update_expression(format!("{expression}, #unfinished = :unfinished"))
        .expression_attribute_names("#unfinished", UNFINISHED)
        .expression_attribute_values(
            ":unfinished",
            s(unfinished_value(Unfinished::Void { late })),
        )
}

pub(crate) fn decode_unfinished(r: &Reader) -> Result<Option<Unfinished>, StoreError> {
    Ok(match r.opt_str(UNFINISHED)? {
        None => None,
        Some(TICKETS) => Some(Unfinished::Tickets),
        Some(VOID_MARKS) => Some(Unfinished::Void { late: false }),
        Some(LATE_VOID_MARKS) => Some(Unfinished::Void { late: true }),
        Some(other) => return Err(r.corrupt(format!("unknown `unfinished` value `{other}`"))),
    })
}

/// A ticket item's void: it says void and enters the index of (late) voided tickets, on
/// the condition that it is the purchase's.
pub(crate) fn void_ticket(
    table: &str,
    purchase: &Purchase,
    number: u64,
    late: bool,
) -> Result<Update, StoreError> {
    let draw_id = &purchase.draw_id;
    let voids = if late {
        keys::draw_late_voids(draw_id)
    } else {
        keys::draw_voids(draw_id)
    };
    Update::builder()
        .table_name(table)
        .set_key(Some(key(keys::ticket(draw_id, number))))
        .update_expression("SET #status = :void, #list_pk = :voids, #list_sk = :n")
        .condition_expression("#payment = :payment")
        .expression_attribute_names("#status", STATUS)
        .expression_attribute_names("#payment", "payment_id")
        .expression_attribute_names("#list_pk", keys::LIST_PK)
        .expression_attribute_names("#list_sk", keys::LIST_SK)
        .expression_attribute_values(":void", s(VOID))
        .expression_attribute_values(":voids", s(voids.as_str()))
        .expression_attribute_values(":n", s(keys::ticket_sort(number)))
        .expression_attribute_values(":payment", s(purchase.payment_id.as_str()))
        .build()
        .map_err(build_error)
}

impl Store {
    /// Finishes what a bundle's deciding transaction left: its ticket items, or the void
    /// voids on them and its name on the draw. Every write is safe to repeat; the answer
    /// is the purchase as it now stands.
    pub async fn finish(&self, mut purchase: Purchase) -> Result<Purchase, StoreError> {
        let Some(unfinished) = purchase.unfinished else {
            return Ok(purchase);
        };
        // Read first, so that a repeat writes only what is missing.
        let stored = self.ticket_items(&purchase).await?;
        match unfinished {
            Unfinished::Tickets => {
                let missing: Vec<u64> = purchase
                    .tickets
                    .iter()
                    .copied()
                    .filter(|n| !stored.contains_key(n))
                    .collect();
                self.finish_tickets(&purchase, &missing).await?;
            }
            Unfinished::Void { late } => {
                let unmarked: Vec<u64> = purchase
                    .tickets
                    .iter()
                    .copied()
                    .filter(|n| stored.get(n) != Some(&true))
                    .collect();
                self.finish_void(&purchase, &unmarked, late).await?;
            }
        }
        purchase.unfinished = None;
        Ok(purchase)
    }

    /// The purchase's ticket items as they stand: whether each is void.
    async fn ticket_items(&self, purchase: &Purchase) -> Result<HashMap<u64, bool>, StoreError> {
        let keys = purchase
            .tickets
            .iter()
            .map(|&number| key(keys::ticket(&purchase.draw_id, number)))
            .collect();
        let mut stored = HashMap::with_capacity(purchase.tickets.len());
        for item in self.batch_get(keys).await? {
            let ticket = decode_ticket(&item)?;
            if ticket.payment_id != purchase.payment_id {
                return Err(StoreError::Invariant(format!(
                    "ticket {} of {} belongs to another purchase than its bundle {}",
                    ticket.number, purchase.draw_id, purchase.payment_id
                )));
            }
            stored.insert(ticket.number, ticket.voided);
        }
        Ok(stored)
    }

    /// Writes the ticket items of `numbers` (each new, or found as the purchase's own),
    /// then clears the record's `unfinished`.
    pub(crate) async fn finish_tickets(
        &self,
        purchase: &Purchase,
        numbers: &[u64],
    ) -> Result<(), StoreError> {
        futures::stream::iter(numbers.iter().copied())
            .map(|number| persist(move || self.write_own_ticket(purchase, number)))
            .buffer_unordered(PARALLEL_WRITES)
            .try_collect::<()>()
            .await?;
        persist(|| self.clear_unfinished(purchase, Unfinished::Tickets)).await?;
        persist(|| self.unlist_unfinished(&purchase.draw_id, &purchase.payment_id)).await
    }

    /// Finishes and unlists every bundle `draw_id` lists as unfinished; answers how many.
    pub async fn finish_unfinished(&self, draw_id: &DrawId) -> Result<usize, StoreError> {
        let listed = self.unfinished_bundles(draw_id).await?;
        for payment_id in &listed {
            if let Some(purchase) = self.get_purchase(draw_id, payment_id).await? {
                self.finish(purchase).await?;
            }
            persist(|| self.unlist_unfinished(draw_id, payment_id)).await?;
        }
        Ok(listed.len())
    }

    /// Finishes and unlists the bundle `draw_id` lists as unfinished that holds `number`, if
    /// one does, leaving the others to the eligible list: a ticket read reads every listed
    /// record but writes one bundle's items at most. Answers whether one held it.
    pub async fn finish_bundle_holding(
        &self,
        draw_id: &DrawId,
        number: u64,
    ) -> Result<bool, StoreError> {
        let listed = self.unfinished_bundles(draw_id).await?;
        let records = listed
            .iter()
            .map(|payment_id| key(keys::purchase(draw_id, payment_id)))
            .collect();
        for item in self.batch_get(records).await? {
            let purchase = decode_purchase(&item)?;
            if purchase.tickets.contains(&number) {
                let payment_id = purchase.payment_id.clone();
                self.finish(purchase).await?;
                persist(|| self.unlist_unfinished(draw_id, &payment_id)).await?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Unlists a bundle as unfinished (its marker stays: the ticket role deletes nothing).
    async fn unlist_unfinished(
        &self,
        draw_id: &DrawId,
        payment_id: &PaymentId,
    ) -> Result<(), StoreError> {
        self.write_meter().single_write(1);
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::unfinished(draw_id, payment_id))))
            .update_expression("REMOVE #list_pk, #list_sk")
            .condition_expression("attribute_exists(#list_pk)")
            .expression_attribute_names("#list_pk", keys::LIST_PK)
            .expression_attribute_names("#list_sk", keys::LIST_SK)
            .send()
            .await;
        if conditional(result)?.is_ok() {
            self.write_meter().index_write(1);
        }
        Ok(())
    }

    async fn write_own_ticket(&self, purchase: &Purchase, number: u64) -> Result<(), StoreError> {
        match self.put_new(encode_ticket(purchase, number)).await? {
            PutNew::Written => Ok(()),
            PutNew::Exists(item)
                if Reader::new(&item).str("payment_id")? == purchase.payment_id.as_str() =>
            {
                Ok(())
            }
            PutNew::Exists(_) => Err(StoreError::Invariant(format!(
                "ticket {number} of {} belongs to another purchase than its bundle {}",
                purchase.draw_id, purchase.payment_id
            ))),
        }
    }

    /// Sets `numbers` of a voided bundle void, takes the bundle off the draw's `voiding` set,
    /// then clears the record's `unfinished`: a repeat that finds it cleared has nothing left.
    pub(crate) async fn finish_void(
        &self,
        purchase: &Purchase,
        numbers: &[u64],
        late: bool,
    ) -> Result<(), StoreError> {
        futures::stream::iter(numbers.iter().copied())
            .map(|number| persist(move || self.void_ticket_item(purchase, number, late)))
            .buffer_unordered(PARALLEL_WRITES)
            .try_collect::<()>()
            .await?;
        persist(|| self.leave_voiding(purchase)).await?;
        persist(|| self.clear_unfinished(purchase, Unfinished::Void { late })).await
    }

    /// Takes a bundle whose void is finished off the draw's `voiding` set.
    async fn leave_voiding(&self, purchase: &Purchase) -> Result<(), StoreError> {
        self.write_meter().single_write(1);
        self.client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(&purchase.draw_id))))
            .update_expression("DELETE #voiding :payment")
            .expression_attribute_names("#voiding", VOIDING)
            .expression_attribute_values(
                ":payment",
                AttributeValue::Ss(vec![purchase.payment_id.as_str().to_owned()]),
            )
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        Ok(())
    }

    async fn void_ticket_item(
        &self,
        purchase: &Purchase,
        number: u64,
        late: bool,
    ) -> Result<(), StoreError> {
        self.write_meter().single_write(1);
        let update = void_ticket(self.table(), purchase, number, late)?;
        let result = self
            .client()
            .update_item()
            .table_name(update.table_name())
            .set_key(Some(update.key().clone()))
            .update_expression(update.update_expression())
            .set_condition_expression(update.condition_expression().map(str::to_owned))
            .set_expression_attribute_names(update.expression_attribute_names().cloned())
            .set_expression_attribute_values(update.expression_attribute_values().cloned())
            .send()
            .await;
        conditional(result)?.map_err(|_| {
            StoreError::Invariant(format!(
                "ticket {number} of {} is not held by its voided bundle {}",
                purchase.draw_id, purchase.payment_id
            ))
        })?;
        self.write_meter().index_write(1);
        Ok(())
    }

    /// Removes the record's `unfinished` once what it names is written; one already gone (a
    /// repeat finished first) is left alone.
    async fn clear_unfinished(
        &self,
        purchase: &Purchase,
        unfinished: Unfinished,
    ) -> Result<(), StoreError> {
        self.write_meter().single_write(1);
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::purchase(
                &purchase.draw_id,
                &purchase.payment_id,
            ))))
            .update_expression("REMOVE #unfinished")
            .condition_expression("#unfinished = :which")
            .expression_attribute_names("#unfinished", UNFINISHED)
            .expression_attribute_values(":which", s(unfinished_value(unfinished)))
            .send()
            .await;
        done_unless_failed(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_fill_what_the_transaction_leaves_and_the_rest_follow() {
        let tickets: Vec<u64> = (0..500).collect();
        let (inline, rest) = split_tickets(&tickets, 7);
        assert_eq!((inline.len(), rest.len()), (93, 407));
        assert_eq!(inline[92] + 1, rest[0]);
        let small: Vec<u64> = (0..20).collect();
        assert_eq!(split_tickets(&small, 7), (&small[..], &[][..]));
        // A bundle gives one place to the item that lists it as unfinished.
        let (inline, rest) = split_bundle(&tickets, 7);
        assert_eq!((inline.len(), rest.len()), (92, 408));
        let exact: Vec<u64> = (0..93).collect();
        assert_eq!(split_bundle(&exact, 7), (&exact[..], &[][..]));
    }
}
