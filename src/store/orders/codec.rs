//! The items of numbering: series, orders (a number item and a reference item each) and
//! declared moves, to and from attribute values.

use aws_sdk_dynamodb::types::AttributeValue;

use super::super::codec::{Item, Reader, key, n, parse_timestamp, s, timestamp};
use super::super::keys::{self, COUNTER, PERIOD_KEY};
use super::super::{PARTITION_KEY, StoreError};
use crate::domain::audit::Entry;
use crate::domain::ids::{ExternalRef, SeriesId, SourceId};
use crate::domain::order::{Move, Order, OrderData, Reason, Void};
use crate::domain::series::{
    Calendar, FormatVersion, NumberFormat, Period, Reset, Series, SeriesDefinition, Timezone,
};

/// The attributes of a series, without its key: the series item and its registry entry
/// hold the same.
pub(super) fn series_attributes(series: &Series) -> Item {
    let d = &series.definition;
    let formats = series
        .formats
        .iter()
        .map(|version| {
            let mut entry = Item::new();
            entry.insert("version".into(), n(version.version));
            entry.insert("format".into(), s(version.format.as_str()));
            if let Some(from) = &version.from {
                entry.insert("from".into(), s(from.as_str()));
            }
            AttributeValue::M(entry)
        })
        .collect();
    Item::from([
        ("kind".into(), s("series")),
        ("series_id".into(), s(series.series_id.as_str())),
        ("format".into(), s(d.format.as_str())),
        ("formats".into(), AttributeValue::L(formats)),
        ("reset".into(), s(d.reset.as_str())),
        ("gapless".into(), AttributeValue::Bool(d.gapless)),
        ("start".into(), n(d.start)),
        ("timezone".into(), s(d.calendar.timezone.as_str())),
        ("fiscal_year_start".into(), n(d.calendar.fiscal_year_start)),
        ("created_at".into(), timestamp(series.created_at)),
    ])
}

pub(super) fn encode_series(series: &Series) -> Item {
    let mut item = key(keys::series(&series.series_id));
    item.extend(series_attributes(series));
    item
}

pub(super) fn decode_series(item: &Item) -> Result<Series, StoreError> {
    let r = Reader::new(item);
    let corrupt = |reason: String| r.corrupt(reason);
    let reset = r.parsed("reset", |v| Reset::parse(v).ok())?;
    let timezone = r.parsed("timezone", |v| Timezone::parse(v).ok())?;
    let calendar =
        Calendar::new(timezone, r.num("fiscal_year_start")?).map_err(|e| corrupt(e.to_string()))?;
    let definition =
        SeriesDefinition::new(r.str("format")?, reset, r.flag("gapless"), r.num("start")?)
            .map_err(|e| corrupt(e.to_string()))?
            .with_calendar(calendar);
    let mut formats = Vec::new();
    for value in r.list("formats")? {
        let AttributeValue::M(entry) = value else {
            return Err(corrupt("`formats` holds a non-map".into()));
        };
        let e = Reader::new(entry);
        formats.push(FormatVersion {
            version: e.num("version")?,
            format: e.parsed("format", |v| NumberFormat::parse(v).ok())?,
            from: e
                .opt_str("from")?
                .map(|p| Period::parse(reset, p).map_err(|e| corrupt(e.to_string())))
                .transpose()?,
        });
    }
    if formats.last().map(|f| &f.format) != Some(&definition.format) {
        return Err(corrupt("`formats` does not end with `format`".into()));
    }
    Ok(Series {
        series_id: r.parsed("series_id", |v| SeriesId::parse(v).ok())?,
        definition,
        created_at: r.parsed("created_at", parse_timestamp)?,
        formats,
    })
}

const VOID_REASON: &str = "void_reason";
const VOIDED_AT: &str = "voided_at";

