//! The purchase transaction; purchase and ticket items are encoded in `item.rs`.

mod item;

use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsError;
use aws_sdk_dynamodb::types::{Get, TransactGetItem};

use super::allowances::{Allowance, PayerCap};
use super::bundles::{set_unfinished, split_bundle, unfinished_marker};
use super::codec::key;
use super::draws::StripeState;
use super::error::{build_error, sdk_error};
use super::holds::decode_hold;
use super::limits::{MAX_BATCH_GET_KEYS, MAX_TRANSACTION_ITEMS};
use super::payers::{PayerGate, PayerRecord};
use super::stripes::ChosenWrite;
use super::table::{Verdict, put_if_absent};
use super::transaction::{Roled, RoledOutcome};
use super::{Store, StoreError, keys};
use tally_domain::hold::Hold;
use tally_domain::ids::{DrawId, PaymentId};
use tally_domain::instant::InstantWin;
use tally_domain::purchase::{Channel, Purchase, Ticket};
use tally_domain::stripes::{BUNDLE_STRIPES, ChosenTake, StripeTake};

pub(crate) use item::{
    STATUS, VOID, VOID_REASON, VOIDED_AFTER_FREEZE, VOIDED_AT, decode_purchase, decode_ticket,
    encode_purchase, encode_ticket,
};

// A bundle's commit holds its record, a cursor per stripe it may touch, the payer's
// allowance, the payer's item across draws, an instant-win award and a hold's record,
// with room for tickets.
const _: () = assert!(BUNDLE_STRIPES + 5 < MAX_TRANSACTION_ITEMS);

/// Why DynamoDB cancelled a purchase transaction, item by item.
#[derive(Debug, Default)]
pub struct Cancellation {
    /// The payment id was used before: the purchase on record.
    pub existing: Option<Purchase>,
    /// Stripes whose cursor was not what the write expected, as they are now.
    pub stale_stripes: Vec<(u32, StripeState)>,
    /// Another transaction held one of the items.
    pub conflict: bool,
    pub throttled: bool,
    /// Ticket items that already existed. Never expected: the cursors guard them.
    pub taken_tickets: Vec<u64>,
    /// The payer's allowance failed its condition (no room under a cap, or a hold no
    /// longer counted there): the allowance as it was.
    pub allowance: Option<Allowance>,
    /// The hold of the transaction, as it was, when its condition failed.
    pub hold: Option<Hold>,
    /// The payer's item across draws failed its condition (an exclusion, terms that
    /// moved, no room in a window): the item as it was.
    pub payer: Option<PayerRecord>,
}

/// A purchase record as read after a set of cursors.
#[derive(Debug)]
pub enum PurchaseRead {
    Absent,
    Found(Box<Purchase>),
    /// DynamoDB refused the snapshot because a write to one of its items was in flight.
    Unknown,
}

/// Cursors, and the purchase record as it stood once they were read.
#[derive(Debug)]
pub struct CursorRead {
    pub stripes: Vec<(u32, StripeState)>,
    pub purchase: PurchaseRead,
    /// Requests sent.
    pub requests: u32,
}

/// What an item of a purchase or hold transaction stands for, to read its cancellation
/// reason.
pub(crate) enum Role {
    Record,
    /// The hold a transaction creates, converts or releases.
    Hold,
    Stripe(u32),
    Ticket(u64),
    Allowance,
    /// The payer's item across draws.
    Payer,
    /// The award item keyed by this winning number.
    Award(u64),
    /// The item listing a bundle as unfinished.
    Unfinished,
}

/// The result of one purchase transaction.
#[derive(Debug)]
pub enum Commit {
    Committed,
    Cancelled(Box<Cancellation>),
}

