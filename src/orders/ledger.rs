//! A period's numbers in counter order (listing and export), and its audit: counts, gaps
//! with their causes and, for a gapless series, the hash chain recomputed.
//!
//! An audit reads the period page by page and folds each entry as it comes, so its memory
//! holds one page, whatever the period's size. It can stop when its time is up and go on
//! later from where it stopped: the HTTP API audits a large period in several requests.

use std::time::Instant;

use super::{OrderError, OrderService};
use tally_domain::access::SourceAccess;
use tally_domain::audit::{AuditReport, AuditRun, AuditState, CounterState, Entry};
use tally_domain::ids::SeriesId;
use tally_domain::series::{Period, Series};

/// Entries read per page by an audit or an export.
pub const AUDIT_PAGE: usize = 1_000;
/// Numbers of undeclared gaps an audit reads again from the table, to tell a number the
/// index has not caught up with from one that is missing.
const RECHECKED_NUMBERS: u64 = 10_000;
/// Numbers read again at a time.
const RECHECK_BATCH: u64 = 100;
/// Entries a listing reads at least per query while it looks for `limit` orders.
const LIST_READ: usize = 10;
/// Queries one page of a listing may send: a caller bound to sources that hold few of a
/// period's orders gets a short page and a cursor rather than a slow one.
const LIST_ROUNDS: u32 = 16;
/// Room in a page for an order's fields besides its data and credit notes (ids, numbers,
/// times, hash, a void and its reason), and for a move.
const ENTRY_FIELD_BYTES: usize = 2 * 1024;

/// One page of a period.
#[derive(Debug)]
pub struct ListedPage {
    pub series: Series,
    pub period: Period,
    pub entries: Vec<Entry>,
    /// The counter to go on after, when there may be more.
    pub next_after: Option<u64>,
}

/// The audit of a period, or of its entries so far.
#[derive(Debug)]
pub struct Audit {
    pub series: Series,
    pub period: Period,
    /// Counts from the period's start; gaps and credit notes of this part only.
    pub report: AuditReport,
    /// Where to go on, when the audit stopped before the period's end.
    pub resume: Option<AuditState>,
}

/// Where an audit starts and when it stops.
#[derive(Debug, Clone, Default)]
pub struct AuditScope {
    /// Go on from here instead of the period's start.
    pub from: Option<AuditState>,
    /// Stop after the first page read past this moment.
    pub until: Option<Instant>,
    /// Stop after the first page that takes the report's lists (gaps, credited invoices
    /// and their notes) to this many.
    pub most_listed: Option<usize>,
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

    /// Up to `limit` orders of a period ([`Self::period_of`]) after counter `after`, with
    /// the declared moves among them, ending with the entry that takes the page to
    /// `max_bytes` ([`listed_bytes`]); a caller bound to some sources gets their orders
    /// only, and after `LIST_ROUNDS` queries a short page where more may follow. The period
    /// is resolved once by the caller, so that pages of "the current one" stay in one
    /// period when it moves on between them.
    pub async fn list_period(
        &self,
        (series, period): (Series, Period),
        after: u64,
        (limit, max_bytes): (usize, usize),
        access: &SourceAccess,
    ) -> Result<ListedPage, OrderError> {
        let series_id = &series.series_id;
        let mut entries = Vec::new();
        let mut orders = 0;
        let mut bytes = 0;
        let mut after = after;
        let mut next_after = None;
        for _ in 0..LIST_ROUNDS {
            let wanted = (limit - orders).max(LIST_READ);
            let page = self
                .store
                .list_period(series_id, &period, after, wanted)
                .await?;
            let read = page.entries.len();
            let mut taken = 0;
            for entry in page.entries {
                taken += 1;
                after = entry.counter();
                match &entry {
                    Entry::Order(order) if !access.allows(&order.source) => continue,
                    Entry::Order(_) => orders += 1,
                    Entry::Move(_) => {}
                }
                bytes += listed_bytes(&entry);
                entries.push(entry);
                if orders == limit || bytes >= max_bytes {
                    break;
                }
            }
            let more = page.next_after.is_some() || taken < read;
            next_after = more.then_some(after);
            if orders == limit || bytes >= max_bytes || !more {
                break;
            }
        }
        Ok(ListedPage {
            series,
            period,
            entries,
            next_after,
        })
    }

