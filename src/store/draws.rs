//! Draw items and stripe cursor items.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use chrono::{DateTime, Utc};

use super::codec::{Item, Reader, key, n, s};
use super::{PARTITION_KEY, Store, StoreError, keys, sdk_error};
use crate::domain::draw::{Draw, DrawConfig, DrawStatus, StripeCounters};
use crate::domain::ids::DrawId;
use crate::domain::permutation::PermutationKey;

/// What the table holds for one stripe. A stripe nobody sold from has no item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StripeState {
    pub counters: StripeCounters,
    pub closed: bool,
}

/// Tickets sold upwards from the stripe's start.
pub(crate) const BOTTOM: &str = "c";
/// Tickets sold downwards from the stripe's end.
pub(crate) const TOP: &str = "t";
pub(crate) const CLOSED: &str = "closed";
/// Stripes handed out so far, on the draw item.
const OPENED: &str = "opened";
/// Stripes known to have run out, on the draw item.
const SOLD_OUT_STRIPES: &str = "sold_out_stripes";

/// The answer to a claim of stripe ends.
#[derive(Debug, Clone)]
pub struct StripeClaim {
    pub draw: Draw,
    /// The first counter value handed out: values below the stripe count are bottom ends,
    /// the next ones top ends.
    pub first: u64,
    pub count: u32,
    /// Stripes that some process has seen run out.
    pub sold_out: Vec<u32>,
}

impl StripeState {
    pub(crate) fn decode(item: &Item) -> Result<Self, StoreError> {
        let reader = Reader::new(item);
        Ok(Self {
            counters: StripeCounters {
                bottom: reader.opt_num(BOTTOM)?.unwrap_or(0),
                top: reader.opt_num(TOP)?.unwrap_or(0),
            },
            closed: reader.flag(CLOSED),
        })
    }

    pub fn sold(&self) -> u64 {
        self.counters.bottom + self.counters.top
    }
}

pub(crate) fn encode_timestamp(at: DateTime<Utc>) -> AttributeValue {
    s(at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

pub(crate) fn parse_timestamp(raw: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(raw)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

fn encode_draw(draw: &Draw) -> Item {
    let mut item = key(keys::draw(&draw.draw_id));
    item.insert("kind".into(), s("draw"));
    item.insert("draw_id".into(), s(draw.draw_id.as_str()));
    if let Some(name) = &draw.name {
        item.insert("name".into(), s(name));
    }
    item.insert("total_tickets".into(), n(draw.config.total_tickets()));
    item.insert("max_per_purchase".into(), n(draw.config.max_per_purchase()));
    item.insert("stripes".into(), n(draw.config.stripes()));
    item.insert(
        "perm_key".into(),
        AttributeValue::B(Blob::new(draw.key.as_bytes())),
    );
    item.insert("status".into(), s(draw.status.as_str()));
    item.insert("created_at".into(), encode_timestamp(draw.created_at));
    item
}

fn decode_draw(item: &Item) -> Result<Draw, StoreError> {
    let r = Reader::new(item);
    let corrupt = |reason: &str| StoreError::Corrupt {
        key: r.str(PARTITION_KEY).unwrap_or("<no key>").to_owned(),
        reason: reason.to_owned(),
    };
    let config = DrawConfig::new(
        r.num("total_tickets")?,
        Some(r.num("max_per_purchase")?),
        Some(r.num("stripes")?),
    )
    .map_err(|e| corrupt(&e.to_string()))?;
    Ok(Draw {
        draw_id: r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        name: r.opt_str("name")?.map(str::to_owned),
        config,
        key: PermutationKey::from_bytes(r.bytes("perm_key")?)
            .ok_or_else(|| corrupt("`perm_key` has the wrong length"))?,
        status: r.parsed("status", DrawStatus::parse)?,
        created_at: r.parsed("created_at", parse_timestamp)?,
    })
}

impl Store {
    /// Writes a new draw; `false` when the id is taken.
    pub async fn insert_draw(&self, draw: &Draw) -> Result<bool, StoreError> {
        self.put_new(encode_draw(draw)).await
    }

    pub async fn get_draw(&self, draw_id: &DrawId) -> Result<Option<Draw>, StoreError> {
        self.get_consistent(keys::draw(draw_id))
            .await?
            .as_ref()
            .map(decode_draw)
            .transpose()
    }

    /// Marks the draw closed; `None` when it does not exist.
    pub async fn mark_draw_closed(&self, draw_id: &DrawId) -> Result<Option<Draw>, StoreError> {
        self.write_meter().single_write();
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .update_expression("SET #status = :closed, closed_at = if_not_exists(closed_at, :now)")
            .condition_expression("attribute_exists(#pk)")
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":closed", s(DrawStatus::Closed.as_str()))
            .expression_attribute_values(":now", encode_timestamp(Utc::now()))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match result {
            Ok(output) => output.attributes().map(decode_draw).transpose(),
            Err(err)
                if matches!(
                    err.as_service_error(),
                    Some(UpdateItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(None)
            }
            Err(err) => Err(sdk_error("UpdateItem", err)),
        }
    }

    /// Flags one stripe closed, so that no purchase can move its cursor any more.
    pub async fn close_stripe(&self, draw_id: &DrawId, stripe: u32) -> Result<(), StoreError> {
        self.write_meter().single_write();
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
    /// request: an atomic counter on the draw item, so no two callers get the same value
    /// (`StripeView` maps values to ends). `sold_out` names stripes the caller has seen run
    /// out; the draw keeps them, and every claim returns all that callers have named.
    /// `None` when the draw does not exist.
    pub async fn claim_stripes(
        &self,
        draw_id: &DrawId,
        count: u32,
        sold_out: &[u32],
    ) -> Result<Option<StripeClaim>, StoreError> {
        self.write_meter().single_write();
        let mut request = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .condition_expression("attribute_exists(#pk)")
            .expression_attribute_names("#pk", PARTITION_KEY)
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
            Ok(output) => output
                .attributes
                .ok_or_else(|| StoreError::Invariant("the claimed draw was not returned".into()))?,
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
    }

    /// Reads the given stripes with strongly consistent batch reads; a stripe without an
    /// item has sold nothing.
    pub async fn read_stripes(
        &self,
        draw_id: &DrawId,
        stripes: &[u32],
    ) -> Result<Vec<(u32, StripeState)>, StoreError> {
        let mut states = Vec::with_capacity(stripes.len());
        for chunk in stripes.chunks(100) {
            let keys = chunk
                .iter()
                .map(|&i| key(keys::stripe(draw_id, i)))
                .collect();
            let mut found = std::collections::HashMap::new();
            for item in self.batch_get(keys).await? {
                found.insert(
                    Reader::new(&item).str(PARTITION_KEY)?.to_owned(),
                    StripeState::decode(&item)?,
                );
            }
            states.extend(chunk.iter().map(|&i| {
                let state = found.remove(&keys::stripe(draw_id, i)).unwrap_or_default();
                (i, state)
            }));
        }
        Ok(states)
    }
}
