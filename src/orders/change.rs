//! Changing a series: its validation code (until it numbers), its authorised ranges
//! (replaced freely until it numbers, then only extended), the format of the periods that
//! have not started (`reformat`), and moving the counter of the current period forward (a
//! declared gap, with its reason; in a gapless series a link of the chain).

use jiff::Timestamp;
use tally_domain::time::Epoch;
use tracing::{info, instrument};

use super::{OrderError, OrderService, SeriesStatus, entries};
use crate::store::orders::{CounterMoved, SeriesWrite};
use crate::store::{StoreError, retry};
use tally_domain::audit::Entry;
use tally_domain::chain::{GENESIS, from_hex, move_link, to_hex};
use tally_domain::ids::SeriesId;
use tally_domain::journal::Operator;
use tally_domain::order::{Move, Reason};
use tally_domain::series::{Period, Ranges, Series, SeriesError, ValidationCode};

/// What `PATCH /series/{series_id}` asks for, already checked: one change, written in
/// one transaction, so a refused request changes nothing.
#[derive(Debug, Clone)]
pub enum SeriesChange {
    /// The validation code, the authorised ranges and when they run low.
    Settings(SettingsChange),
    /// The format of the periods that have not started.
    Format(String),
    /// The counter of the current period moved forward.
    Move {
        /// The next number of the current period.
        next: u64,
        /// Why the numbers skipped are not used.
        reason: Reason,
        /// The period `next` is for, as the caller names it: a move repeated after that
        /// period ended answers the move made in it, and moves no other. `None`: the
        /// period current when the move arrives.
        period: Option<String>,
    },
}

/// The settings a change gives a series; `None` keeps what it has.
#[derive(Debug, Clone, Default)]
pub struct SettingsChange {
    /// The code `{code}` shows.
    pub validation_code: Option<ValidationCode>,
    /// The whole list of authorised ranges.
    pub ranges: Option<Ranges>,
    /// When `Range Running Low` fires.
    pub range_low_percent: Option<u8>,
}

impl OrderService {
    /// Applies a change, journalled under `by`; a repeated request answers as the first
    /// did and journals nothing.
    #[instrument(skip(self, change, by))]
    pub async fn change_series(
        &self,
        series_id: &SeriesId,
        change: SeriesChange,
        by: &Operator,
    ) -> Result<SeriesStatus, OrderError> {
        match change {
            SeriesChange::Settings(settings) => {
                self.change_settings(series_id, &settings, by).await?;
            }
            SeriesChange::Format(format) => self.change_format(series_id, &format, by).await?,
            SeriesChange::Move {
                next,
                reason,
                period,
            } => {
                self.move_next(series_id, next, reason, period.as_deref(), by)
                    .await?;
            }
        }
        self.series_status(series_id).await
    }

    /// The series read again, as stored.
    pub(super) async fn stored_series(&self, series_id: &SeriesId) -> Result<Series, OrderError> {
        let mut series = self.load_series(series_id, self.now()).await?;
        self.refresh_series(&mut series).await?;
        Ok(series)
    }

    /// Writes the next revision of a series, `changed` from `read` by `apply`, until it
    /// holds or the change is refused.
    async fn revise(
        &self,
        series_id: &SeriesId,
        by: &Operator,
        apply: impl Fn(&Series) -> Result<Option<Series>, OrderError>,
    ) -> Result<(), OrderError> {
        let mut series = self.stored_series(series_id).await?;
        for _ in retry::ORDER_WRITE.each() {
            let Some(mut changed) = apply(&series)? else {
                return Ok(());
            };
            changed.check(self.now())?;
            changed.revision = series.revision + 1;
            let issuer = self.admit(Some(&series), &changed).await?;
            let entry = entries::settings_changed(&series, &changed, by, self.now());
            match self
                .store
                .replace_series(&series, &changed, issuer.as_ref(), &entry)
                .await?
            {
                SeriesWrite::Written => {
                    self.remember(&changed);
                    return Ok(());
                }
                SeriesWrite::SeriesChanged
                | SeriesWrite::PeriodStarted
                | SeriesWrite::IssuerChanged => {
                    self.refresh_series(&mut series).await?;
                }
            }
        }
        Err(retry::ORDER_WRITE.exhausted().into())
    }

    /// The validation code, the ranges and their low share. A series that numbers keeps
    /// its code and extends its ranges only: a writer that read it earlier knows a first
    /// part of its ranges, never a range that was taken back.
    async fn change_settings(
        &self,
        series_id: &SeriesId,
        change: &SettingsChange,
        by: &Operator,
    ) -> Result<(), OrderError> {
        let last = match &change.ranges {
            Some(_) => {
                let series = self.load_series(series_id, self.now()).await?;
                let period = series.period(self.now());
                self.store
                    .get_counter(series_id, &period)
                    .await?
                    .and_then(|c| c.last)
            }
            None => None,
        };
        self.revise(series_id, by, |series| {
            let d = &series.definition;
            let mut changed = series.clone();
            if let Some(code) = &change.validation_code
                && d.validation_code.as_ref() != Some(code)
            {
                if series.numbered {
                    return Err(OrderError::CodeInUse);
                }
                changed.definition.validation_code = Some(code.clone());
            }
            if let Some(ranges) = &change.ranges
                && *ranges != d.ranges
            {
                check_ranges(series, ranges, last)?;
                changed.definition.ranges = ranges.clone();
            }
            if let Some(percent) = change.range_low_percent {
                let ranges = changed.definition.ranges.clone();
                changed.definition = changed.definition.clone().with_ranges(ranges, percent)?;
            }
            Ok((changed != *series).then_some(changed))
        })
        .await?;
        info!("series settings changed");
        Ok(())
    }

