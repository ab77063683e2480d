//! Issuer items: one per issuer, holding every series that names it with what decides
//! its texts (every format it has had, its validation code), at a version. A definition,
//! or a change of what a series' numbers show, writes the whole item in the series' own
//! transaction, on condition that the version is still the one read: of two definitions
//! that race, one commits and the other reads the item again (S2).

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use serde::{Deserialize, Serialize};

use super::codec::{Item, Reader, derived, key, n, s};
use super::error::{build_error, conditional, sdk_error};
use super::metrics::item_units;
use super::orders::decode_series;
use super::{PARTITION_KEY, Store, StoreError, keys, kind};
use tally_domain::ids::{IssuerId, SeriesId};
use tally_domain::series::issuer::{Entry, Issuer};
use tally_domain::series::{NumberFormat, Series, ValidationCode};

/// The most formats one issuer's series hold between them: the item stays under
/// DynamoDB's 400 KB (a format is at most 64 bytes, a series id 32; about 100 bytes an
/// entry with the encoding's overhead, so 200 KB at most), and a definition checks every
/// one of them in well under a request's time.
pub const MAX_ISSUER_FORMATS: usize = 2_000;

const VERSION: &str = "version";
const SERIES: &str = "series";

/// A series' entry on the issuer item, as it derives: its formats' texts, in order,
/// and its validation code.
#[derive(Serialize, Deserialize)]
struct StoredEntry {
    formats: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<String>,
}

pub(crate) fn encode_issuer(issuer: &Issuer) -> Result<Item, StoreError> {
    let series: BTreeMap<&str, StoredEntry> = issuer
        .series
        .iter()
        .map(|(series_id, entry)| {
            let formats = entry.formats.iter().map(|f| f.as_str().to_owned());
            let code = entry.code.as_ref().map(|c| c.as_str().to_owned());
            let stored = StoredEntry {
                formats: formats.collect(),
                code,
            };
            (series_id.as_str(), stored)
        })
        .collect();
    let mut item = key(keys::issuer(&issuer.issuer));
    item.insert(kind::ATTRIBUTE.into(), s(kind::ISSUER));
    item.insert("issuer".into(), s(issuer.issuer.as_str()));
    item.insert(VERSION.into(), n(issuer.version));
    item.insert(SERIES.into(), derived(&series)?);
    Ok(item)
}

pub(crate) fn decode_issuer(issuer: &IssuerId, item: &Item) -> Result<Issuer, StoreError> {
    let r = Reader::new(item);
    let stored: BTreeMap<String, StoredEntry> = r.opt_derived(SERIES)?.unwrap_or_default();
    let mut series = BTreeMap::new();
    for (series_id, entry) in stored {
        let corrupt = |e: &dyn std::fmt::Display| r.corrupt(format!("`{SERIES}.{series_id}`: {e}"));
        let formats = entry
            .formats
            .iter()
            .map(|f| NumberFormat::parse(f).map_err(|e| corrupt(&e)))
            .collect::<Result<_, _>>()?;
        let code = entry
            .code
            .map(|c| ValidationCode::parse(&c).map_err(|e| corrupt(&e)))
            .transpose()?;
        let series_id = SeriesId::parse(&series_id).map_err(|e| corrupt(&e))?;
        series.insert(series_id, Entry { formats, code });
    }
    Ok(Issuer {
        issuer: issuer.clone(),
        version: r.num(VERSION)?,
        series,
    })
}

/// The condition of writing `next`: the item is still at the version before it (absent
/// before the first).
struct VersionCondition {
    expression: &'static str,
    names: HashMap<String, String>,
    values: Option<HashMap<String, AttributeValue>>,
}

impl VersionCondition {
    fn before(next: &Issuer) -> Self {
        if next.version <= 1 {
            Self {
                expression: "attribute_not_exists(#pk)",
                names: HashMap::from([("#pk".to_owned(), PARTITION_KEY.to_owned())]),
                values: None,
            }
        } else {
            Self {
                expression: "#version = :read",
                names: HashMap::from([("#version".to_owned(), VERSION.to_owned())]),
                values: Some(HashMap::from([(":read".to_owned(), n(next.version - 1))])),
            }
        }
    }
}

