//! The items of numbering: series, orders (a number item and a reference item each) and
//! declared moves, to and from attribute values.

use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};

use super::super::codec::{Item, Reader, derived, key, n, parse_timestamp, s, timestamp};
use super::super::keys::{self, COUNTER, LIST_PK, LIST_SK, PERIOD_KEY};
use super::super::{PARTITION_KEY, StoreError, kind};
use tally_domain::audit::Entry;
use tally_domain::ids::{ExternalRef, IssuerId, SeriesId, SourceId};
use tally_domain::order::{Move, Order, OrderData, Reason, Void};
use tally_domain::series::{
    AuthorisedRange, Calendar, FormatVersion, NumberFormat, NumberRules, Period, RangeLow, Ranges,
    Reset, Series, SeriesDefinition, Timezone, ValidationCode,
};
use tally_domain::time::rfc3339_millis;

pub(super) const REVISION: &str = "revision";
pub(super) const NUMBERED: &str = "numbered";
pub(super) const CORRECTS: &str = "corrects";
pub(super) const CREDIT_NOTES: &str = "credit_notes";
const ISSUER: &str = "issuer";

/// A format the series has had, as its `formats` list keeps it.
#[derive(Serialize, Deserialize)]
struct StoredFormat {
    version: u32,
    format: String,
    /// The first period numbered in it; absent for the format the series began with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from: Option<String>,
}

/// An authorised range as the series' `ranges` list keeps it.
#[derive(Serialize, Deserialize)]
struct StoredRange {
    from: u64,
    to: u64,
    authority_ref: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    valid_until: Option<String>,
}

pub(crate) fn encode_series(series: &Series) -> Result<Item, StoreError> {
    let d = &series.definition;
    let formats: Vec<StoredFormat> = series
        .formats
        .iter()
        .map(|version| StoredFormat {
            version: version.version,
            format: version.format.as_str().to_owned(),
            from: version.from.as_ref().map(|p| p.as_str().to_owned()),
        })
        .collect();
    let mut item = key(keys::series(&series.series_id));
    item.extend([
        (kind::ATTRIBUTE.into(), s(kind::SERIES)),
        ("series_id".into(), s(series.series_id.as_str())),
        ("format".into(), s(d.format.as_str())),
        ("formats".into(), derived(&formats)?),
        ("reset".into(), s(d.reset.as_str())),
        ("gapless".into(), AttributeValue::Bool(d.gapless)),
        ("start".into(), n(d.start)),
        ("timezone".into(), s(d.calendar.timezone.as_str())),
        ("fiscal_year_start".into(), n(d.calendar.fiscal_year_start)),
        ("created_at".into(), timestamp(series.created_at)),
        (REVISION.into(), n(series.revision)),
    ]);
    if let Some(max) = d.rules.max_length {
        item.insert("max_length".into(), n(max));
    }
    if let Some(rule) = &d.rules.allowed_characters {
        item.insert("allowed_characters".into(), s(rule.as_str()));
    }
    if let Some(code) = &d.validation_code {
        item.insert("validation_code".into(), s(code.as_str()));
    }
    if !d.ranges.is_empty() {
        item.insert("ranges".into(), ranges_attribute(&d.ranges)?);
        item.insert("range_low_percent".into(), n(d.range_low_percent));
    }
    if let Some(credits) = &d.credits {
        item.insert("credits".into(), s(credits.as_str()));
    }
    item.insert(ISSUER.into(), s(d.issuer.as_str()));
    if series.numbered {
        item.insert(NUMBERED.into(), AttributeValue::Bool(true));
    }
    Ok(item)
}

fn ranges_attribute(ranges: &Ranges) -> Result<AttributeValue, StoreError> {
    let stored: Vec<StoredRange> = ranges
        .as_slice()
        .iter()
        .map(|range| StoredRange {
            from: range.from,
            to: range.to,
            authority_ref: range.authority_ref.clone(),
            valid_until: range.valid_until.map(rfc3339_millis),
        })
        .collect();
    derived(&stored)
}