/// An order item: `kind` `order` under its number key (with the period index's key, so
/// that it is listed), or `order_ref` under its reference key (not listed).
pub(super) fn encode_order(pk: String, order: &Order, period_key: Option<String>) -> Item {
    let mut item = key(pk);
    let kind = if period_key.is_some() {
        "order"
    } else {
        "order_ref"
    };
    item.insert("kind".into(), s(kind));
    item.insert("order_number".into(), s(&order.order_number));
    item.insert("series".into(), s(order.series.as_str()));
    item.insert("source".into(), s(order.source.as_str()));
    item.insert("external_ref".into(), s(order.external_ref.as_str()));
    item.insert("data".into(), s(order.data.as_raw()));
    item.insert("fingerprint".into(), s(&order.fingerprint));
    item.insert("period".into(), s(&order.period));
    item.insert(COUNTER.into(), n(order.counter));
    item.insert("created_at".into(), timestamp(order.created_at));
    if let Some(hash) = &order.hash {
        item.insert("hash".into(), s(hash));
    }
    if let Some(void) = &order.void {
        item.insert(VOID_REASON.into(), s(void.reason.as_str()));
        item.insert(VOIDED_AT.into(), timestamp(void.at));
    }
    if let Some(period_key) = period_key {
        item.insert(PERIOD_KEY.into(), s(period_key));
    }
    item
}

pub(crate) fn decode_order(item: &Item) -> Result<Order, StoreError> {
    let r = Reader::new(item);
    let void = match r.opt_str(VOID_REASON)? {
        None => None,
        Some(reason) => Some(Void {
            reason: Reason::parse(reason).map_err(|e| r.corrupt(e.to_string()))?,
            at: r.parsed(VOIDED_AT, parse_timestamp)?,
        }),
    };
    Ok(Order {
        order_number: r.str("order_number")?.to_owned(),
        series: r.parsed("series", |v| SeriesId::parse(v).ok())?,
        source: r.parsed("source", |v| SourceId::parse(v).ok())?,
        external_ref: r.parsed("external_ref", |v| ExternalRef::parse(v).ok())?,
        data: r.parsed("data", |v| OrderData::parse(Some(v)).ok())?,
        fingerprint: r.str("fingerprint")?.to_owned(),
        period: r.str("period")?.to_owned(),
        counter: r.num(COUNTER)?,
        created_at: r.parsed("created_at", parse_timestamp)?,
        hash: r.opt_str("hash")?.map(str::to_owned),
        void,
    })
}

/// A declared move, kept under the number key of the last number it skips (a number no
/// order can ever hold), listed at its first.
pub(super) fn encode_move(series: &SeriesId, period: &Period, moved: &Move) -> Item {
    let mut item = key(keys::order_number(series, period, moved.to));
    item.insert("kind".into(), s("move"));
    item.insert("series".into(), s(series.as_str()));
    item.insert("period".into(), s(period.as_str()));
    item.insert(PERIOD_KEY.into(), s(keys::series_counter(series, period)));
    item.insert(COUNTER.into(), n(moved.from));
    item.insert("to".into(), n(moved.to));
    item.insert("reason".into(), s(moved.reason.as_str()));
    item.insert("moved_at".into(), timestamp(moved.at));
    if let Some(hash) = &moved.hash {
        item.insert("hash".into(), s(hash));
    }
    item
}

pub(crate) fn decode_move(item: &Item) -> Result<Move, StoreError> {
    let r = Reader::new(item);
    Ok(Move {
        series: r.parsed("series", |v| SeriesId::parse(v).ok())?,
        from: r.num(COUNTER)?,
        to: r.num("to")?,
        reason: r.parsed("reason", |v| Reason::parse(v).ok())?,
        at: r.parsed("moved_at", parse_timestamp)?,
        hash: r.opt_str("hash")?.map(str::to_owned),
    })
}

/// A number or move item of a period.
pub(super) fn decode_entry(item: &Item) -> Result<Entry, StoreError> {
    match Reader::new(item).str("kind")? {
        "move" => Ok(Entry::Move(decode_move(item)?)),
        "order" => Ok(Entry::Order(decode_order(item)?)),
        other => Err(StoreError::Corrupt {
            key: Reader::new(item)
                .str(PARTITION_KEY)
                .unwrap_or("<no key>")
                .to_owned(),
            reason: format!("a period entry of kind {other}"),
        }),
    }
}
