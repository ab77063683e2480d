//! A series: defining it, its status, and the copy of it a process numbers with.

use std::collections::HashMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tracing::{info, instrument};

use super::{OrderError, OrderService, entries};
use crate::store::orders::SeriesInsert;
use crate::store::{StoreError, retry};
use tally_domain::audit::Entry;
use tally_domain::ids::SeriesId;
use tally_domain::journal::Operator;
use tally_domain::series::{NumberFormat, Period, RangeLow, Series, SeriesDefinition, SeriesError};

/// How long a process numbers with a series as it read it before reading it again: how
/// late it may see a change of the settings it does not check in its writes
/// (`range_low_percent`). Formats, codes and ranges it learns from its writes.
pub const SERIES_MAX_AGE: Duration = Duration::from_secs(60);

/// A series with its current period, its counter there and the number of the order at it.
#[derive(Debug, Clone)]
pub struct SeriesStatus {
    pub series: Series,
    pub period: Period,
    pub last_counter: Option<u64>,
    pub last_number: Option<String>,
}

/// A series as this process last read it, and when and in which period it read it: a
/// process that numbers in a new period reads the series again, so it sees a format change
/// made for that period.
#[derive(Clone)]
pub(super) struct Known {
    series: Series,
    period: Period,
    read_at: Timestamp,
}

impl OrderService {
    /// Defines a series; `true` when it was created, `false` when an identical one exists.
    /// Its format must render no text another series of its issuer could (S2): the
    /// issuer's item is written in the same transaction, so of two definitions that race
    /// one wins and the other is checked again against it. The definition is journalled
    /// under `by` in the same transaction; an identical one again journals nothing.
    #[instrument(skip(self, definition, by))]
    pub async fn define_series(
        &self,
        series_id: &SeriesId,
        definition: SeriesDefinition,
        by: &Operator,
    ) -> Result<(Series, bool), OrderError> {
        let series = Series::new(series_id.clone(), definition, self.now());
        series.check(self.now())?;
        if let Some(credited) = &series.definition.credits
            && self.store.get_series(credited).await?.is_none()
        {
            return Err(SeriesError::Credits(format!("series {credited} does not exist")).into());
        }
        for attempt in retry::ORDER_WRITE.each() {
            let issuer = match self.admit(None, &series).await {
                Ok(issuer) => issuer,
                // A series of this id answers first: the same one, or another definition.
                Err(refusal) => match self.store.get_series(series_id).await? {
                    Some(existing) => return self.defined_before(existing, &series).await,
                    None => return Err(refusal),
                },
            };
            let entry = entries::defined(&series, by);
            match self
                .store
                .insert_series(&series, issuer.as_ref(), &entry)
                .await?
            {
                SeriesInsert::New => {
                    info!(format = series.definition.format.as_str(), "series created");
                    self.remember(&series);
                    return Ok((series, true));
                }
                SeriesInsert::Existing(existing) => {
                    return self.defined_before(*existing, &series).await;
                }
                SeriesInsert::IssuerChanged => retry::ORDER_WRITE.pause(attempt).await,
            }
        }
        Err(retry::ORDER_WRITE.exhausted().into())
    }

    /// A definition whose id is taken: the same definition again is answered with the
    /// series (entered on its issuer if it was defined before issuers existed), another
    /// one is refused.
    pub(super) async fn defined_before(
        &self,
        existing: Series,
        asked: &Series,
    ) -> Result<(Series, bool), OrderError> {
        if existing.definition != asked.definition {
            return Err(OrderError::SeriesExists(existing.series_id));
        }
        self.enter_series(&existing).await?;
        Ok((existing, false))
    }

    #[instrument(skip(self))]
    pub async fn series_status(&self, series_id: &SeriesId) -> Result<SeriesStatus, OrderError> {
        let now = self.now();
        let series = self.load_series(series_id, now).await?;
        let period = series.period(now);
        let counter = self
            .store
            .get_counter(series_id, &period)
            .await?
            .unwrap_or_default();
        let last_counter = counter.last;
        // The number is the one stored, never rendered again: a fast series' counter is
        // the end of a block whose numbers may not be issued yet, and date tokens render
        // today's date, not the order's.
        let last_number = match last_counter {
            // The last counter was skipped by a move, never issued: the last number is
            // the last order before it.
            Some(last) if counter.moved_to == Some(last) => self
                .store
                .last_order_below(series_id, &period, last + 1)
                .await?
                .map(|order| order.order_number),
            Some(last) => self
                .store
                .get_numbers(&[(series_id.clone(), period.clone(), last)])
                .await?
                .into_iter()
                .find_map(|entry| match entry {
                    Entry::Order(order) => Some(order.order_number),
                    Entry::Move(_) => None,
                }),
            None => None,
        };
        Ok(SeriesStatus {
            series,
            period,
            last_counter,
            last_number,
        })
    }

