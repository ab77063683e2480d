//! Series items: one item per series, with every format it has had. A number is found by
//! its text through the list index, without a registry of series; what the series of one
//! issuer render is entered on the issuer's item (`store::issuers`), in the transaction
//! that defines or changes the series. Every definition and change is an operator's: its
//! journal entry is in the same transaction.

use std::collections::HashMap;
use tally_domain::time::Epoch;

use aws_sdk_dynamodb::types::{
    AttributeValue, Put, ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
    Update,
};

use sha2::{Digest, Sha256};

use super::super::codec::{Item, key, n};
use super::super::error::{build_error, conditional};
use super::super::issuers::issuer_put;
use super::super::table::{Verdict, put_if_absent};
use super::super::transaction::{Roled, RoledOutcome};
use super::super::{PARTITION_KEY, Store, StoreError, keys};
use super::codec::{NUMBERED, REVISION, decode_series, encode_series};
use tally_domain::hex;
use tally_domain::ids::SeriesId;
use tally_domain::journal::Draft;
use tally_domain::series::issuer::Issuer;
use tally_domain::series::{Period, Series};

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
    hasher.update(series.created_at.epoch_micros().to_be_bytes());
    hex::encode(&hasher.finalize()[..16])
}

/// The condition that a series is still as it was read: the same revision, and not
/// numbering if it was not (so that its validation code cannot change under a writer).
struct SeriesGuard {
    condition: String,
    names: HashMap<String, String>,
    values: Item,
}

impl SeriesGuard {
    fn of(read: &Series) -> Self {
        let mut names = HashMap::from([("#rev".to_owned(), REVISION.to_owned())]);
        let values = Item::from([(":rev".to_owned(), n(read.revision))]);
        // Items written before revisions existed have none: revision 0.
        let mut condition = if read.revision == 0 {
            names.insert("#pk".into(), PARTITION_KEY.into());
            "attribute_exists(#pk) AND (attribute_not_exists(#rev) OR #rev = :rev)".to_owned()
        } else {
            "#rev = :rev".to_owned()
        };
        if !read.numbered {
            condition.push_str(" AND attribute_not_exists(#numbered)");
            names.insert("#numbered".into(), NUMBERED.into());
        }
        Self {
            condition,
            names,
            values,
        }
    }
}

/// What a change of a series found.
#[derive(Debug)]
pub enum SeriesWrite {
    Written,
    /// The series changed since it was read (another change, or it started numbering):
    /// read it again.
    SeriesChanged,
    /// The target period's format is fixed: it has numbers (or a move) already, or the
    /// period after it numbers in the version the change would replace.
    PeriodStarted,
    /// The issuer's item moved since it was read: read it again and check again.
    IssuerChanged,
}

/// A new format version and the first period that numbers in it.
#[derive(Debug)]
pub struct FormatStart<'a> {
    pub version: u32,
    pub from: &'a Period,
    /// The version pending for `from` that the new one replaces, and the period after
    /// `from`.
    pub replaces: Option<(u32, Period)>,
}

/// What a definition found.
#[derive(Debug)]
pub enum SeriesInsert {
    New,
    /// The id is taken: the series that has it.
    Existing(Box<Series>),
    /// The issuer's item moved since it was read: read it again and check again.
    IssuerChanged,
}

/// The items of a series' transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Series,
    /// The counter of the period a new format starts in.
    Counter,
    /// The counter of the period after it, when the new format replaces a pending one.
    Following,
    Issuer,
}

/// Whether a cancelled transaction's `role` item failed its condition.
fn failed(verdicts: &[(Role, Verdict)], role: Role) -> bool {
    verdicts
        .iter()
        .any(|(r, v)| *r == role && matches!(v, Verdict::ConditionFailed(_)))
}

