//! Hold records, and the transactions that create, convert and release a hold. Each is
//! one transaction: the hold's record, the stripes its numbers lie in, and the payer's
//! allowance, which counts the payer's live holds; a conversion adds the purchase record
//! and its tickets.
//!
//! A hold's record is kept, like a purchase record, and the table has no TTL: a payment
//! delivered again converts by reading the hold first, and the allowance entry of a hold
//! id is written without a condition that it is absent, so a record that vanished would
//! answer a repeat `404` and let a new hold of its id overwrite the payer's entry. Records
//! written before carry a `ttl` attribute that nothing reads.

use aws_sdk_dynamodb::types::builders::UpdateBuilder;
use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use tally_domain::time::Epoch;

use super::allowances::{CountedEnd, HoldCaps};
use super::bundles::{set_unfinished, split_bundle, unfinished_marker};
use super::codec::{Item, Reader, key, n, parse_timestamp, s, timestamp};
use super::error::build_error;
use super::payers::{PayerGate, PayerRecord};
use super::purchases::{Commit, Role, encode_purchase, encode_ticket, read_cancellation};
use super::stripes::ChosenWrite;
use super::table::put_if_absent;
use super::transaction::{Roled, RoledOutcome};
use super::{Store, StoreError, keys, kind};
use tally_domain::hold::{Hold, HoldEnd};
use tally_domain::ids::{DrawId, HoldId, PayerId, PaymentId};
use tally_domain::instant::InstantWin;
use tally_domain::purchase::Purchase;
use tally_domain::stripes::ChosenTake;

const END: &str = "end";
const OPEN: &str = "open";
const RELEASED: &str = "released";
const CONVERTED: &str = "converted";
/// The deadline in Unix ms, which conditions compare with the writer's clock.
const EXPIRES_MS: &str = "expires_ms";

pub(crate) fn encode_hold(hold: &Hold) -> Item {
    let mut item = key(keys::hold(&hold.draw_id, &hold.hold_id));
    item.insert(kind::ATTRIBUTE.into(), s(kind::HOLD));
    item.insert("draw_id".into(), s(hold.draw_id.as_str()));
    item.insert("hold_id".into(), s(hold.hold_id.as_str()));
    item.insert("payer_id".into(), s(hold.payer_id.as_str()));
    item.insert(
        "tickets".into(),
        AttributeValue::L(hold.tickets.iter().map(n).collect()),
    );
    if hold.chosen {
        item.insert("chosen".into(), AttributeValue::Bool(true));
    }
    item.insert("fingerprint".into(), s(&hold.fingerprint));
    item.insert("created_at".into(), timestamp(hold.created_at));
    item.insert("expires_at".into(), timestamp(hold.expires_at));
    item.insert(EXPIRES_MS.into(), n(hold.expires_at.epoch_millis()));
    item.insert(END.into(), s(OPEN));
    item
}

pub(crate) fn decode_hold(item: &Item) -> Result<Hold, StoreError> {
    let r = Reader::new(item);
    let end = match r.str(END)? {
        OPEN => HoldEnd::Open,
        RELEASED => HoldEnd::Released,
        CONVERTED => HoldEnd::Converted(r.parsed("payment_id", |v| PaymentId::parse(v).ok())?),
        other => return Err(r.corrupt(format!("unknown hold end `{other}`"))),
    };
    Ok(Hold {
        draw_id: r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        hold_id: r.parsed("hold_id", |v| HoldId::parse(v).ok())?,
        payer_id: PayerId::stored(r.str("payer_id")?),
        tickets: r.num_list("tickets")?,
        chosen: r.flag("chosen"),
        fingerprint: r.str("fingerprint")?.to_owned(),
        created_at: r.parsed("created_at", parse_timestamp)?,
        expires_at: r.parsed("expires_at", parse_timestamp)?,
        end,
    })
}

/// Items of a hold transaction, each with its role.
struct HoldTransaction(Roled<Role>);

