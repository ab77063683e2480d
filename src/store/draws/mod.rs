//! Draw items and the reads of their stripes: reading a draw, its status, the claims of
//! stripe ends, surveys.

mod facts;
mod item;
mod journaled;

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};
use jiff::Timestamp;

pub use facts::Published;
pub(crate) use item::{
    FROZEN, LATE_VOIDED, PENDING_REDRAW, PICKS, POSTAL_VOIDED, STATUS, VOIDED, VOIDING, WINNERS,
    decode_draw, encode_draw, encode_winners, winners_of,
};
pub use journaled::{BeaconChange, Freeze};

use super::codec::{Item, Reader, key, n, s, timestamp};
use super::error::{conditional, done_unless_failed, sdk_error};
use super::table::unless_held;
use super::{PARTITION_KEY, Store, StoreError, keys};
use item::{BEACON_FIXED, SOLD_OUT_AT};
use tally_domain::draw::{Draw, DrawStatus};
use tally_domain::ids::DrawId;

use super::stripes::CLOSED;
pub use super::stripes::StripeState;

/// Stripe ends handed out so far, on the draw item.
const OPENED: &str = "opened";
/// Stripes known to have run out, on the draw item.
const SOLD_OUT_STRIPES: &str = "sold_out_stripes";

/// The answer to a claim of stripe ends.
#[derive(Debug, Clone)]
pub struct StripeClaim {
    pub draw: Draw,
    /// The first value of `opened` handed out: values below the stripe count are bottom
    /// ends, the next ones top ends.
    pub first: u64,
    pub count: u32,
    /// Stripes that some process has seen run out.
    pub sold_out: Vec<u32>,
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

impl Store {
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
        self.set_draw_status(draw_id, DrawStatus::Closing).await
    }

    /// The last step of a close, once every stripe is closed.
    pub async fn set_draw_closed(&self, draw_id: &DrawId) -> Result<Option<Draw>, StoreError> {
        self.set_draw_status(draw_id, DrawStatus::Closed).await
    }