/// Reads a cancelled transaction item by item, by the role each item was added with.
pub(crate) fn read_cancellation(
    verdicts: Vec<(Role, Verdict)>,
) -> Result<Cancellation, StoreError> {
    let mut cancellation = Cancellation::default();
    for (role, verdict) in verdicts {
        let item = match verdict {
            Verdict::Passed => continue,
            Verdict::Conflict => {
                cancellation.conflict = true;
                continue;
            }
            Verdict::Throttled => {
                cancellation.throttled = true;
                continue;
            }
            Verdict::ConditionFailed(item) => item,
        };
        match role {
            Role::Record => {
                let item = item.ok_or_else(|| {
                    StoreError::Invariant("purchase exists but was not returned".into())
                })?;
                cancellation.existing = Some(decode_purchase(&item)?);
            }
            Role::Allowance => {
                let allowance = item.as_ref().map(Allowance::decode).transpose()?;
                cancellation.allowance = Some(allowance.unwrap_or_default());
            }
            Role::Stripe(stripe) => {
                let state = item
                    .as_ref()
                    .map(StripeState::decode)
                    .transpose()?
                    .unwrap_or_default();
                cancellation.stale_stripes.push((stripe, state));
            }
            Role::Ticket(number) | Role::Award(number) => cancellation.taken_tickets.push(number),
            // Written without a condition: it never fails one.
            Role::Unfinished => {}
            Role::Hold => cancellation.hold = item.as_ref().map(decode_hold).transpose()?,
            Role::Payer => {
                let record = item.as_ref().map(PayerRecord::decode).transpose()?;
                cancellation.payer = Some(record.unwrap_or_default());
            }
        }
    }
    Ok(cancellation)
}

impl Store {
    /// One atomic write: the purchase record (the idempotency record), every stripe it
    /// touches (a lucky dip's cursors moved from their expected values, chosen offsets
    /// added ahead of them), one item per ticket, each new, and in a capped draw the
    /// payer's allowance, which must have room for the purchase; in a draw with instant
    /// wins (`wins`: what its tickets win, ascending), its award item, winning or not;
    /// with a payer, the payer's item across draws (`gate`, planned from what the sale
    /// knows of it).
    pub async fn commit_purchase(
        &self,
        purchase: &Purchase,
        takes: &[StripeTake],
        chosen: &[ChosenTake],
        (cap, gate): (Option<PayerCap>, Option<(&PayerGate, &PayerRecord)>),
        wins: Option<&[InstantWin]>,
        now: i64,
    ) -> Result<Commit, StoreError> {
        let first_stripe = takes
            .first()
            .map(|t| t.stripe)
            .or_else(|| chosen.first().map(|c| c.stripe))
            .unwrap_or(0);
        let award = self.award_write(purchase, wins)?;
        let others = 1
            + takes.len()
            + chosen.len()
            + usize::from(cap.is_some())
            + usize::from(gate.is_some());
        let (inline, rest) = split_bundle(&purchase.tickets, others + usize::from(award.is_some()));
        let mut record = encode_purchase(purchase, first_stripe);
        let mut tx = Roled::with_capacity(others + inline.len() + 2);
        if !rest.is_empty() {
            set_unfinished(&mut record);
            tx.push(Role::Unfinished, unfinished_marker(self.table(), purchase)?);
        }
        tx.push(Role::Record, put_if_absent(self.table(), record, true)?);
        // A postal purchase is counted on the first stripe it writes: the draw's postal
        // entries are the sum over its stripes, read with the cursors.
        let mut postal = match purchase.channel {
            Channel::Postal => u64::from(purchase.quantity),
            Channel::Online => 0,
        };
        for take in takes {
            let update =
                self.dip_update(&purchase.draw_id, take, std::mem::take(&mut postal), now)?;
            tx.push(Role::Stripe(take.stripe), update);
        }
        for take in chosen {
            let update = self.choose_update(
                &purchase.draw_id,
                take,
                ChosenWrite::Sell,
                std::mem::take(&mut postal),
                now,
            )?;
            tx.push(Role::Stripe(take.stripe), update);
        }
        for &number in inline {
            let item = put_if_absent(self.table(), encode_ticket(purchase, number), false)?;
            tx.push(Role::Ticket(number), item);
        }
        if let Some(cap) = cap {
            let payer = purchase.payer_id.as_ref().ok_or_else(|| {
                StoreError::Invariant("a capped draw sold to a purchase without payer".into())
            })?;
            let quantity = u64::from(purchase.quantity);
            tx.push(
                Role::Allowance,
                self.take_allowance(&purchase.draw_id, payer, quantity, cap)?,
            );
        }
        if let Some((gate, known)) = gate {
            tx.push(Role::Payer, self.payer_gate(gate, known)?);
        }
        if let Some(write) = award {
            tx.push(Role::Award(write.taken_number()), write.item);
        }
        let verdicts = match self.transact_roled(tx).await? {
            RoledOutcome::Committed => {
                // The record enters the `list` index, and the `payer` index when it has one;
                // a bundle's marker enters the `list` index.
                self.write_meter().index_write(
                    1 + u64::from(purchase.payer_id.is_some()) + u64::from(!rest.is_empty()),
                );
                if !rest.is_empty() {
                    self.finish_tickets(purchase, rest).await?;
                }
                return Ok(Commit::Committed);
            }
            RoledOutcome::Busy => {
                return Ok(Commit::Cancelled(Box::new(Cancellation {
                    conflict: true,
                    ..Cancellation::default()
                })));
            }
            RoledOutcome::Cancelled(verdicts) => verdicts,
        };
        Ok(Commit::Cancelled(Box::new(read_cancellation(verdicts)?)))
    }