    /// The series, as this process knows it if it was read in the period of `now` less
    /// than [`SERIES_MAX_AGE`] ago, else read again.
    pub(super) async fn load_series(
        &self,
        series_id: &SeriesId,
        now: Timestamp,
    ) -> Result<Series, OrderError> {
        let max_age = SignedDuration::try_from(SERIES_MAX_AGE).unwrap_or_default();
        if let Some(known) = self.lock_series().get(series_id)
            && known.series.period(now) == known.period
            && now - known.read_at < max_age
        {
            return Ok(known.series.clone());
        }
        let series = self
            .store
            .get_series(series_id)
            .await?
            .ok_or_else(|| OrderError::SeriesNotFound(series_id.clone()))?;
        self.remember(&series);
        Ok(series)
    }

    /// The series as it numbers: one with a validation code or ranges is set as
    /// numbering first (once), which fixes the code and lets its ranges only grow, and
    /// numbers with the code and ranges that write returns.
    pub(super) async fn numbering(&self, series: Series) -> Result<Series, OrderError> {
        let d = &series.definition;
        if series.numbered || (d.validation_code.is_none() && d.ranges.is_empty()) {
            return Ok(series);
        }
        let numbered = self
            .store
            .set_numbered(&series.series_id)
            .await?
            .ok_or_else(|| OrderError::SeriesNotFound(series.series_id.clone()))?;
        self.remember(&numbered);
        Ok(numbered)
    }

    /// Reads `series` again, for a format version it does not know yet.
    pub(super) async fn refresh_series(&self, series: &mut Series) -> Result<(), OrderError> {
        *series = self
            .store
            .get_series(&series.series_id)
            .await?
            .ok_or_else(|| OrderError::SeriesNotFound(series.series_id.clone()))?;
        self.remember(series);
        Ok(())
    }

    /// Reads `series` again to number with it, set as numbering as
    /// [`Self::numbering`] sets it: a code or ranges it learns are fixed before a number
    /// shows them.
    pub(super) async fn refresh_numbering(&self, series: &mut Series) -> Result<(), OrderError> {
        self.refresh_series(series).await?;
        *series = self.numbering(series.clone()).await?;
        Ok(())
    }

    /// The format of `version` to number in, reading the series again (to number with
    /// it) if this process does not know it; `None` when the series as stored has no
    /// such version: one pending for a period was replaced (a counter that names it was
    /// read before).
    pub(super) async fn stored_format(
        &self,
        series: &mut Series,
        version: u32,
    ) -> Result<Option<NumberFormat>, OrderError> {
        if series.format(version).is_none() {
            self.refresh_numbering(series).await?;
        }
        Ok(series.format(version).cloned())
    }

    /// The format of `version`, which a counter read now names, so the series has it.
    pub(super) async fn format_version(
        &self,
        series: &mut Series,
        version: u32,
    ) -> Result<NumberFormat, OrderError> {
        self.stored_format(series, version).await?.ok_or_else(|| {
            StoreError::Invariant(format!(
                "series {} has no format version {version}",
                series.series_id
            ))
            .into()
        })
    }

    pub(super) fn remember(&self, series: &Series) {
        let now = self.now();
        let known = Known {
            series: series.clone(),
            period: series.period(now),
            read_at: now,
        };
        self.lock_series().insert(series.series_id.clone(), known);
    }

    pub(super) fn low_notice_written(&self, low: &RangeLow) -> bool {
        self.noticed_ranges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(low.series.clone(), low.range.from))
    }

    pub(super) fn remember_low_notice(&self, low: &RangeLow) {
        self.noticed_ranges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((low.series.clone(), low.range.from));
    }

    pub(super) fn lock_series(&self) -> std::sync::MutexGuard<'_, HashMap<SeriesId, Known>> {
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }
}