impl HoldTransaction {
    fn new() -> Self {
        Self(Roled::with_capacity(8))
    }

    fn add(&mut self, role: Role, item: TransactWriteItem) {
        self.0.push(role, item);
    }

    /// The hold's record, updated by `update` while it lives, then `write` on each
    /// stripe of `takes`.
    fn hold_and_stripes(
        &mut self,
        store: &Store,
        hold: &Hold,
        update: UpdateBuilder,
        takes: &[ChosenTake],
        write: ChosenWrite,
        now: i64,
    ) -> Result<(), StoreError> {
        let update = update.build().map_err(build_error)?;
        self.add(
            Role::Hold,
            TransactWriteItem::builder().update(update).build(),
        );
        for take in takes {
            self.add(
                Role::Stripe(take.stripe),
                store.choose_update(&hold.draw_id, take, write, 0, now)?,
            );
        }
        Ok(())
    }

    /// The hold's count ended on its payer's allowance, as `ended` says.
    fn end_count(
        &mut self,
        store: &Store,
        hold: &Hold,
        ended: CountedEnd,
    ) -> Result<(), StoreError> {
        let quantity = hold.tickets.len() as u64;
        let item = store.end_counted_hold(
            &hold.draw_id,
            &hold.payer_id,
            &hold.hold_id,
            quantity,
            ended,
        )?;
        self.add(Role::Allowance, item);
        Ok(())
    }

    async fn send(self, store: &Store, index_writes: u64) -> Result<Commit, StoreError> {
        match store.transact_roled(self.0).await? {
            RoledOutcome::Committed => {
                store.write_meter().index_write(index_writes);
                Ok(Commit::Committed)
            }
            RoledOutcome::Busy => Ok(Commit::Cancelled(Box::new(
                super::purchases::Cancellation {
                    conflict: true,
                    ..Default::default()
                },
            ))),
            RoledOutcome::Cancelled(verdicts) => {
                Ok(Commit::Cancelled(Box::new(read_cancellation(verdicts)?)))
            }
        }
    }
}

impl Store {
    /// Writes a new hold: its record (the idempotency record), every stripe it holds
    /// numbers in (each number free at `now`, the writer's clock in Unix ms) and the
    /// payer's allowance, which must have room for it under `caps`.
    pub async fn commit_hold(
        &self,
        hold: &Hold,
        takes: &[ChosenTake],
        caps: HoldCaps,
        (gate, known): (&PayerGate, &PayerRecord),
        now: i64,
    ) -> Result<Commit, StoreError> {
        let end = hold.expires_at.epoch_millis();
        let mut transaction = HoldTransaction::new();
        transaction.add(
            Role::Hold,
            put_if_absent(self.table(), encode_hold(hold), true)?,
        );
        for take in takes {
            transaction.add(
                Role::Stripe(take.stripe),
                self.choose_update(&hold.draw_id, take, ChosenWrite::Hold { end }, 0, now)?,
            );
        }
        transaction.add(
            Role::Allowance,
            self.take_hold_allowance(
                &hold.draw_id,
                &hold.payer_id,
                (&hold.hold_id, end),
                hold.tickets.len() as u64,
                caps,
            )?,
        );
        transaction.add(Role::Payer, self.payer_gate(gate, known)?);
        transaction.send(self, 0).await
    }

    pub async fn get_hold(
        &self,
        draw_id: &DrawId,
        hold_id: &HoldId,
    ) -> Result<Option<Hold>, StoreError> {
        self.get_consistent(keys::hold(draw_id, hold_id))
            .await?
            .as_ref()
            .map(decode_hold)
            .transpose()
    }