    /// Moves the counter of the current period so that the next number is `next`; a move
    /// `named` for another period is only the repeat of one made in it.
    async fn move_next(
        &self,
        series_id: &SeriesId,
        next: u64,
        reason: Reason,
        named: Option<&str>,
        by: &Operator,
    ) -> Result<Move, OrderError> {
        let series = self.load_series(series_id, self.now()).await?;
        let period = series.period(self.now());
        if let Some(named) = named {
            let named = Period::parse(series.definition.reset, named)?;
            if named != period {
                return match self.made_move(&series, &named, next, &reason).await? {
                    Some(moved) => Ok(moved),
                    None => Err(OrderError::PeriodNotCurrent {
                        named,
                        current: period,
                    }),
                };
            }
        }
        for attempt in retry::ORDER_WRITE.each() {
            let counter = self
                .store
                .get_counter(series_id, &period)
                .await?
                .unwrap_or_default();
            let last = counter.last.unwrap_or(series.definition.start - 1);
            if next <= last + 1 {
                // A number already reached: the same move made before (a repeated
                // request), or a move backwards.
                return self
                    .made_move(&series, &period, next, &reason)
                    .await?
                    .ok_or(OrderError::MoveNotForward { last });
            }
            let wall = Timestamp::now().epoch_millis();
            if counter.pending.as_ref().is_some_and(|p| p.until >= wall) {
                // A gapless writer holds the counter: wait for its transaction.
                retry::ORDER_WRITE.pause(attempt).await;
                continue;
            }
            let mut moved = Move {
                series: series_id.clone(),
                from: last + 1,
                to: next - 1,
                reason: reason.clone(),
                at: self.now(),
                hash: None,
            };
            if series.definition.gapless {
                let head = match &counter.head {
                    Some(head) => from_hex(head).ok_or_else(|| {
                        StoreError::Invariant(format!("the chain head {head} is not a hash"))
                    })?,
                    None => GENESIS,
                };
                moved.hash = Some(to_hex(&move_link(&head, &moved)));
            }
            let version = counter
                .format_version
                .unwrap_or_else(|| series.latest_version());
            let low = series.low_passed(counter.last, moved.to, self.now());
            let entry = entries::counter_moved(&series, &period, &moved, by);
            match self
                .store
                .move_counter(
                    series_id,
                    &period,
                    counter.last,
                    &moved,
                    version,
                    wall,
                    low.as_ref(),
                    Some(&entry),
                )
                .await?
            {
                CounterMoved::Moved => {
                    info!(from = moved.from, to = moved.to, "counter moved");
                    return Ok(moved);
                }
                CounterMoved::Changed => retry::ORDER_WRITE.pause(attempt).await,
            }
        }
        Err(retry::ORDER_WRITE.exhausted().into())
    }

    /// The move of `period` to `next` for `reason`, if it was made: it is kept under the
    /// number it ends at.
    async fn made_move(
        &self,
        series: &Series,
        period: &Period,
        next: u64,
        reason: &Reason,
    ) -> Result<Option<Move>, OrderError> {
        if next <= series.definition.start {
            return Ok(None);
        }
        let key = [(series.series_id.clone(), period.clone(), next - 1)];
        for entry in self.store.get_numbers(&key).await? {
            if let Entry::Move(moved) = entry
                && moved.to == next - 1
                && moved.reason == *reason
            {
                return Ok(Some(moved));
            }
        }
        Ok(None)
    }
}

/// Whether `series` may take `ranges`: a series defined with ranges keeps some; until it
/// numbers they may change, from then on they only grow, each new one past the counter.
fn check_ranges(series: &Series, ranges: &Ranges, last: Option<u64>) -> Result<(), OrderError> {
    let d = &series.definition;
    if d.ranges.is_empty() || ranges.is_empty() {
        return Err(SeriesError::Ranges(
            "a series is defined with ranges or without; one with ranges keeps at least one".into(),
        )
        .into());
    }
    let kept = if series.numbered {
        let old = d.ranges.as_slice();
        ranges.as_slice().get(..old.len()) == Some(old)
    } else {
        true
    };
    if !kept {
        return Err(SeriesError::RangeInUse(
            "the series numbers: its ranges never change or disappear, new ones follow them".into(),
        )
        .into());
    }
    d.ranges.check_change(ranges, last, d.start)?;
    Ok(())
}