/// The put of `next` for a transaction, on its [`VersionCondition`].
pub(crate) fn issuer_put(table: &str, next: &Issuer) -> Result<TransactWriteItem, StoreError> {
    let condition = VersionCondition::before(next);
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(encode_issuer(next)?))
        .condition_expression(condition.expression)
        .set_expression_attribute_names(Some(condition.names))
        .set_expression_attribute_values(condition.values)
        .build()
        .map_err(build_error)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// One page of series items and where the next starts.
pub struct SeriesPage {
    pub series: Vec<Series>,
    pub next: Option<Item>,
}

impl Store {
    /// The issuer's series as its item holds them; version 0 and none before the first.
    pub async fn get_issuer(&self, issuer: &IssuerId) -> Result<Issuer, StoreError> {
        match self.get_consistent(keys::issuer(issuer)).await? {
            Some(item) => decode_issuer(issuer, &item),
            None => Ok(Issuer::new(issuer.clone())),
        }
    }

    /// Writes `next` alone (a series entered as it is, no series item changing): `false`
    /// when the item is no longer at the version before it.
    pub async fn put_issuer(&self, next: &Issuer) -> Result<bool, StoreError> {
        let item = encode_issuer(next)?;
        self.write_meter().single_write(item_units(&item));
        let condition = VersionCondition::before(next);
        let result = self
            .client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(item))
            .condition_expression(condition.expression)
            .set_expression_attribute_names(Some(condition.names))
            .set_expression_attribute_values(condition.values)
            .send()
            .await;
        Ok(conditional(result)?.is_ok())
    }

    /// A page of the table's series items, read with a scan of the whole table: only for
    /// the one-time entry of series defined before issuers existed (`tally
    /// register-series`), never on a request's path.
    pub async fn scan_series(&self, from: Option<Item>) -> Result<SeriesPage, StoreError> {
        let output = self
            .client()
            .scan()
            .table_name(self.table())
            .consistent_read(true)
            .filter_expression("#kind = :series")
            .expression_attribute_names("#kind", kind::ATTRIBUTE)
            .expression_attribute_values(":series", s(kind::SERIES))
            .set_exclusive_start_key(from)
            .send()
            .await
            .map_err(|e| sdk_error("Scan", e))?;
        Ok(SeriesPage {
            series: output
                .items()
                .iter()
                .map(decode_series)
                .collect::<Result<_, _>>()?,
            next: output
                .last_evaluated_key()
                .filter(|key| !key.is_empty())
                .cloned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issuer_item_reads_back_as_written() {
        let mut issuer = Issuer::new(IssuerId::parse("acme").unwrap());
        issuer.version = 7;
        issuer.series.insert(
            SeriesId::parse("UA").unwrap(),
            Entry {
                formats: vec![
                    NumberFormat::parse("UA{yy}{seq:6}").unwrap(),
                    NumberFormat::parse("UA/{yyyy}/{seq:4}").unwrap(),
                ],
                code: None,
            },
        );
        issuer.series.insert(
            SeriesId::parse("FT").unwrap(),
            Entry {
                formats: vec![NumberFormat::parse("{code}-{seq:1}").unwrap()],
                code: Some(ValidationCode::parse("CSDF7T5H").unwrap()),
            },
        );
        let item = encode_issuer(&issuer).unwrap();
        assert_eq!(decode_issuer(&issuer.issuer, &item).unwrap(), issuer);
    }

    #[test]
    fn a_wrong_typed_format_makes_the_issuer_corrupt() {
        let acme = IssuerId::parse("acme").unwrap();
        let mut item = key(keys::issuer(&acme));
        let entry = Item::from([("formats".to_owned(), AttributeValue::L(vec![n(7)]))]);
        let series = Item::from([("UA".to_owned(), AttributeValue::M(entry))]);
        item.insert(SERIES.into(), AttributeValue::M(series));
        item.insert(VERSION.into(), n(1));
        let Err(StoreError::Corrupt { key, reason }) = decode_issuer(&acme, &item) else {
            panic!("a number reads as a format");
        };
        assert_eq!(key, keys::issuer(&acme));
        assert!(reason.contains("`series.UA.formats[0]`"), "{reason}");
    }
}