    /// Audits a period ([`Self::period_of`]), or its part from `scope.from` until
    /// `scope.until`; `progress` hears how many entries have been read so far.
    pub async fn audit_period(
        &self,
        (series, period): (Series, Period),
        scope: AuditScope,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Audit, OrderError> {
        let series_id = &series.series_id;
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
        let d = &series.definition;
        let mut run = match scope.from {
            Some(state) => AuditRun::resume(d.gapless, d.start, state),
            None => AuditRun::start(d.gapless, d.start),
        };
        let mut recheck = RECHECKED_NUMBERS;
        let mut read = 0;
        let mut after = run.expected().saturating_sub(1);
        loop {
            let page = self
                .store
                .list_period(series_id, &period, after, AUDIT_PAGE)
                .await?;
            let mut entries = page.entries;
            let written_since = self
                .written_since(series_id, &period, counter.last, &entries)
                .await?;
            if let Some(at) = written_since {
                entries.truncate(at);
            }
            for entry in entries {
                self.recheck(&series, &period, &mut run, entry.counter(), &mut recheck)
                    .await?;
                run.feed(&entry);
                read += 1;
            }
            progress(read);
            if written_since.is_some() {
                break;
            }
            let Some(next) = page.next_after else { break };
            after = next;
            let full = scope.most_listed.is_some_and(|most| run.listed() >= most);
            if full || scope.until.is_some_and(|until| Instant::now() >= until) {
                let (report, state) = run.pause(&counter);
                return Ok(Audit {
                    series,
                    period,
                    report,
                    resume: Some(state),
                });
            }
        }
        if let Some(last) = counter.last {
            self.recheck(&series, &period, &mut run, last + 1, &mut recheck)
                .await?;
        }
        Ok(Audit {
            series,
            period,
            report: run.finish(&counter),
            resume: None,
        })
    }

    /// Where `entries` (in counter order) pass `last`, the counter as the audit read it
    /// first, if the counter read again covers them: written since, they are the next
    /// audit's. Entries past the counter read again are not: a counter behind its own
    /// numbers (restored or edited) is audited against them, and shows as a break.
    async fn written_since(
        &self,
        series_id: &SeriesId,
        period: &Period,
        last: Option<u64>,
        entries: &[Entry],
    ) -> Result<Option<usize>, OrderError> {
        let Some(at) = entries
            .iter()
            .position(|entry| last.is_none_or(|last| entry.counter() > last))
        else {
            return Ok(None);
        };
        let now = self.store.get_counter(series_id, period).await?;
        let covered = now
            .and_then(|counter| counter.last)
            .is_some_and(|now| entries.last().is_some_and(|entry| entry.counter() <= now));
        Ok(covered.then_some(at))
    }

    /// The index follows the table within about a second: before the entry at `next`, the
    /// numbers of an undeclared gap are read again from the table itself (up to `budget`
    /// in all), a hundred at a time, and fed in counter order.
    async fn recheck(
        &self,
        series: &Series,
        period: &Period,
        run: &mut AuditRun,
        next: u64,
        budget: &mut u64,
    ) -> Result<(), OrderError> {
        let mut from = run.expected();
        while from < next && *budget > 0 {
            let count = (next - from).min(RECHECK_BATCH).min(*budget);
            *budget -= count;
            let numbers: Vec<_> = (from..from + count)
                .map(|c| (series.series_id.clone(), period.clone(), c))
                .collect();
            let mut found = self.store.get_numbers(&numbers).await?;
            found.sort_by_key(Entry::counter);
            for entry in &found {
                if entry.counter() >= run.expected() {
                    run.feed(entry);
                }
            }
            from = run.expected().max(from + count);
        }
        Ok(())
    }
}

/// At least what `entry` adds to a page's JSON: an order's data as it was sent, its
/// credit notes, and room for its other fields.
fn listed_bytes(entry: &Entry) -> usize {
    ENTRY_FIELD_BYTES
        + match entry {
            Entry::Order(order) => {
                let notes: usize = order.credit_notes.iter().map(|n| n.len() + 3).sum();
                order.data.as_raw().len() + notes
            }
            Entry::Move(_) => 0,
        }
}
