//! Draw items and stripe cursor items.

use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure};
use chrono::{DateTime, Utc};

use std::collections::HashMap;

use super::codec::{Item, Reader, key, n, parse_timestamp, s, timestamp};
use super::error::sdk_error;
use super::table::{Inserted, PutNew, unless_held};
use super::{PARTITION_KEY, Store, StoreError, keys};
use crate::domain::draw::{Draw, DrawConfig, DrawStatus, WinnersRecord};
use crate::domain::ids::DrawId;
use crate::domain::permutation::PermutationKey;
use crate::domain::schedule::Schedule;
use crate::domain::seed::DrawSeed;
use crate::domain::stripes::StripeCounters;

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
/// The draw's secret permutation key, random per draw: also what tells a create its own
/// earlier write.
const PERM_KEY: &str = "perm_key";
/// The draw's secret seed, revealed with the winners.
const SEED: &str = "seed";
pub(crate) const STATUS: &str = "status";
pub(crate) const BEACON: &str = "beacon";
const CREATED_BEACON: &str = "created_beacon";
pub(crate) const CLOSES_AT: &str = "closes_at";
/// Tickets of voided purchases.
pub(crate) const VOIDED: &str = "voided";
/// What the draw records of its winners (a map), once drawn.
pub(crate) const WINNERS: &str = "winners";
/// Picks made: the prizes, then one per redraw.
pub(crate) const PICKS: &str = "picks";
/// Stripes handed out so far, on the draw item.
const OPENED: &str = "opened";
/// Stripes known to have run out, on the draw item.
const SOLD_OUT_STRIPES: &str = "sold_out_stripes";

/// What a change of the beacon found.
#[derive(Debug)]
pub enum BeaconChange {
    /// Recorded: the draw as it is now.
    Set(Draw),
    /// The draw no longer sells: the draw as it is.
    Refused(Draw),
}

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
    if let Some(max) = draw.config.max_per_payer() {
        item.insert("max_per_payer".into(), n(max));
    }
    if let Some(at) = draw.schedule.opens_at() {
        item.insert("opens_at".into(), timestamp(at));
    }
    if let Some(at) = draw.schedule.closes_at() {
        item.insert(CLOSES_AT.into(), timestamp(at));
    }
    if let Some(beacon) = &draw.beacon {
        item.insert(BEACON.into(), s(beacon));
    }
    if let Some(beacon) = &draw.created_beacon {
        item.insert(CREATED_BEACON.into(), s(beacon));
    }
    item.insert(
        PERM_KEY.into(),
        AttributeValue::B(Blob::new(draw.key.as_bytes())),
    );
    item.insert(
        SEED.into(),
        AttributeValue::B(Blob::new(draw.seed.as_bytes().as_slice())),
    );
    item.insert(STATUS.into(), s(draw.status.as_str()));
    let created_at = timestamp(draw.created_at);
    item.insert(keys::LIST_PK.into(), s(keys::draw_list()));
    item.insert(
        keys::LIST_SK.into(),
        s(keys::newest_first(
            created_at.as_s().map_or("", String::as_str),
            draw.draw_id.as_str(),
        )),
    );
    item.insert("created_at".into(), created_at);
    item
}

pub(crate) fn encode_winners(record: &WinnersRecord) -> AttributeValue {
    let mut map = HashMap::from([
        ("prizes".to_owned(), n(record.prizes)),
        ("eligible_count".to_owned(), n(record.eligible_count)),
        ("eligible_digest".to_owned(), s(&record.eligible_digest)),
        ("drawn_at".to_owned(), timestamp(record.drawn_at)),
    ]);
    if let Some(value) = &record.beacon_value {
        map.insert("beacon_value".to_owned(), s(value));
    }
    AttributeValue::M(map)
}

fn decode_winners(draw: &Reader, picks: u64) -> Result<Option<WinnersRecord>, StoreError> {
    let Some(map) = draw.opt_map(WINNERS)? else {
        return Ok(None);
    };
    let r = Reader::new(map);
    Ok(Some(WinnersRecord {
        prizes: r.num("prizes")?,
        beacon_value: r.opt_str("beacon_value")?.map(str::to_owned),
        eligible_count: r.num("eligible_count")?,
        eligible_digest: r.str("eligible_digest")?.to_owned(),
        picks,
        drawn_at: r.parsed("drawn_at", parse_timestamp)?,
    }))
}

