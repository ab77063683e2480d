//! Changing the format of a series for the periods that have not started: from the
//! current period if it has no number, else from the next. The counter of the first
//! period fixes its version with the series' change, in one transaction; a version still
//! pending for that period is replaced, unless the period after it numbers in it already
//! (a change made as the period turns).

use tracing::info;

use super::{OrderError, OrderService, entries};
use crate::store::orders::{FormatStart, SeriesWrite};
use crate::store::retry;
use tally_domain::ids::SeriesId;
use tally_domain::journal::Operator;
use tally_domain::series::{
    FormatVersion, MAX_FORMAT_VERSIONS, NumberFormat, Period, Reset, Series, checked_format,
};

impl OrderService {
    /// Gives `series_id` the format `text` for the periods without numbers. A series that
    /// never resets has no period after its only one (`FormatInUse`); in one that resets,
    /// a next period with numbers means that its periods turned while the change was
    /// made: the current period is taken again once, then `PeriodTurning`.
    pub(super) async fn change_format(
        &self,
        series_id: &SeriesId,
        text: &str,
        by: &Operator,
    ) -> Result<(), OrderError> {
        let mut series = self.stored_series(series_id).await?;
        let format = checked_format(text, series.definition.reset)?;
        let mut turned = false;
        for _ in retry::ORDER_WRITE.each() {
            if series.definition.format == format {
                return Ok(());
            }
            match self.format_from_first_free(&series, &format, by).await? {
                SeriesWrite::Written => {
                    self.refresh_series(&mut series).await?;
                    return Ok(());
                }
                SeriesWrite::PeriodStarted if series.definition.reset == Reset::Never => {
                    return Err(OrderError::FormatInUse);
                }
                SeriesWrite::PeriodStarted if !turned => turned = true,
                SeriesWrite::PeriodStarted => return Err(OrderError::PeriodTurning),
                SeriesWrite::SeriesChanged | SeriesWrite::IssuerChanged => {
                    self.refresh_series(&mut series).await?;
                }
            }
        }
        Err(retry::ORDER_WRITE.exhausted().into())
    }

    /// Writes `format` from the current period of `series`, or from the next if the
    /// current one has numbers: the first write that holds, the first that must read the
    /// series again, or `PeriodStarted` when neither period can take it.
    async fn format_from_first_free(
        &self,
        series: &Series,
        format: &NumberFormat,
        by: &Operator,
    ) -> Result<SeriesWrite, OrderError> {
        let reset = series.definition.reset;
        let current = series.period(self.now());
        let targets = [Some(current.clone()), current.next(reset)];
        for target in targets.into_iter().flatten() {
            let version = series.latest_version() + 1;
            let (changed, replaced) = with_format(series, format, version, &target)?;
            changed.check(self.now())?;
            let issuer = self.admit(Some(series), &changed).await?;
            let entry = entries::format_changed(&changed, version, &target, by, self.now());
            let start = FormatStart {
                version,
                from: &target,
                replaces: replaced.zip(target.next(reset)),
            };
            match self
                .store
                .change_format(series, &changed, &start, issuer.as_ref(), &entry)
                .await?
            {
                SeriesWrite::PeriodStarted => {}
                SeriesWrite::Written => {
                    info!(format = format.as_str(), from = %target, "series format changed");
                    return Ok(SeriesWrite::Written);
                }
                reread => return Ok(reread),
            }
        }
        Ok(SeriesWrite::PeriodStarted)
    }
}

/// `series` numbering new periods in `format` (as `version`) from `target` on, and the
/// version it replaces: a format still pending for `target` is replaced, not kept.
fn with_format(
    series: &Series,
    format: &NumberFormat,
    version: u32,
    target: &Period,
) -> Result<(Series, Option<u32>), OrderError> {
    let mut changed = series.clone();
    let replaced = changed
        .formats
        .pop_if(|f| f.from.as_ref() == Some(target))
        .map(|f| f.version);
    changed.formats.push(FormatVersion {
        version,
        format: format.clone(),
        from: Some(target.clone()),
    });
    if changed.formats.len() > MAX_FORMAT_VERSIONS {
        return Err(OrderError::TooManyFormats(MAX_FORMAT_VERSIONS));
    }
    changed.definition.format = format.clone();
    changed.revision = series.revision + 1;
    Ok((changed, replaced))
}
