//! Draw items and stripe cursor items: creating and reading a draw, its status, the
//! claims of stripe ends, the cursors.

mod beacon;
mod facts;
mod freeze;
mod item;

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};
use jiff::Timestamp;

pub use beacon::BeaconChange;
pub use facts::Published;
pub use freeze::Freeze;
pub(crate) use item::{
    FROZEN, LATE_VOIDED, PENDING_REDRAW, PICKS, POSTAL_VOIDED, STATUS, VOIDED, VOIDING, WINNERS,
    decode_draw, encode_draw, encode_winners, winners_of,
};

use super::codec::{Item, Reader, key, n, s, timestamp};
use super::error::{done_unless_failed, sdk_error};
use super::table::{Inserted, Verdict, put_if_absent, unless_held};
use super::transaction::{Roled, RoledOutcome};
use super::{PARTITION_KEY, Store, StoreError, keys};
use item::{PERM_KEY, SOLD_OUT_AT};
use tally_domain::draw::{Draw, DrawStatus};
use tally_domain::ids::DrawId;
use tally_domain::journal::Draft;

use super::stripes::CLOSED;
pub use super::stripes::StripeState;

/// Stripes handed out so far, on the draw item.
const OPENED: &str = "opened";
/// Stripes known to have run out, on the draw item.
const SOLD_OUT_STRIPES: &str = "sold_out_stripes";

/// The answer to a claim of stripe ends.
#[derive(Debug, Clone)]
pub struct StripeClaim {
    pub draw: Draw,
    /// The first value of `opened` handed out: values below the stripe count are bottom ends,
    /// the next ones top ends.
    pub first: u64,
    pub count: u32,
    /// Stripes that some process has seen run out.
    pub sold_out: Vec<u32>,
}

impl Store {
    /// Writes a new draw with the operator's journal `entry` in the same transaction, or
    /// returns the draw that has the id (and journals nothing). An existing draw with this
    /// draw's own permutation key is this call's own write, re-sent after a lost answer.
    pub async fn insert_draw(
        &self,
        draw: &Draw,
        entry: &Draft,
    ) -> Result<Inserted<Draw>, StoreError> {
        unless_held(|| self.insert_draw_once(draw, entry)).await
    }

