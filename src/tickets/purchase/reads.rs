//! The reads a run makes between its writes: the cursors that may still move with its
//! record (a refresh), stripes, a survey of the draw item with stripes, and the claim of
//! more stripe ends.

use tracing::debug;

use super::{Kind, Outcome, Run};
use crate::store::StoreError;
use crate::store::limits::MAX_BATCH_GET_KEYS;
use crate::store::purchases::PurchaseRead;
use crate::tickets::TicketError;

pub(super) struct Read {
    pub(super) stripes: Vec<u32>,
    /// A survey: the draw item is read with the stripes, the first that may still sell.
    pub(super) survey: bool,
}

impl Read {
    pub(super) fn stripes(stripes: Vec<u32>) -> Self {
        Self {
            stripes,
            survey: false,
        }
    }
}

impl Run<'_> {
    pub(super) async fn refresh(&mut self) -> Outcome {
        let Kind::Purchase(request) = &self.kind else {
            return Err(StoreError::Invariant("a snapshot outside a purchase".into()).into());
        };
        // A full stripe stays full unless holds give numbers back: only stripes that may
        // have room are read again.
        let (open, epoch) = {
            let view = self.cache.view();
            (view.stripes.may_sell(), view.epoch)
        };
        let read = self
            .store
            .read_cursors_then_purchase(&request.draw_id, &open, &request.payment_id)
            .await?;
        self.requests += read.requests;
        self.refreshes += 1;
        let absent_at = {
            let mut view = self.cache.view();
            let alone = view.epoch == epoch;
            view.learn_all(&read.stripes);
            view.stale = false;
            debug!(
                read = open.len(),
                remaining = view.stripes.remaining(),
                "cursors refreshed"
            );
            alone.then_some(view.epoch)
        };
        self.absent_at = match read.purchase {
            PurchaseRead::Found(existing) => return self.replay(*existing).await,
            PurchaseRead::Absent => absent_at,
            PurchaseRead::Unknown => None,
        };
        Ok(None)
    }

    pub(super) async fn read(&mut self, read: Read) -> Outcome {
        let draw_id = &self.cache.draw.draw_id;
        if !read.survey {
            self.requests += read.stripes.len().div_ceil(MAX_BATCH_GET_KEYS) as u32;
            let states = self.store.read_stripes(draw_id, &read.stripes).await?;
            let mut view = self.cache.view();
            view.learn_all(&states);
            view.stale &= read.stripes.len() < self.cache.draw.config.stripes() as usize;
            self.reread = true;
            return Ok(None);
        }
        self.requests += 1;
        self.surveyed = true;
        let survey = self
            .store
            .survey(draw_id, &read.stripes)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        self.cache.surveyed(&survey);
        Ok(None)
    }

    pub(super) async fn claim(&mut self, count: u32) -> Outcome {
        self.requests += 1;
        let sold_out = self.cache.view().stripes.unreported_sold_out();
        let claim = self
            .store
            .claim_stripes(&self.cache.draw.draw_id, count, &sold_out)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(self.cache.draw.draw_id.clone()))?;
        self.cache.claimed(&claim);
        Ok(None)
    }
}