impl Store {
    /// Writes a new series, with its issuer's item `issuer` (none: the item holds it as it
    /// is) and the operator's journal `entry` in the same transaction, or returns the
    /// series that has the id (and journals nothing).
    pub async fn insert_series(
        &self,
        series: &Series,
        issuer: Option<&Issuer>,
        entry: &Draft,
    ) -> Result<SeriesInsert, StoreError> {
        let mut item = encode_series(series)?;
        let token = AttributeValue::S(write_token(series));
        item.insert(WRITE_TOKEN.into(), token.clone());
        let mut tx = Roled::with_capacity(2);
        tx.push(Role::Series, put_if_absent(self.table(), item, true)?);
        if let Some(issuer) = issuer {
            tx.push(Role::Issuer, issuer_put(self.table(), issuer)?);
        }
        match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => Ok(SeriesInsert::New),
            RoledOutcome::Busy => Ok(SeriesInsert::IssuerChanged),
            RoledOutcome::Cancelled(verdicts) => {
                let existing = verdicts.iter().find_map(|(role, verdict)| match verdict {
                    Verdict::ConditionFailed(Some(item)) if *role == Role::Series => Some(item),
                    _ => None,
                });
                Ok(match existing {
                    // Its own earlier write, re-sent after a lost answer: written.
                    Some(item) if item.get(WRITE_TOKEN) == Some(&token) => SeriesInsert::New,
                    Some(item) => SeriesInsert::Existing(Box::new(decode_series(item)?)),
                    None => SeriesInsert::IssuerChanged,
                })
            }
        }
    }

    pub async fn get_series(&self, series_id: &SeriesId) -> Result<Option<Series>, StoreError> {
        self.get_consistent(keys::series(series_id))
            .await?
            .as_ref()
            .map(decode_series)
            .transpose()
    }

    /// Replaces the series `read` by `changed` (its next revision), on condition that it
    /// is still as read, with its issuer's item `issuer` when what its numbers show
    /// changes, and the operator's journal `entry`, in one transaction.
    pub async fn replace_series(
        &self,
        read: &Series,
        changed: &Series,
        issuer: Option<&Issuer>,
        entry: &Draft,
    ) -> Result<SeriesWrite, StoreError> {
        let guard = SeriesGuard::of(read);
        let put = Put::builder()
            .table_name(self.table())
            .set_item(Some(encode_series(changed)?))
            .condition_expression(guard.condition)
            .set_expression_attribute_names(Some(guard.names))
            .set_expression_attribute_values(Some(guard.values))
            .build()
            .map_err(build_error)?;
        let mut tx = Roled::with_capacity(2);
        tx.push(Role::Series, TransactWriteItem::builder().put(put).build());
        if let Some(issuer) = issuer {
            tx.push(Role::Issuer, issuer_put(self.table(), issuer)?);
        }
        self.transact_series(tx, entry).await
    }

    /// Sends a change of a series and reads its cancellation by role: the series changed
    /// first, then the period started, then the issuer moved.
    async fn transact_series(
        &self,
        tx: Roled<Role>,
        entry: &Draft,
    ) -> Result<SeriesWrite, StoreError> {
        Ok(match self.transact_journaled(tx, entry).await? {
            RoledOutcome::Committed => SeriesWrite::Written,
            RoledOutcome::Busy => SeriesWrite::SeriesChanged,
            RoledOutcome::Cancelled(verdicts) => {
                if failed(&verdicts, Role::Series) {
                    SeriesWrite::SeriesChanged
                } else if failed(&verdicts, Role::Counter) || failed(&verdicts, Role::Following) {
                    SeriesWrite::PeriodStarted
                } else if failed(&verdicts, Role::Issuer) {
                    SeriesWrite::IssuerChanged
                } else {
                    // A conflict with another writer: read again.
                    SeriesWrite::SeriesChanged
                }
            }
        })
    }

    /// Gives the series `read` the format of `changed` (its next revision) from the period
    /// `start.from` on: the series and that period's counter, which fixes the format of
    /// its period, change together, and only while the period has no number; with them
    /// the issuer's item `issuer`, when what the series' numbers show changes, and the
    /// operator's journal `entry`. A version pending for the period is replaced only
    /// while the period after it has no number and numbers in no other version: that
    /// counter is set to the new version too, so that no writer of it fixes the version
    /// removed (a change made as the period turns).
    pub async fn change_format(
        &self,
        read: &Series,
        changed: &Series,
        start: &FormatStart<'_>,
        issuer: Option<&Issuer>,
        entry: &Draft,
    ) -> Result<SeriesWrite, StoreError> {
        let guard = SeriesGuard::of(read);
        let series_put = Put::builder()
            .table_name(self.table())
            .set_item(Some(encode_series(changed)?))
            .condition_expression(guard.condition)
            .set_expression_attribute_names(Some(guard.names))
            .set_expression_attribute_values(Some(guard.values))
            .build()
            .map_err(build_error)?;
        let mut tx = Roled::with_capacity(4);
        tx.push(
            Role::Series,
            TransactWriteItem::builder().put(series_put).build(),
        );
        let counter = self.format_counter(&read.series_id, start.from, start.version, None)?;
        tx.push(Role::Counter, counter);
        if let Some((replaced, following)) = &start.replaces {
            let counter =
                self.format_counter(&read.series_id, following, start.version, Some(*replaced))?;
            tx.push(Role::Following, counter);
        }
        if let Some(issuer) = issuer {
            tx.push(Role::Issuer, issuer_put(self.table(), issuer)?);
        }
        self.transact_series(tx, entry).await
    }

    /// Sets the format version of `period`'s counter, on condition that it has no number
    /// and, with `replaced`, numbers in no version or in that one.
    fn format_counter(
        &self,
        series_id: &SeriesId,
        period: &Period,
        version: u32,
        replaced: Option<u32>,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut values = Item::from([(":version".to_owned(), n(version))]);
        let condition = match replaced {
            None => "attribute_not_exists(#last)",
            Some(replaced) => {
                values.insert(":replaced".to_owned(), n(replaced));
                "attribute_not_exists(#last) AND (attribute_not_exists(#fmt) OR #fmt = :replaced)"
            }
        };
        let update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::series_counter(series_id, period))))
            .update_expression("SET #fmt = :version")
            .condition_expression(condition)
            .expression_attribute_names("#fmt", super::counter::FORMAT_VERSION)
            .expression_attribute_names("#last", super::counter::LAST)
            .set_expression_attribute_values(Some(values))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Sets a series as numbering, which fixes its validation code, and returns it as it
    /// is now: a writer numbers with what this returns, so a code changed before this write
    /// is the code it uses, and no code changes after it.
    pub async fn set_numbered(&self, series_id: &SeriesId) -> Result<Option<Series>, StoreError> {
        self.write_meter().single_write(1);
        let result = self
            .client()
            .update_item()
            .table_name(self.table())
            .set_key(Some(key(keys::series(series_id))))
            .update_expression("SET #numbered = :yes")
            .condition_expression("attribute_exists(#pk)")
            .expression_attribute_names("#numbered", NUMBERED)
            .expression_attribute_names("#pk", PARTITION_KEY)
            .expression_attribute_values(":yes", AttributeValue::Bool(true))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match conditional(result)? {
            Ok(output) => output.attributes.as_ref().map(decode_series).transpose(),
            Err(_) => Ok(None),
        }
    }
}
