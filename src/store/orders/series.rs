//! Series items and the registry of every series with its formats, written together.

use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use sha2::{Digest, Sha256};

use super::super::codec::{Item, Reader, key, n};
use super::super::error::build_error;
use super::super::table::{Inserted, Transaction, Verdict, backoff, put_if_absent};
use super::super::{Store, StoreError, keys};
use super::codec::{decode_series, encode_series, series_attributes};
use crate::domain::ids::SeriesId;
use crate::domain::purchase::hex;
use crate::domain::series::{FormatVersion, Period, Series};

/// Attempts of a series write whose transaction is still in flight from an SDK retry.
const BUSY_ATTEMPTS: u32 = 5;

/// A value unique to one create request: finding its own token on the existing item tells
/// a writer that the item is its own earlier write, re-sent after a lost response.
const WRITE_TOKEN: &str = "write_token";

/// The series as asked for, at the moment it was asked for: a repeat of the request
/// carries the same token, a later request another one.
fn write_token(series: &Series) -> String {
    let d = &series.definition;
    let mut hasher = Sha256::new();
    for part in [
        series.series_id.as_str(),
        d.format.as_str(),
        d.reset.as_str(),
        if d.gapless { "gapless" } else { "fast" },
        d.calendar.timezone.as_str(),
    ] {
        hasher.update(part);
        hasher.update([0]);
    }
    hasher.update(d.start.to_be_bytes());
    hasher.update(d.calendar.fiscal_year_start.to_be_bytes());
    hasher.update(series.created_at.timestamp_micros().to_be_bytes());
    hex(&hasher.finalize()[..16])
}

/// The attribute of the registry item that holds one series.
fn registry_attribute(series: &SeriesId) -> String {
    format!("series:{series}")
}

/// What a format change found.
#[derive(Debug)]
pub enum FormatChange {
    Changed,
    /// The series changed since it was read (another change): read it again.
    SeriesChanged,
    /// The target period has numbers (or a move) already: its format is fixed.
    PeriodStarted,
}

impl Store {
    /// The registry entry of a series, written in the same transaction as the series.
    fn registry_update(&self, series: &Series) -> Result<TransactWriteItem, StoreError> {
        let update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::series_registry())))
            .update_expression("SET #entry = :series")
            .expression_attribute_names("#entry", registry_attribute(&series.series_id))
            .expression_attribute_values(":series", AttributeValue::M(series_attributes(series)))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Writes a new series and its registry entry, or returns the series that has the id.
    pub async fn insert_series(&self, series: &Series) -> Result<Inserted<Series>, StoreError> {
        let token = write_token(series);
        for attempt in 1..=BUSY_ATTEMPTS {
            let mut item = encode_series(series);
            item.insert(WRITE_TOKEN.into(), AttributeValue::S(token.clone()));
            let items = vec![
                put_if_absent(self.table(), item, true)?,
                self.registry_update(series)?,
            ];
            match self.transact(items, 0).await? {
                Transaction::Committed => return Ok(Inserted::New),
                Transaction::Busy => backoff(attempt).await,
                Transaction::Cancelled(verdicts) => match verdicts.into_iter().next() {
                    Some(Verdict::ConditionFailed(Some(item))) => {
                        let own = Reader::new(&item).opt_str(WRITE_TOKEN)? == Some(token.as_str());
                        if own {
                            return Ok(Inserted::New);
                        }
                        return Ok(Inserted::Existing(decode_series(&item)?));
                    }
                    _ => backoff(attempt).await,
                },
            }
        }
        Err(StoreError::Contention {
            attempts: BUSY_ATTEMPTS,
        })
    }

    pub async fn get_series(&self, series_id: &SeriesId) -> Result<Option<Series>, StoreError> {
        self.get_consistent(keys::series(series_id))
            .await?
            .as_ref()
            .map(decode_series)
            .transpose()
    }

    /// Every series, with every format it has had, from one item.
    pub async fn series_registry(&self) -> Result<Vec<Series>, StoreError> {
        let Some(item) = self.get_consistent(keys::series_registry()).await? else {
            return Ok(Vec::new());
        };
        item.iter()
            .filter(|(name, _)| name.starts_with("series:"))
            .map(|(_, value)| match value {
                AttributeValue::M(entry) => decode_series(entry),
                _ => Err(StoreError::Corrupt {
                    key: keys::series_registry(),
                    reason: "a registry entry is not a map".into(),
                }),
            })
            .collect()
    }

    /// Gives `series` (as read) the format `version`, from the period `target` on: the
    /// series item, its registry entry and the target period's counter, which fixes the
    /// format of its period, change together, and only while the target period has no
    /// number.
    pub async fn change_format(
        &self,
        series: &Series,
        version: &FormatVersion,
        target: &Period,
    ) -> Result<FormatChange, StoreError> {
        let mut changed = series.clone();
        changed.definition.format = version.format.clone();
        changed.formats.push(version.clone());
        let mut entry = Item::new();
        entry.insert("version".into(), n(version.version));
        entry.insert(
            "format".into(),
            AttributeValue::S(version.format.as_str().to_owned()),
        );
        entry.insert("from".into(), AttributeValue::S(target.as_str().to_owned()));
        let series_update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::series(&series.series_id))))
            .update_expression("SET #format = :format, #formats = list_append(#formats, :entry)")
            .condition_expression("size(#formats) = :known")
            .expression_attribute_names("#format", "format")
            .expression_attribute_names("#formats", "formats")
            .expression_attribute_values(
                ":format",
                AttributeValue::S(version.format.as_str().into()),
            )
            .expression_attribute_values(
                ":entry",
                AttributeValue::L(vec![AttributeValue::M(entry)]),
            )
            .expression_attribute_values(":known", n(series.formats.len()))
            .build()
            .map_err(build_error)?;
        let counter_update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::series_counter(&series.series_id, target))))
            .update_expression("SET #fmt = :version")
            .condition_expression("attribute_not_exists(#last)")
            .expression_attribute_names("#fmt", super::counter::FORMAT_VERSION)
            .expression_attribute_names("#last", super::counter::LAST)
            .expression_attribute_values(":version", n(version.version))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(build_error)?;
        let items = vec![
            TransactWriteItem::builder().update(series_update).build(),
            self.registry_update(&changed)?,
            TransactWriteItem::builder().update(counter_update).build(),
        ];
        match self.transact(items, 0).await? {
            Transaction::Committed => Ok(FormatChange::Changed),
            Transaction::Busy => Ok(FormatChange::SeriesChanged),
            Transaction::Cancelled(verdicts) => {
                let failed =
                    |i: usize| matches!(verdicts.get(i), Some(Verdict::ConditionFailed(_)));
                if failed(0) {
                    Ok(FormatChange::SeriesChanged)
                } else if failed(2) {
                    Ok(FormatChange::PeriodStarted)
                } else {
                    Ok(FormatChange::SeriesChanged)
                }
            }
        }
    }
}
