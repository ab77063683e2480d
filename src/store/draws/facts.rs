//! A draw's published facts: its public counts as last read, in one item per draw
//! (`DRAW#<draw>#FACTS`), so that a poll reads one item instead of every stripe. Counts
//! only, as the answer shows them: no payer, no secret, no winning number.

use aws_sdk_dynamodb::types::AttributeValue;

use super::super::codec::{Item, Reader, derived, key, n, parse_timestamp, s, timestamp};
use super::super::error::conditional;
use super::super::metrics::item_units;
use super::super::{PARTITION_KEY, Store, StoreError, keys, kind};
use super::item::{STATUS, decode_terms, encode_terms};
use tally_domain::draw::DrawStatus;
use tally_domain::draw::facts::{DrawFacts, Entries, Standings};
use tally_domain::ids::DrawId;

const READ_AT: &str = "read_at";
const INSTANT: &str = "instant_prizes";

/// Whether a publish replaced the stored facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    Written,
    /// The stored facts are newer, or of the closed draw: they stay.
    Kept,
}

impl Store {
    /// The draw's published facts, eventually consistent (half a read unit): a poll may
    /// miss the latest publish by a moment, well inside the freshness bound.
    pub async fn published_facts(&self, draw_id: &DrawId) -> Result<Option<DrawFacts>, StoreError> {
        let item = self.get(keys::draw_facts(draw_id), false).await?;
        item.as_ref().map(decode_facts).transpose()
    }

    /// Publishes `facts` unless the stored ones were read later, or are the closed
    /// draw's while these are not: concurrent pollers never move the item backwards, nor
    /// from the closed draw's counts to an open one's.
    pub async fn publish_facts(&self, facts: &DrawFacts) -> Result<Published, StoreError> {
        let item = encode_facts(facts)?;
        self.write_meter().single_write(item_units(&item));
        // A closed draw's facts replace an open draw's, whatever the clocks say.
        let condition = if facts.status == DrawStatus::Closed {
            "attribute_not_exists(#pk) OR #read_at < :read_at OR #status <> :closed"
        } else {
            "attribute_not_exists(#pk) OR (#read_at < :read_at AND #status <> :closed)"
        };
        let result = self
            .client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(item))
            .condition_expression(condition)
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_names("#read_at", READ_AT)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_values(":read_at", timestamp(facts.read_at))
            .expression_attribute_values(":closed", s(DrawStatus::Closed.as_str()))
            .send()
            .await;
        Ok(match conditional(result)? {
            Ok(_) => Published::Written,
            Err(_) => Published::Kept,
        })
    }
}

fn encode_facts(facts: &DrawFacts) -> Result<Item, StoreError> {
    let mut item = key(keys::draw_facts(&facts.draw_id));
    item.insert(kind::ATTRIBUTE.into(), s(kind::PUBLISHED_FACTS));
    item.insert("draw_id".into(), s(facts.draw_id.as_str()));
    item.insert(STATUS.into(), s(facts.status.as_str()));
    if facts.sold_out {
        item.insert("sold_out".into(), AttributeValue::Bool(true));
    }
    encode_terms(&mut item, facts.price, &facts.schedule);
    item.insert("total_tickets".into(), n(facts.total_tickets));
    item.insert("sold".into(), n(facts.standings.sold));
    item.insert("held".into(), n(facts.standings.held));
    item.insert("free".into(), n(facts.standings.free));
    item.insert("voided".into(), n(facts.voided));
    item.insert("online".into(), n(facts.entries.online));
    item.insert("postal".into(), n(facts.entries.postal));
    if let Some(instant) = &facts.instant {
        item.insert(INSTANT.into(), derived(instant)?);
    }
    item.insert(READ_AT.into(), timestamp(facts.read_at));
    Ok(item)
}

fn decode_facts(item: &Item) -> Result<DrawFacts, StoreError> {
    let r = Reader::new(item);
    let (price, schedule) = decode_terms(&r)?;
    Ok(DrawFacts {
        draw_id: r.parsed("draw_id", |v| DrawId::parse(v).ok())?,
        status: r.parsed(STATUS, DrawStatus::parse)?,
        sold_out: r.flag("sold_out"),
        schedule,
        total_tickets: r.num("total_tickets")?,
        price,
        standings: Standings {
            sold: r.num("sold")?,
            held: r.num("held")?,
            free: r.num("free")?,
        },
        voided: r.num("voided")?,
        entries: Entries {
            online: r.num("online")?,
            postal: r.num("postal")?,
        },
        instant: r.opt_derived(INSTANT)?,
        read_at: r.parsed(READ_AT, parse_timestamp)?,
    })
}