    /// Reads the cursors of `stripes`, then the purchase record of `payment_id` at a point
    /// in time no earlier than any of those cursor reads: the last cursors and the record
    /// share one `TransactGetItems` (a single point in time), the cursors before them are
    /// read first with batch reads. So a refusal resting on these cursors may trust that the
    /// record was absent. A stripe without an item has sold nothing.
    pub async fn read_cursors_then_purchase(
        &self,
        draw_id: &DrawId,
        stripes: &[u32],
        payment_id: &PaymentId,
    ) -> Result<CursorRead, StoreError> {
        let split = stripes.len().saturating_sub(MAX_TRANSACTION_ITEMS - 1);
        let (before, last) = stripes.split_at(split);
        let mut states = self.read_stripes(draw_id, before).await?;
        let requests = before.len().div_ceil(MAX_BATCH_GET_KEYS) as u32 + 1;
        let purchase_key = keys::purchase(draw_id, payment_id);
        let gets = std::iter::once(purchase_key)
            .chain(last.iter().map(|&i| keys::stripe(draw_id, i)))
            .map(|pk| {
                Get::builder()
                    .table_name(self.table())
                    .set_key(Some(key(pk)))
                    .build()
                    .map(|get| TransactGetItem::builder().get(get).build())
                    .map_err(build_error)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let result = self
            .client()
            .transact_get_items()
            .set_transact_items(Some(gets))
            .send()
            .await;
        let output = match result {
            Ok(output) => output,
            Err(err)
                if matches!(
                    err.as_service_error(),
                    Some(TransactGetItemsError::TransactionCanceledException(_))
                ) =>
            {
                states.extend(self.read_stripes(draw_id, last).await?);
                return Ok(CursorRead {
                    stripes: states,
                    purchase: PurchaseRead::Unknown,
                    requests: requests + last.len().div_ceil(MAX_BATCH_GET_KEYS) as u32,
                });
            }
            Err(err) => return Err(sdk_error("TransactGetItems", err)),
        };
        if output.responses().len() != 1 + last.len() {
            return Err(StoreError::Invariant(format!(
                "TransactGetItems answered {} of {} items",
                output.responses().len(),
                1 + last.len()
            )));
        }
        let mut responses = output.responses().iter().map(|r| r.item());
        let purchase = match responses.next().flatten() {
            Some(item) => PurchaseRead::Found(Box::new(decode_purchase(item)?)),
            None => PurchaseRead::Absent,
        };
        for (&stripe, item) in last.iter().zip(responses) {
            let state = item.map(StripeState::decode).transpose()?;
            states.push((stripe, state.unwrap_or_default()));
        }
        Ok(CursorRead {
            stripes: states,
            purchase,
            requests,
        })
    }

    pub async fn get_purchase(
        &self,
        draw_id: &DrawId,
        payment_id: &PaymentId,
    ) -> Result<Option<Purchase>, StoreError> {
        self.get_consistent(keys::purchase(draw_id, payment_id))
            .await?
            .as_ref()
            .map(decode_purchase)
            .transpose()
    }

    pub async fn get_ticket(
        &self,
        draw_id: &DrawId,
        number: u64,
    ) -> Result<Option<Ticket>, StoreError> {
        self.get_consistent(keys::ticket(draw_id, number))
            .await?
            .as_ref()
            .map(decode_ticket)
            .transpose()
    }
}