    /// Sets the status and, the first time, the time it was reached; the draw as it is now.
    async fn set_draw_status(
        &self,
        draw_id: &DrawId,
        status: DrawStatus,
    ) -> Result<Option<Draw>, StoreError> {
        let closing = status == DrawStatus::Closing;
        let reached_at = if closing { "closing_at" } else { "closed_at" };
        unless_held(|| async {
            let mut request = self
                .update_draw(draw_id)
                .update_expression("SET #status = :status, #at = if_not_exists(#at, :now)")
                .condition_expression("attribute_exists(#pk)")
                .expression_attribute_names("#status", STATUS)
                .expression_attribute_names("#at", reached_at)
                .expression_attribute_values(":status", s(status.as_str()))
                .expression_attribute_values(":now", timestamp(Timestamp::now()))
                .return_values(ReturnValue::AllNew)
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                );
            // A closed draw is returned as it is, not set closing again.
            if closing {
                request = request
                    .condition_expression("attribute_exists(#pk) AND #status <> :closed")
                    .expression_attribute_values(":closed", s(DrawStatus::Closed.as_str()));
            }
            match conditional(request.send().await)? {
                Ok(output) => output.attributes().map(decode_draw).transpose(),
                Err(old) => old.as_ref().map(decode_draw).transpose(),
            }
        })
        .await
    }

    /// Records, once, that a read of the draw's counts found every ticket sold: listings
    /// read the draw item alone. Selling out is for good (a void never puts a ticket back
    /// on sale), so `sold_out_at` is never removed.
    pub async fn record_sold_out(&self, draw_id: &DrawId) -> Result<(), StoreError> {
        let now = timestamp(Timestamp::now());
        unless_held(|| async {
            let result = self
                .update_draw(draw_id)
                .update_expression("SET #attr = :value")
                .condition_expression("attribute_exists(#pk) AND attribute_not_exists(#attr)")
                .expression_attribute_names("#attr", SOLD_OUT_AT)
                .expression_attribute_values(":value", now.clone())
                .send()
                .await;
            // Recorded already, or the draw is gone: either way nothing is left to do.
            done_unless_failed(result)
        })
        .await
    }

    /// Records, once, that a buyer is about to trust the draw's beacon: the first
    /// purchase or hold of each process sends this before its transaction, so no sale
    /// commits before it, and `set_beacon` neither withdraws nor switches a fixed beacon.
    /// Never removed.
    pub async fn fix_beacon(&self, draw_id: &DrawId) -> Result<(), StoreError> {
        unless_held(|| async {
            let result = self
                .update_draw(draw_id)
                .update_expression("SET #fixed = :yes")
                .condition_expression("attribute_exists(#pk) AND attribute_not_exists(#fixed)")
                .expression_attribute_names("#fixed", BEACON_FIXED)
                .expression_attribute_values(":yes", AttributeValue::Bool(true))
                .send()
                .await;
            // Fixed already, or the draw is gone: either way nothing is left to do.
            done_unless_failed(result)
        })
        .await
    }

    /// Flags one stripe closed, so that no purchase can move its cursor any more. A
    /// purchase's transaction may hold the stripe for a moment, busiest while a sale runs.
    pub async fn close_stripe(&self, draw_id: &DrawId, stripe: u32) -> Result<(), StoreError> {
        unless_held(|| async {
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
        })
        .await
    }

    /// Hands the next `count` stripe ends to the caller and reads the draw in the same
    /// request: an atomic count (`opened`) on the draw item, so no two callers get the
    /// same value (`StripeView` maps values to ends). The draw keeps the stripes that
    /// callers have seen run out (`sold_out`), and every claim returns them all. `None`
    /// when the draw does not exist.
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
                .update_expression("ADD #opened :count")
                .condition_expression("attribute_exists(#pk)")
                .expression_attribute_names("#opened", OPENED)
                .expression_attribute_values(":count", n(count))
                .return_values(ReturnValue::AllNew);
            // DynamoDB refuses an empty set.
            if !sold_out.is_empty() {
                let stripes = sold_out.iter().map(u32::to_string).collect();
                request = request
                    .update_expression("ADD #opened :count, #sold_out :stripes")
                    .expression_attribute_names("#sold_out", SOLD_OUT_STRIPES)
                    .expression_attribute_values(":stripes", AttributeValue::Ns(stripes));
            }
            let output = match request.send().await {
                Err(err)
                    if err
                        .as_service_error()
                        .is_some_and(UpdateItemError::is_conditional_check_failed_exception) =>
                {
                    return Ok(None);
                }
                result => result.map_err(|e| sdk_error("UpdateItem", e))?,
            };
            let item = output
                .attributes
                .ok_or_else(|| StoreError::Invariant("the claimed draw was not returned".into()))?;
            let reader = Reader::new(&item);
            Ok(Some(StripeClaim {
                draw: decode_draw(&item)?,
                first: reader.num::<u64>(OPENED)? - u64::from(count),
                count,
                sold_out: reader.num_set(SOLD_OUT_STRIPES)?,
            }))
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

    /// Reads the given stripes with strongly consistent batch reads.
    pub async fn read_stripes(
        &self,
        draw_id: &DrawId,
        stripes: &[u32],
    ) -> Result<Vec<(u32, StripeState)>, StoreError> {
        Ok(self.read_with_stripes(draw_id, stripes, false).await?.1)
    }

    /// Reads how far the draw's `opened` has handed out stripe ends, with the given
    /// stripes: one request for up to 99 stripes, and no transaction, which the claims
    /// that go on meanwhile would cancel. `None`: the draw is gone.
    pub async fn survey(
        &self,
        draw_id: &DrawId,
        stripes: &[u32],
    ) -> Result<Option<Survey>, StoreError> {
        let (draw, stripes) = self.read_with_stripes(draw_id, stripes, true).await?;
        let Some(draw) = draw else {
            return Ok(None);
        };
        let reader = Reader::new(&draw);
        Ok(Some(Survey {
            opened: reader.opt_num(OPENED)?.unwrap_or(0),
            sold_out: reader.num_set(SOLD_OUT_STRIPES)?,
            sell_out_recorded: reader.opt_str(SOLD_OUT_AT)?.is_some(),
            stripes,
        }))
    }

    /// Reads `stripes`, and the draw item if `with_draw`, with strongly consistent batch
    /// reads; a stripe without an item has sold nothing.
    async fn read_with_stripes(
        &self,
        draw_id: &DrawId,
        stripes: &[u32],
        with_draw: bool,
    ) -> Result<(Option<Item>, Vec<(u32, StripeState)>), StoreError> {
        let draw_key = with_draw.then(|| keys::draw(draw_id));
        let stripe_keys = stripes.iter().map(|&i| keys::stripe(draw_id, i));
        let all = draw_key.clone().into_iter().chain(stripe_keys).map(key);
        let mut found = HashMap::new();
        for item in self.batch_get(all.collect()).await? {
            found.insert(Reader::new(&item).str(PARTITION_KEY)?.to_owned(), item);
        }
        let states = stripes
            .iter()
            .map(|&i| {
                let state = match found.remove(&keys::stripe(draw_id, i)) {
                    Some(item) => StripeState::decode(&item)?,
                    None => StripeState::default(),
                };
                Ok((i, state))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok((draw_key.and_then(|k| found.remove(&k)), states))
    }
}
