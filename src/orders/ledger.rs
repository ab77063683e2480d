//! A period's numbers in counter order (listing and export), and its audit: counts, gaps
//! with their causes and, for a gapless series, the hash chain recomputed.

use std::collections::BTreeMap;

use super::{OrderError, OrderService};
use crate::domain::audit::{AuditReport, CounterState, Entry, audit};
use crate::domain::ids::SeriesId;
use crate::domain::series::{Period, Series};

/// Entries read per page by an audit or an export.
pub const AUDIT_PAGE: usize = 1_000;
/// Numbers of undeclared gaps an audit reads again from the table, to tell a number the
/// index has not caught up with from one that is missing.
const RECHECKED_NUMBERS: u64 = 10_000;

/// One page of a period.
#[derive(Debug)]
pub struct ListedPage {
    pub series: Series,
    pub period: Period,
    pub entries: Vec<Entry>,
    /// The counter to go on after, when there may be more.
    pub next_after: Option<u64>,
}

/// The audit of a period.
#[derive(Debug)]
pub struct Audit {
    pub series: Series,
    pub period: Period,
    pub report: AuditReport,
}

impl OrderService {
    /// The period named `period` (the current one when `None`) of a series.
    pub async fn period_of(
        &self,
        series_id: &SeriesId,
        period: Option<&str>,
    ) -> Result<(Series, Period), OrderError> {
        let now = self.now();
        let series = self.load_series(series_id, now).await?;
        let period = match period {
            Some(text) => Period::parse(series.definition.reset, text)?,
            None => series.period(now),
        };
        Ok((series, period))
    }

    /// Up to `limit` entries of a period after counter `after`.
    pub async fn list_period(
        &self,
        series_id: &SeriesId,
        period: Option<&str>,
        after: u64,
        limit: usize,
    ) -> Result<ListedPage, OrderError> {
        let (series, period) = self.period_of(series_id, period).await?;
        let page = self
            .store
            .list_period(series_id, &period, after, limit)
            .await?;
        Ok(ListedPage {
            series,
            period,
            entries: page.entries,
            next_after: page.next_after,
        })
    }

    /// Audits a period; `progress` hears how many entries have been read so far.
    pub async fn audit_period(
        &self,
        series_id: &SeriesId,
        period: Option<&str>,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Audit, OrderError> {
        let (series, period) = self.period_of(series_id, period).await?;
        // The counter first: every entry it counts was written before it was read.
        let stored = self
            .store
            .get_counter(series_id, &period)
            .await?
            .unwrap_or_default();
        let counter = CounterState {
            last: stored.last,
            head: stored.head,
        };
        let mut entries: BTreeMap<u64, Entry> = BTreeMap::new();
        let mut after = 0;
        loop {
            let page = self
                .store
                .list_period(series_id, &period, after, AUDIT_PAGE)
                .await?;
            for entry in page.entries {
                entries.insert(entry.counter(), entry);
            }
            progress(entries.len() as u64);
            match page.next_after {
                Some(next) => after = next,
                None => break,
            }
        }
        self.recheck_gaps(&series, &period, &counter, &mut entries)
            .await?;
        let entries: Vec<Entry> = entries.into_values().collect();
        let report = audit(
            series.definition.gapless,
            series.definition.start,
            &counter,
            &entries,
        );
        Ok(Audit {
            series,
            period,
            report,
        })
    }

    /// The index follows the table within about a second: numbers of undeclared gaps are
    /// read again from the table itself before they are reported.
    async fn recheck_gaps(
        &self,
        series: &Series,
        period: &Period,
        counter: &CounterState,
        entries: &mut BTreeMap<u64, Entry>,
    ) -> Result<(), OrderError> {
        let listed: Vec<Entry> = entries.values().cloned().collect();
        let first = audit(
            series.definition.gapless,
            series.definition.start,
            counter,
            &listed,
        );
        let numbers: Vec<_> = first
            .gaps
            .iter()
            .filter(|gap| gap.declared.is_none())
            .flat_map(|gap| gap.from..=gap.to)
            .take(RECHECKED_NUMBERS as usize)
            .map(|c| (series.series_id.clone(), period.clone(), c))
            .collect();
        if numbers.is_empty() {
            return Ok(());
        }
        for entry in self.store.get_numbers(&numbers).await? {
            entries.insert(entry.counter(), entry);
        }
        Ok(())
    }
}