    /// Sells a live hold's numbers to `purchase`, at once: the purchase record, the hold
    /// (open, its deadline after `now`, the writer's clock in Unix ms) marked converted,
    /// each number taken from the hold that holds it, one ticket item each, and the hold
    /// off the payer's allowance (in a capped draw its tickets stay counted, as bought);
    /// in a draw with instant wins (`wins`: what its numbers win), its award item, winning
    /// or not.
    pub async fn convert_hold(
        &self,
        purchase: &Purchase,
        hold: &Hold,
        takes: &[ChosenTake],
        (gate, known): (&PayerGate, &PayerRecord),
        wins: Option<&[InstantWin]>,
        now: i64,
    ) -> Result<Commit, StoreError> {
        let end = hold.expires_at.epoch_millis();
        let first_stripe = takes.first().map_or(0, |t| t.stripe);
        let award = self.award_write(purchase, wins)?;
        // The record, the hold, the allowance and the payer's item.
        let others = 4 + takes.len() + usize::from(award.is_some());
        let (inline, rest) = split_bundle(&purchase.tickets, others);
        let mut record = encode_purchase(purchase, first_stripe);
        let mut transaction = HoldTransaction::new();
        if !rest.is_empty() {
            set_unfinished(&mut record);
            transaction.add(Role::Unfinished, unfinished_marker(self.table(), purchase)?);
        }
        transaction.add(Role::Record, put_if_absent(self.table(), record, true)?);
        let update = self
            .hold_update(hold, now)
            .update_expression("SET #end = :converted, #payment = :payment")
            .expression_attribute_values(":converted", s(CONVERTED))
            .expression_attribute_names("#payment", "payment_id")
            .expression_attribute_values(":payment", s(purchase.payment_id.as_str()));
        let write = ChosenWrite::Convert { end };
        transaction.hold_and_stripes(self, hold, update, takes, write, now)?;
        for &number in inline {
            transaction.add(
                Role::Ticket(number),
                put_if_absent(self.table(), encode_ticket(purchase, number), false)?,
            );
        }
        transaction.end_count(self, hold, CountedEnd::Converted)?;
        transaction.add(Role::Payer, self.payer_gate(gate, known)?);
        if let Some(write) = award {
            transaction.add(Role::Award(write.taken_number()), write.item);
        }
        // The record's index entries, and the marker's.
        let indexed = 1 + u64::from(purchase.payer_id.is_some()) + u64::from(!rest.is_empty());
        let commit = transaction.send(self, indexed).await?;
        if let (Commit::Committed, false) = (&commit, rest.is_empty()) {
            self.finish_tickets(purchase, rest).await?;
        }
        Ok(commit)
    }

    /// Releases a live hold at once: the hold (open, its deadline after `now`) marked
    /// released, each number given back by the hold that holds it, and its count given
    /// back to the payer's allowance (`counted`: `None` once the allowance gave it back
    /// as ended).
    pub async fn release_hold(
        &self,
        hold: &Hold,
        takes: &[ChosenTake],
        counted: Option<CountedEnd>,
        now: i64,
    ) -> Result<Commit, StoreError> {
        let end = hold.expires_at.epoch_millis();
        let mut transaction = HoldTransaction::new();
        let update = self
            .hold_update(hold, now)
            .update_expression("SET #end = :released")
            .expression_attribute_values(":released", s(RELEASED));
        let write = ChosenWrite::Release { end };
        transaction.hold_and_stripes(self, hold, update, takes, write, now)?;
        if let Some(ended) = counted {
            transaction.end_count(self, hold, ended)?;
        }
        transaction.send(self, 0).await
    }

    /// An update of a hold that lives at `now`: open, its deadline after the writer's
    /// clock.
    fn hold_update(
        &self,
        hold: &Hold,
        now: i64,
    ) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::hold(&hold.draw_id, &hold.hold_id))))
            .condition_expression("#end = :open AND #expires > :now")
            .expression_attribute_names("#end", END)
            .expression_attribute_names("#expires", EXPIRES_MS)
            .expression_attribute_values(":open", s(OPEN))
            .expression_attribute_values(":now", n(now))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
    }
}