    async fn insert_draw_once(
        &self,
        draw: &Draw,
        entry: &Draft,
    ) -> Result<Inserted<Draw>, StoreError> {
        let item = encode_draw(draw)?;
        let mine = item.get(PERM_KEY).cloned();
        let mut tx = Roled::with_capacity(1);
        tx.push((), put_if_absent(self.table(), item, true)?);
        // The draw enters the `list` index.
        tx.add_index_updates(1);
        match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => Ok(Inserted::New),
            RoledOutcome::Busy => Err(StoreError::Contention { attempts: 1 }),
            RoledOutcome::Cancelled(verdicts) => match verdicts.into_iter().next() {
                Some(((), Verdict::ConditionFailed(Some(existing)))) => {
                    if existing.get(PERM_KEY) == mine.as_ref() {
                        Ok(Inserted::New)
                    } else {
                        Ok(Inserted::Existing(decode_draw(&existing)?))
                    }
                }
                _ => Err(StoreError::Contention { attempts: 1 }),
            },
        }
    }

    pub async fn get_draw(&self, draw_id: &DrawId) -> Result<Option<Draw>, StoreError> {
        self.get_consistent(keys::draw(draw_id))
            .await?
            .as_ref()
            .map(decode_draw)
            .transpose()
    }

    /// The first step of a close: the draw reads `closing` until every stripe is closed.
    /// A closed draw stays closed. `None` when the draw does not exist.
    pub async fn set_draw_closing(&self, draw_id: &DrawId) -> Result<Option<Draw>, StoreError> {
        self.set_draw_status(
            draw_id,
            DrawStatus::Closing,
            "closing_at",
            Some(DrawStatus::Closed),
        )
        .await
    }

    /// The last step of a close, once every stripe is closed.
    pub async fn set_draw_closed(&self, draw_id: &DrawId) -> Result<Option<Draw>, StoreError> {
        self.set_draw_status(draw_id, DrawStatus::Closed, "closed_at", None)
            .await
    }

    /// Sets the status and, the first time, the time it was reached, unless the draw has
    /// status `unless` already (then it is returned as it is).
    async fn set_draw_status(
        &self,
        draw_id: &DrawId,
        status: DrawStatus,
        reached_at: &str,
        unless: Option<DrawStatus>,
    ) -> Result<Option<Draw>, StoreError> {
        unless_held(|| async {
            let mut request = self
                .update_draw(draw_id)
                .update_expression("SET #status = :status, #at = if_not_exists(#at, :now)")
                .expression_attribute_names("#status", STATUS)
                .expression_attribute_names("#at", reached_at)
                .expression_attribute_values(":status", s(status.as_str()))
                .expression_attribute_values(":now", timestamp(Timestamp::now()))
                .return_values(ReturnValue::AllNew)
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                );
            request = match unless {
                Some(kept) => request
                    .condition_expression("attribute_exists(#pk) AND #status <> :kept")
                    .expression_attribute_values(":kept", s(kept.as_str())),
                None => request.condition_expression("attribute_exists(#pk)"),
            };
            match request.send().await {
                Ok(output) => output.attributes().map(decode_draw).transpose(),
                Err(err) => match err.as_service_error() {
                    Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                        failed.item().map(decode_draw).transpose()
                    }
                    _ => Err(sdk_error("UpdateItem", err)),
                },
            }
        })
        .await
    }

    /// Records, once, that a read of the draw's counts found every ticket sold: listings
    /// read the draw item alone. Selling out is for good (a void never puts a ticket back
    /// on sale), so `sold_out_at` is never removed.
    pub async fn record_sold_out(&self, draw_id: &DrawId) -> Result<(), StoreError> {
        self.set_once(draw_id, SOLD_OUT_AT, timestamp(Timestamp::now()))
            .await
    }

    /// Flags one stripe closed, so that no purchase can move its cursor any more.
    pub async fn close_stripe(&self, draw_id: &DrawId, stripe: u32) -> Result<(), StoreError> {
        self.write_meter().single_write(1);
        self.client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::stripe(draw_id, stripe))))
            .update_expression("SET #closed = :yes")
            .expression_attribute_names("#closed", CLOSED)
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        Ok(())
    }

    /// Hands the next `count` stripe ends to the caller and reads the draw in the same
    /// request: an atomic count (`opened`) on the draw item, so no two callers get the same value
    /// (`StripeView` maps values to ends). `sold_out` names stripes the caller has seen run
    /// out; the draw keeps them, and every claim returns all that callers have named.
    /// `None` when the draw does not exist.
    pub async fn claim_stripes(
        &self,
        draw_id: &DrawId,
        count: u32,
        sold_out: &[u32],
    ) -> Result<Option<StripeClaim>, StoreError> {
        // A void or the winners may hold the draw item in a transaction for a moment.
        unless_held(|| async {
            let mut request = self
                .update_draw(draw_id)
                .condition_expression("attribute_exists(#pk)")
                .expression_attribute_names("#opened", OPENED)
                .expression_attribute_values(":count", n(count))
                .return_values(ReturnValue::AllNew);
            request = if sold_out.is_empty() {
                request.update_expression("ADD #opened :count")
            } else {
                request
                    .update_expression("ADD #opened :count, #sold_out :stripes")
                    .expression_attribute_names("#sold_out", SOLD_OUT_STRIPES)
                    .expression_attribute_values(
                        ":stripes",
                        AttributeValue::Ns(sold_out.iter().map(u32::to_string).collect()),
                    )
            };
            let item = match request.send().await {
                Ok(output) => output.attributes.ok_or_else(|| {
                    StoreError::Invariant("the claimed draw was not returned".into())
                })?,
                Err(err)
                    if matches!(
                        err.as_service_error(),
                        Some(UpdateItemError::ConditionalCheckFailedException(_))
                    ) =>
                {
                    return Ok(None);
                }
                Err(err) => return Err(sdk_error("UpdateItem", err)),
            };
            let reader = Reader::new(&item);
            let opened: u64 = reader.num(OPENED)?;
            Ok(Some(StripeClaim {
                draw: decode_draw(&item)?,
                first: opened - u64::from(count),
                count,
                sold_out: reader.num_set(SOLD_OUT_STRIPES)?,
            }))
        })
        .await
    }

    /// Sets the attribute `name` on the draw item unless it is there: a failed condition means
    /// it is there already, or the draw is gone, and either way nothing is left to do.
    async fn set_once(
        &self,
        draw_id: &DrawId,
        name: &str,
        value: AttributeValue,
    ) -> Result<(), StoreError> {
        unless_held(|| async {
            let result = self
                .update_draw(draw_id)
                .update_expression("SET #attr = :value")
                .condition_expression("attribute_exists(#pk) AND attribute_not_exists(#attr)")
                .expression_attribute_names("#attr", name)
                .expression_attribute_values(":value", value.clone())
                .send()
                .await;
            done_unless_failed(result)
        })
        .await
    }

    /// An update of the draw item (`#pk` names its key), metered as one write.
    fn update_draw(&self, draw_id: &DrawId) -> UpdateItemFluentBuilder {
        self.write_meter().single_write(1);
        self.client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .expression_attribute_names("#pk", PARTITION_KEY)
    }

    /// Reads the given stripes with strongly consistent batch reads; a stripe without an
    /// item has sold nothing.
    pub async fn read_stripes(
        &self,
        draw_id: &DrawId,
        stripes: &[u32],
    ) -> Result<Vec<(u32, StripeState)>, StoreError> {
        let mut found = self.read_by_key(draw_id, stripes, None).await?;
        stripe_states(draw_id, stripes, &mut found)
    }

    /// Reads how far the draw's `opened` has handed out stripe ends, with the given
    /// stripes, in strongly consistent batch reads: one request for up to 99 stripes, and
    /// no transaction, which the claims that go on meanwhile would cancel. `None`: the
    /// draw is gone.
    pub async fn survey(
        &self,
        draw_id: &DrawId,
        stripes: &[u32],
    ) -> Result<Option<Survey>, StoreError> {
        let draw_key = keys::draw(draw_id);
        let mut found = self
            .read_by_key(draw_id, stripes, Some(draw_key.clone()))
            .await?;
        let Some(draw) = found.remove(&draw_key) else {
            return Ok(None);
        };
        let reader = Reader::new(&draw);
        Ok(Some(Survey {
            opened: reader.opt_num(OPENED)?.unwrap_or(0),
            sold_out: reader.num_set(SOLD_OUT_STRIPES)?,
            sell_out_recorded: reader.opt_str(SOLD_OUT_AT)?.is_some(),
            stripes: stripe_states(draw_id, stripes, &mut found)?,
        }))
    }

    async fn read_by_key(
        &self,
        draw_id: &DrawId,
        stripes: &[u32],
        draw_key: Option<String>,
    ) -> Result<HashMap<String, Item>, StoreError> {
        let keys = draw_key
            .into_iter()
            .chain(stripes.iter().map(|&i| keys::stripe(draw_id, i)))
            .map(key)
            .collect();
        let mut found = HashMap::new();
        for item in self.batch_get(keys).await? {
            found.insert(Reader::new(&item).str(PARTITION_KEY)?.to_owned(), item);
        }
        Ok(found)
    }
}

/// What a survey of a draw found.
#[derive(Debug, Clone)]
pub struct Survey {
    /// Stripe ends handed out by the draw's `opened`.
    pub opened: u64,
    /// Stripes that some process has seen run out.
    pub sold_out: Vec<u32>,
    /// Whether the draw's sell-out is recorded (`sold_out_at`).
    pub sell_out_recorded: bool,
    pub stripes: Vec<(u32, StripeState)>,
}

/// The states of `stripes` among the items read; a stripe without an item has sold
/// nothing.
fn stripe_states(
    draw_id: &DrawId,
    stripes: &[u32],
    found: &mut HashMap<String, Item>,
) -> Result<Vec<(u32, StripeState)>, StoreError> {
    stripes
        .iter()
        .map(|&i| {
            let state = match found.remove(&keys::stripe(draw_id, i)) {
                Some(item) => StripeState::decode(&item)?,
                None => StripeState::default(),
            };
            Ok((i, state))
        })
        .collect()
}
