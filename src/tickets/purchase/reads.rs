//! The reads a purchase makes between its writes: the cursors that may still move with
//! its record, stripes before a first write or after holds ended, how far the draw's
//! `opened` has handed out ends (a survey), and the claim of more ends.

use std::time::Instant;

use tracing::debug;

use super::{Outcome, PurchaseRun, spread};
use crate::store::limits::MAX_BATCH_GET_KEYS;
use crate::store::purchases::PurchaseRead;
use crate::tickets::TicketError;

/// Once every stripe end is out, processes that find it out spread their first read of
/// the cursors over this many round trips of their claim. Read at once, they would all see
/// the same few stripes with room and all buy from them at once, and most would miss.
const ENTRY_SPREAD: f64 = 8.0;

/// The stripes a survey reads with the draw item.
pub(super) struct SurveyRead {
    pub(super) stripes: Vec<u32>,
    /// They are every stripe that may still sell, as far as the view knows.
    pub(super) complete: bool,
}

impl PurchaseRun<'_> {
    /// Reads the cursors of the draw that may still move, then the purchase record.
    pub(super) async fn refresh(&mut self) -> Outcome {
        // A full stripe stays full unless holds give numbers back: only stripes that may
        // have room are read again.
        let (open, epoch): (Vec<u32>, u64) = {
            let view = self.cache.view();
            (view.stripes.may_sell(), view.epoch)
        };
        let read = self
            .store
            .read_cursors_then_purchase(&self.request.draw_id, &open, &self.request.payment_id)
            .await?;
        self.requests += read.requests;
        self.refreshes += 1;
        let (alone, epoch) = {
            let mut view = self.cache.view();
            let alone = view.epoch == epoch;
            view.learn_all(&read.stripes);
            view.stale = false;
            debug!(
                read = open.len(),
                remaining = view.stripes.remaining(),
                "cursors refreshed"
            );
            (alone, view.epoch)
        };
        self.absent_at = match read.purchase {
            PurchaseRead::Found(existing) => return self.replay(*existing).await.map(Some),
            PurchaseRead::Absent if alone => Some(epoch),
            PurchaseRead::Absent | PurchaseRead::Unknown => None,
        };
        Ok(None)
    }

    /// Reads how far `opened` has gone, with stripes, into the view.
    pub(super) async fn survey(&mut self, read: SurveyRead) -> Outcome {
        self.requests += 1;
        self.surveyed = true;
        let survey = self
            .store
            .survey(&self.request.draw_id, &read.stripes)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(self.request.draw_id.clone()))?;
        self.cache.surveyed(&survey, read.complete);
        Ok(None)
    }

    /// Reads stripes fresh into the view.
    pub(super) async fn read_stripes(&mut self, stripes: &[u32]) -> Outcome {
        self.requests += stripes.len().div_ceil(MAX_BATCH_GET_KEYS) as u32;
        let states = self
            .store
            .read_stripes(&self.request.draw_id, stripes)
            .await?;
        drop(self.cache.learn_stripes(&states));
        Ok(None)
    }

    /// Claims `count` more stripe ends from the draw's `opened`.
    pub(super) async fn claim(&mut self, count: u32) -> Outcome {
        self.requests += 1;
        let sold_out = self.cache.view().stripes.unreported_sold_out();
        let sent = Instant::now();
        let claim = self
            .store
            .claim_stripes(&self.request.draw_id, count, &sold_out)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(self.request.draw_id.clone()))?;
        self.cache.claimed(&claim);
        if claim.first >= 2 * u64::from(self.cache.draw.config.stripes()) {
            spread(sent.elapsed().mul_f64(ENTRY_SPREAD)).await;
        }
        Ok(None)
    }
}
