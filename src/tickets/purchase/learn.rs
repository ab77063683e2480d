//! What a purchase learns from a cancelled transaction: the stripes it met, whether its
//! record exists, the payer's allowance; and, after a conflict or throttling, a backoff
//! before it tries again.

use tracing::debug;

use super::{Outcome, PurchaseRun};
use crate::store::StoreError;
use crate::store::purchases::Cancellation;
use crate::store::retry;

impl PurchaseRun<'_> {
    /// Learns from a cancelled transaction; a miss on a stale cursor is planned again at
    /// once, from what the cancellation returned.
    pub(super) async fn learn(&mut self, stripes: &[u32], cancellation: Cancellation) -> Outcome {
        debug!(
            attempt = self.attempts,
            ?stripes,
            stale = ?cancellation.stale_stripes,
            conflict = cancellation.conflict,
            throttled = cancellation.throttled,
            "purchase attempt cancelled"
        );
        if let Some(existing) = cancellation.existing {
            return self.replay(existing).await.map(Some);
        }
        if let Some(record) = cancellation.payer {
            // The payer's terms or spend moved: planned again, at the time of the next
            // attempt (a count of a later window is never overwritten).
            if let Some(payer) = &self.request.payer_id {
                self.payer.learn(&self.rules, payer, record);
            }
            self.created_at = (self.clock)();
        }
        // Tickets behind a stale cursor are expected: the cursor check failed too.
        // A ticket taken while every cursor matched would mean a broken invariant.
        if cancellation.stale_stripes.is_empty() && !cancellation.taken_tickets.is_empty() {
            return Err(StoreError::Invariant(format!(
                "tickets {:?} exist behind their stripe cursor",
                cancellation.taken_tickets
            ))
            .into());
        }
        {
            let mut view = self.cache.view();
            // The transaction checked every condition at one point in time: its record's
            // passed, so the record was absent then. That holds for refusals only if the
            // view learned nothing newer meanwhile.
            let alone = view.epoch == self.epoch;
            view.learn_all(&cancellation.stale_stripes);
            let decided = !cancellation.conflict && !cancellation.throttled;
            self.absent_at = (alone && decided).then_some(view.epoch);
            // Every condition was checked at one point in time, the record's passed: the
            // payer is at the cap for this purchase.
            // Holds of the payer that ended still count until given back, which happens
            // first.
            let now = self.now_millis();
            if let (true, Some(allowance)) = (decided, &cancellation.allowance)
                && !allowance.has_ended(now)
            {
                let max = self.cache.draw.config.max_per_payer().unwrap_or(0);
                self.payer_left = Some(max.saturating_sub(allowance.held));
            }
            // A miss corrects the stripes it touched; a lucky dip's miss on stripes that
            // others sell from means the rest of the view is old too, and one read
            // corrects it all. Chosen numbers need only the stripes they lie in.
            let shared_miss = self.request.numbers.is_none()
                && view.stripes.all_handed()
                && cancellation
                    .stale_stripes
                    .iter()
                    .any(|(s, _)| !view.stripes.owns(*s));
            view.stale |= shared_miss;
        }
        let now = self.now_millis();
        if let (Some(payer), Some(allowance)) = (&self.request.payer_id, &cancellation.allowance)
            && allowance.has_ended(now)
        {
            self.requests += 1;
            self.store
                .give_back_ended_holds(&self.request.draw_id, payer, &allowance.holds, now, true)
                .await?;
        }
        if cancellation.conflict || cancellation.throttled {
            self.conflicts += 1;
            retry::PURCHASE.pause(self.conflicts).await;
        }
        Ok(None)
    }
}
