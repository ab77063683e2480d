//! Series and their issuer (S2): no two series of one issuer render one text. A
//! definition or change is checked against the issuer's item as read, and written with
//! it in one transaction conditional on its version, so a definition that raced another
//! is checked again against the winner. A series defined before issuers existed keeps
//! numbering; it is entered as it is when it is next defined again or changed (or by
//! `tally register-series`), and its overlaps are named wherever it is read.

use tracing::info;

use super::{OrderError, OrderService};
use crate::store::issuers::MAX_ISSUER_FORMATS;
use crate::store::retry;
use tally_domain::series::Series;
use tally_domain::series::issuer::{Issuer, Overlap, Refusal};

/// What entering a series found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entered {
    Now,
    /// It was entered before.
    Already,
}

impl From<Refusal> for OrderError {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Overlaps(overlap) => Self::FormatOverlaps(Box::new(overlap)),
            Refusal::Repeats(overlap) => Self::FormatRepeats(Box::new(overlap)),
            Refusal::Full { max } => Self::IssuerFull(max),
        }
    }
}

impl OrderService {
    /// The issuer's item with `changed` entered, once the texts it renders and `read` did
    /// not are checked against every other series of its issuer; `None` when the item
    /// holds it as it is.
    pub(super) async fn admit(
        &self,
        read: Option<&Series>,
        changed: &Series,
    ) -> Result<Option<Issuer>, OrderError> {
        let issuer = self.store.get_issuer(&changed.definition.issuer).await?;
        let today = changed.date(self.now());
        Ok(issuer.admit(read, changed, &today, MAX_ISSUER_FORMATS)?)
    }

    /// Every other series of the issuer of `series` that could render a text it could
    /// (none for a series defined under the rule).
    pub async fn overlaps(&self, series: &Series) -> Result<Vec<Overlap>, OrderError> {
        let issuer = self.store.get_issuer(&series.definition.issuer).await?;
        Ok(issuer.overlaps(series, &series.date(self.now())))
    }

    /// Enters a series on its issuer's item as it is, overlaps and all, unless it is
    /// there: a series defined before issuers existed joins its issuer, so that no later
    /// definition can render its texts. One whose formats the item has no room for is
    /// refused (`IssuerFull`), as a definition would be.
    pub async fn enter_series(&self, series: &Series) -> Result<Entered, OrderError> {
        for attempt in retry::ORDER_WRITE.each() {
            let issuer = self.store.get_issuer(&series.definition.issuer).await?;
            let Some(next) = issuer.enter_existing(series, MAX_ISSUER_FORMATS)? else {
                return Ok(Entered::Already);
            };
            if self.store.put_issuer(&next).await? {
                info!(
                    series = %series.series_id,
                    issuer = %series.definition.issuer,
                    "series entered on its issuer"
                );
                return Ok(Entered::Now);
            }
            retry::ORDER_WRITE.pause(attempt).await;
        }
        Err(retry::ORDER_WRITE.exhausted().into())
    }
}
