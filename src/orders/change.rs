//! Changing a series: moving the counter of the current period forward (a declared gap,
//! with its reason; in a gapless series a link of the chain) and changing the format of
//! the periods that have not started.

use chrono::Utc;
use tracing::{info, instrument};

use super::{MAX_ATTEMPTS, OrderError, OrderService, SeriesStatus};
use crate::domain::audit::Entry;
use crate::domain::chain::{GENESIS, from_hex, move_link, to_hex};
use crate::domain::ids::SeriesId;
use crate::domain::order::{Move, Reason};
use crate::domain::series::{FormatVersion, Series, checked_format};
use crate::store::orders::{CounterMoved, FormatChange};
use crate::store::{StoreError, backoff};

/// What `PATCH /series/{series_id}` asks for, already checked.
#[derive(Debug, Clone, Default)]
pub struct SeriesChange {
    /// The format of the periods that have not started.
    pub format: Option<String>,
    /// The next counter of the current period, and why.
    pub next: Option<(u64, Reason)>,
}

impl OrderService {
    /// Applies a change (the format first, then the move); each part is idempotent, so a
    /// repeated request answers as the first did.
    #[instrument(skip(self, change))]
    pub async fn change_series(
        &self,
        series_id: &SeriesId,
        change: SeriesChange,
    ) -> Result<SeriesStatus, OrderError> {
        if let Some(format) = &change.format {
            self.change_format(series_id, format).await?;
        }
        if let Some((next, reason)) = change.next {
            self.move_next(series_id, next, reason).await?;
        }
        self.series_status(series_id).await
    }

    async fn change_format(&self, series_id: &SeriesId, text: &str) -> Result<(), OrderError> {
        let mut series = self.load_series(series_id, self.now()).await?;
        self.refresh_series(&mut series).await?;
        let format = checked_format(text, series.definition.reset)?;
        for _ in 0..MAX_ATTEMPTS {
            if series.definition.format == format {
                return Ok(());
            }
            let current = series.period(self.now());
            let targets = [Some(current.clone()), current.next(series.definition.reset)];
            let mut reread = false;
            for target in targets.into_iter().flatten() {
                let version = FormatVersion {
                    version: series.latest_version() + 1,
                    format: format.clone(),
                    from: Some(target.clone()),
                };
                match self.store.change_format(&series, &version, &target).await? {
                    FormatChange::Changed => {
                        info!(format = text, from = %target, "series format changed");
                        self.refresh_series(&mut series).await?;
                        return Ok(());
                    }
                    FormatChange::PeriodStarted => {}
                    FormatChange::SeriesChanged => {
                        reread = true;
                        break;
                    }
                }
            }
            if !reread {
                // Every period it could start from has numbers: only a series that never
                // resets has no later one.
                return Err(OrderError::FormatInUse);
            }
            self.refresh_series(&mut series).await?;
        }
        Err(StoreError::Contention {
            attempts: MAX_ATTEMPTS,
        }
        .into())
    }

    /// Moves the counter of the current period so that the next number is `next`.
    async fn move_next(
        &self,
        series_id: &SeriesId,
        next: u64,
        reason: Reason,
    ) -> Result<Move, OrderError> {
        let series = self.load_series(series_id, self.now()).await?;
        let period = series.period(self.now());
        for attempt in 1..=MAX_ATTEMPTS {
            let counter = self
                .store
                .get_counter(series_id, &period)
                .await?
                .unwrap_or_default();
            let last = counter.last.unwrap_or(series.definition.start - 1);
            if next <= last + 1 {
                return self
                    .earlier_move(&series, &period, next, &reason, last)
                    .await;
            }
            let wall = Utc::now().timestamp_millis();
            if counter.pending.as_ref().is_some_and(|p| p.until >= wall) {
                // A gapless writer holds the counter: wait for its transaction.
                backoff(attempt).await;
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
            match self
                .store
                .move_counter(series_id, &period, counter.last, &moved, version, wall)
                .await?
            {
                CounterMoved::Moved => {
                    info!(from = moved.from, to = moved.to, "counter moved");
                    return Ok(moved);
                }
                CounterMoved::Changed => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention {
            attempts: MAX_ATTEMPTS,
        }
        .into())
    }

    /// A move to a number already reached: the same move done before (a repeated
    /// request), or a move backwards.
    async fn earlier_move(
        &self,
        series: &Series,
        period: &crate::domain::series::Period,
        next: u64,
        reason: &Reason,
        last: u64,
    ) -> Result<Move, OrderError> {
        if next > series.definition.start {
            let key = [(series.series_id.clone(), period.clone(), next - 1)];
            for entry in self.store.get_numbers(&key).await? {
                if let Entry::Move(moved) = entry
                    && moved.to == next - 1
                    && moved.reason == *reason
                {
                    return Ok(moved);
                }
            }
        }
        Err(OrderError::MoveNotForward { last })
    }
}