pub(crate) fn decode_draw(item: &Item) -> Result<Draw, StoreError> {
    let r = Reader::new(item);
    let corrupt = |reason: &str| StoreError::Corrupt {
        key: r.str(PARTITION_KEY).unwrap_or("<no key>").to_owned(),
        reason: reason.to_owned(),
    };
    let max_per_payer = r.opt_num("max_per_payer")?;
    let config = DrawConfig::new(
        r.num("total_tickets")?,
        Some(r.num("max_per_purchase")?),
        Some(r.num("stripes")?),
    )
    .and_then(|c| c.with_max_per_payer(max_per_payer))
    .map_err(|e| corrupt(&e.to_string()))?;
    let time = |name| {
        r.opt_str(name)?
            .map(|v| parse_timestamp(v).ok_or_else(|| corrupt(&format!("`{name}` is not a time"))))
            .transpose()
    };
    let schedule =
        Schedule::new(time("opens_at")?, time(CLOSES_AT)?).map_err(|e| corrupt(&e.to_string()))?;
    Ok(Draw {
        draw_id: r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        name: r.opt_str("name")?.map(str::to_owned),
        config,
        schedule,
        beacon: r.opt_str(BEACON)?.map(str::to_owned),
        created_beacon: r.opt_str(CREATED_BEACON)?.map(str::to_owned),
        key: PermutationKey::from_bytes(r.bytes(PERM_KEY)?)
            .ok_or_else(|| corrupt("`perm_key` has the wrong length"))?,
        seed: DrawSeed::from_bytes(r.bytes(SEED)?)
            .ok_or_else(|| corrupt("`seed` has the wrong length"))?,
        status: r.parsed(STATUS, DrawStatus::parse)?,
        voided: r.opt_num(VOIDED)?.unwrap_or(0),
        winners: decode_winners(&r, r.opt_num(PICKS)?.unwrap_or(0))?,
        created_at: r.parsed("created_at", parse_timestamp)?,
    })
}

impl Store {
    /// Writes a new draw, or returns the draw that has the id.
    pub async fn insert_draw(&self, draw: &Draw) -> Result<Inserted<Draw>, StoreError> {
        match self.insert_once(encode_draw(draw), PERM_KEY).await? {
            PutNew::Written => Ok(Inserted::New),
            PutNew::Exists(item) => Ok(Inserted::Existing(decode_draw(&item)?)),
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
    pub async fn mark_draw_closing(&self, draw_id: &DrawId) -> Result<Option<Draw>, StoreError> {
        self.set_draw_status(
            draw_id,
            DrawStatus::Closing,
            "closing_at",
            Some(DrawStatus::Closed),
        )
        .await
    }

    /// The last step of a close, once every stripe is closed.
    pub async fn mark_draw_closed(&self, draw_id: &DrawId) -> Result<Option<Draw>, StoreError> {
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
        unless_held(|| self.set_draw_status_once(draw_id, status, reached_at, unless)).await
    }

    async fn set_draw_status_once(
        &self,
        draw_id: &DrawId,
        status: DrawStatus,
        reached_at: &str,
        unless: Option<DrawStatus>,
    ) -> Result<Option<Draw>, StoreError> {
        self.write_meter().single_write();
        let mut request = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .update_expression("SET #status = :status, #at = if_not_exists(#at, :now)")
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#at", reached_at)
            .expression_attribute_values(":status", s(status.as_str()))
            .expression_attribute_values(":now", timestamp(Utc::now()))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
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
    }

    /// Declares (`Some`) or withdraws (`None`) the draw's beacon while the draw sells:
    /// a conditional write, so a beacon never changes once the draw is closing, closed or
    /// past its `closes_at` by `now`. `None` when the draw does not exist.
    pub async fn set_beacon(
        &self,
        draw_id: &DrawId,
        beacon: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Option<BeaconChange>, StoreError> {
        unless_held(|| self.set_beacon_once(draw_id, beacon, now)).await
    }

    async fn set_beacon_once(
        &self,
        draw_id: &DrawId,
        beacon: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<Option<BeaconChange>, StoreError> {
        self.write_meter().single_write();
        let mut request = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::draw(draw_id))))
            .condition_expression(
                "attribute_exists(#pk) AND #status = :open \
                 AND (attribute_not_exists(#closes_at) OR #closes_at > :now)",
            )
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#closes_at", CLOSES_AT)
            .expression_attribute_names("#beacon", BEACON)
            .expression_attribute_values(":open", s(DrawStatus::Open.as_str()))
            .expression_attribute_values(":now", timestamp(now))
            .return_values(ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        request = match beacon {
            Some(beacon) => request
                .update_expression("SET #beacon = :beacon")
                .expression_attribute_values(":beacon", s(beacon)),
            None => request.update_expression("REMOVE #beacon"),
        };
        match request.send().await {
            Ok(output) => output
                .attributes()
                .map(|item| decode_draw(item).map(BeaconChange::Set))
                .transpose(),
            Err(err) => match err.as_service_error() {
                Some(UpdateItemError::ConditionalCheckFailedException(failed)) => failed
                    .item()
                    .map(|item| decode_draw(item).map(BeaconChange::Refused))
                    .transpose(),
                _ => Err(sdk_error("UpdateItem", err)),
            },
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
        // A void or the winners may hold the draw item in a transaction for a moment.
        unless_held(|| self.claim_stripes_once(draw_id, count, sold_out)).await
    }

    async fn claim_stripes_once(
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
        let keys = stripes
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
        Ok(stripes
            .iter()
            .map(|&i| {
                let state = found.remove(&keys::stripe(draw_id, i)).unwrap_or_default();
                (i, state)
            })
            .collect())
    }
}