fn decode_ranges(r: &Reader<'_>) -> Result<Ranges, StoreError> {
    let stored: Vec<StoredRange> = r.opt_derived("ranges")?.unwrap_or_default();
    stored
        .into_iter()
        .map(|e| {
            let until = e
                .valid_until
                .map(|t| {
                    parse_timestamp(&t)
                        .ok_or_else(|| r.corrupt("`ranges`: a `valid_until` is not a time".into()))
                })
                .transpose()?;
            AuthorisedRange::new(e.from, e.to, &e.authority_ref, until)
                .map_err(|err| r.corrupt(format!("`ranges`: {err}")))
        })
        .collect::<Result<_, _>>()
        .and_then(|ranges| Ranges::new(ranges).map_err(|err| r.corrupt(format!("`ranges`: {err}"))))
}

pub(crate) fn decode_series(item: &Item) -> Result<Series, StoreError> {
    let r = Reader::new(item);
    let corrupt = |reason: String| r.corrupt(reason);
    let reset = r.parsed("reset", |v| Reset::parse(v).ok())?;
    let timezone = r.parsed("timezone", |v| Timezone::parse(v).ok())?;
    let calendar =
        Calendar::new(timezone, r.num("fiscal_year_start")?).map_err(|e| corrupt(e.to_string()))?;
    let rules = NumberRules::new(r.opt_num("max_length")?, r.opt_str("allowed_characters")?)
        .map_err(|e| corrupt(e.to_string()))?;
    let code = r
        .opt_str("validation_code")?
        .map(|c| ValidationCode::parse(c).map_err(|e| corrupt(e.to_string())))
        .transpose()?;
    let credits = r
        .opt_str("credits")?
        .map(|c| SeriesId::parse(c).map_err(|e| corrupt(e.to_string())))
        .transpose()?;
    let low_percent = r
        .opt_num("range_low_percent")?
        .unwrap_or(tally_domain::series::DEFAULT_LOW_PERCENT);
    let definition =
        SeriesDefinition::new(r.str("format")?, reset, r.flag("gapless"), r.num("start")?)
            .map_err(|e| corrupt(e.to_string()))?
            .with_calendar(calendar)
            .with_rules(rules)
            .with_validation_code(code)
            .with_ranges(decode_ranges(&r)?, low_percent)
            .map_err(|e| corrupt(e.to_string()))?
            .crediting(credits)
            // A series defined before issuers existed is the deployment's.
            .issued_by(match r.opt_str(ISSUER)? {
                Some(issuer) => IssuerId::parse(issuer).map_err(|e| corrupt(e.to_string()))?,
                None => IssuerId::deployment(),
            });
    let stored: Vec<StoredFormat> = r.opt_derived("formats")?.unwrap_or_default();
    let formats = stored
        .into_iter()
        .map(|e| {
            Ok(FormatVersion {
                version: e.version,
                format: NumberFormat::parse(&e.format)
                    .map_err(|e| corrupt(format!("`formats`: {e}")))?,
                from: e
                    .from
                    .map(|p| Period::parse(reset, &p).map_err(|e| corrupt(e.to_string())))
                    .transpose()?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    if formats.last().map(|f| &f.format) != Some(&definition.format) {
        return Err(corrupt("`formats` does not end with `format`".into()));
    }
    Ok(Series {
        series_id: r.parsed("series_id", |v| SeriesId::parse(v).ok())?,
        definition,
        created_at: r.parsed("created_at", parse_timestamp)?,
        formats,
        revision: r.opt_num(REVISION)?.unwrap_or(0),
        numbered: r.flag(NUMBERED),
    })
}

pub(super) const VOID_REASON: &str = "void_reason";
pub(super) const VOIDED_AT: &str = "voided_at";

/// An order item: `kind` `order` under its number key (with the period index's key, so
/// that it is listed, and the list index's, so that its text finds it), or `order_ref`
/// under its reference key (in no index).
pub(crate) fn encode_order(pk: String, order: &Order, period_key: Option<String>) -> Item {
    let mut item = key(pk.clone());
    let kind = if period_key.is_some() {
        kind::ORDER
    } else {
        kind::ORDER_REF
    };
    item.insert(kind::ATTRIBUTE.into(), s(kind));
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
    if let Some(invoice) = &order.corrects {
        item.insert(CORRECTS.into(), s(invoice));
    }
    if let Some(period_key) = period_key {
        item.insert(PERIOD_KEY.into(), s(period_key));
        item.insert(LIST_PK.into(), s(keys::number_text(&order.order_number)));
        item.insert(LIST_SK.into(), s(pk));
        if !order.credit_notes.is_empty() {
            item.insert(
                CREDIT_NOTES.into(),
                AttributeValue::L(order.credit_notes.iter().map(s).collect()),
            );
        }
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
        corrects: r.opt_str(CORRECTS)?.map(str::to_owned),
        credit_notes: r.opt_derived(CREDIT_NOTES)?.unwrap_or_default(),
    })
}

/// A declared move, kept under the number key of the last number it skips (a number no
/// order can ever hold), listed at its first.
pub(crate) fn encode_move(series: &SeriesId, period: &Period, moved: &Move) -> Item {
    let mut item = key(keys::order_number(series, period, moved.to));
    item.insert(kind::ATTRIBUTE.into(), s(kind::MOVE));
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

/// The mark of a range that passed its low share: the `Range Running Low` fact.
pub(crate) fn encode_range_low(low: &RangeLow) -> Item {
    let range = &low.range;
    let mut item = key(keys::range_low(&low.series, range.from));
    item.insert(kind::ATTRIBUTE.into(), s(kind::RANGE_LOW));
    item.insert("series".into(), s(low.series.as_str()));
    item.insert("from".into(), n(range.from));
    item.insert("to".into(), n(range.to));
    item.insert("authority_ref".into(), s(&range.authority_ref));
    if let Some(until) = range.valid_until {
        item.insert("valid_until".into(), timestamp(until));
    }
    item.insert("percent".into(), n(low.percent));
    // Stored as `mark`, as items were written before the word was taken for stripes.
    item.insert("mark".into(), n(low.threshold));
    item.insert("reached_at".into(), timestamp(low.at));
    item
}

pub(crate) fn decode_range_low(item: &Item) -> Result<RangeLow, StoreError> {
    let r = Reader::new(item);
    let until = r
        .opt_str("valid_until")?
        .map(|t| parse_timestamp(t).ok_or_else(|| r.corrupt("a bad `valid_until`".into())))
        .transpose()?;
    Ok(RangeLow {
        series: r.parsed("series", |v| SeriesId::parse(v).ok())?,
        range: AuthorisedRange::new(r.num("from")?, r.num("to")?, r.str("authority_ref")?, until)
            .map_err(|e| r.corrupt(e.to_string()))?,
        percent: r.num("percent")?,
        threshold: r.num("mark")?,
        at: r.parsed("reached_at", parse_timestamp)?,
    })
}

/// A number or move item of a period.
pub(super) fn decode_entry(item: &Item) -> Result<Entry, StoreError> {
    match Reader::new(item).str(kind::ATTRIBUTE)? {
        kind::MOVE => Ok(Entry::Move(decode_move(item)?)),
        kind::ORDER => Ok(Entry::Order(Box::new(decode_order(item)?))),
        other => Err(StoreError::Corrupt {
            key: Reader::new(item)
                .str(PARTITION_KEY)
                .unwrap_or("<no key>")
                .to_owned(),
            reason: format!("a period entry of kind {other}"),
        }),
    }
}
