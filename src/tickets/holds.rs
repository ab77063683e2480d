//! Holds as the service offers them: make one, read it, release it, pay for it. A hold is made
//! and paid for by the run of `purchase/`, as a purchase is.

use tally_domain::time::Epoch;
use tracing::{info, instrument};

use super::purchase::{ConvertRequest, HoldReceipt, Kind, Run};
use super::selection::check_selection;
use super::{PurchaseReceipt, TicketError, TicketService};
use crate::store::allowances::CountedEnd;
use crate::store::purchases::Commit;
use crate::store::retry;
use tally_domain::hold::{Hold, HoldEnd, HoldRequest, HoldStatus};
use tally_domain::ids::{DrawId, HoldId};

impl TicketService {
    /// Holds numbers for one buyer until the draw's `hold_seconds` pass (never past the
    /// close), all or nothing, exactly once per hold id.
    #[instrument(skip_all, fields(draw_id = %request.draw_id, hold_id = %request.hold_id, quantity = request.quantity))]
    pub async fn hold(&self, request: HoldRequest) -> Result<HoldReceipt, TicketError> {
        let cache = self.draw_cache(&request.draw_id).await?;
        let config = cache.draw.config;
        check_selection(request.quantity, request.numbers.as_deref(), &config)?;
        let max_held_per_payer = config.max_held_per_payer();
        if u64::from(request.quantity) > max_held_per_payer {
            return Err(TicketError::PayerHoldLimit {
                max_held_per_payer,
                left: max_held_per_payer,
            });
        }
        if let Some(max_per_payer) = config.max_per_payer()
            && u64::from(request.quantity) > max_per_payer
        {
            return Err(TicketError::PayerLimit {
                max_per_payer,
                left: max_per_payer,
            });
        }
        let context = (self.clock.clone(), self.spend.clone());
        let run = Run::new(&self.store, cache, Kind::Hold(request), 0, context);
        run.run().await?.hold()
    }

    #[instrument(skip(self))]
    pub async fn get_hold(&self, draw_id: &DrawId, hold_id: &HoldId) -> Result<Hold, TicketError> {
        self.draw_cache(draw_id).await?;
        self.store
            .get_hold(draw_id, hold_id)
            .await?
            .ok_or_else(|| TicketError::HoldNotFound(hold_id.clone()))
    }

    /// The status of a hold this process has just made: its transaction found every
    /// stripe of its numbers open, so it lives, unless its deadline (the close's, for a
    /// hold made just before `closes_at`) passed while it was made.
    pub fn new_hold_status(&self, hold: &Hold) -> HoldStatus {
        hold.status_at(self.now())
    }

    /// What a hold is now, by this process's clock. A hold that lives by its deadline is
    /// read against its stripes: once the close has reached one of them, no payment for it
    /// can commit, and it reads `expired`.
    pub async fn hold_status(&self, hold: &Hold) -> Result<HoldStatus, TicketError> {
        let now = self.now();
        if hold.status_at(now) != HoldStatus::Held {
            return Ok(hold.status_at(now));
        }
        let cache = self.draw_cache(&hold.draw_id).await?;
        let mut stripes: Vec<u32> = hold.tickets.iter().map(|&n| cache.locate(n).0).collect();
        stripes.sort_unstable();
        stripes.dedup();
        let states = self.store.read_stripes(&hold.draw_id, &stripes).await?;
        Ok(if states.iter().any(|(_, state)| state.closed) {
            hold.status_after_close(now)
        } else {
            hold.status_at(now)
        })
    }

    /// Buys exactly a live hold's numbers, once.
    #[instrument(skip_all, fields(draw_id = %request.draw_id, payment_id = %request.payment_id, hold_id = %request.hold_id))]
    pub async fn convert(&self, request: ConvertRequest) -> Result<PurchaseReceipt, TicketError> {
        let cache = self.draw_cache(&request.draw_id).await?;
        let context = (self.clock.clone(), self.spend.clone());
        let run = Run::convert(&self.store, cache, request, context).await?;
        run.run().await?.purchase()
    }

    /// Gives a live hold's numbers back at once. Releasing a hold that ended answers it
    /// as it is.
    #[instrument(skip(self))]
    pub async fn release_hold(
        &self,
        draw_id: &DrawId,
        hold_id: &HoldId,
    ) -> Result<Hold, TicketError> {
        let cache = self.draw_cache(draw_id).await?;
        let capped = cache.draw.config.max_per_payer().is_some();
        let mut counted = Some(CountedEnd::Released { capped });
        let mut conflicts = 0;
        for _ in retry::RELEASE.each() {
            let hold = self.get_hold(draw_id, hold_id).await?;
            let now = self.now();
            if hold.status_at(now) != HoldStatus::Held {
                return Ok(hold);
            }
            let located: Vec<(u32, u64)> = hold.tickets.iter().map(|&n| cache.locate(n)).collect();
            let takes = cache.view().stripes.group(&located);
            let commit = self
                .store
                .release_hold(&hold, &takes, counted, now.epoch_millis())
                .await?;
            let cancellation = match commit {
                Commit::Committed => {
                    cache.view().stripes.committed(&[], &takes, Some(0));
                    info!(tickets = ?hold.tickets, "hold released");
                    return Ok(Hold {
                        end: HoldEnd::Released,
                        ..hold
                    });
                }
                Commit::Cancelled(cancellation) => cancellation,
            };
            // The close ended the hold with the sale: nothing is left to give back.
            if cancellation
                .stale_stripes
                .iter()
                .any(|(_, state)| state.closed)
            {
                return Ok(hold);
            }
            // The allowance no longer counts the hold (given back as ended by a clock
            // ahead of ours): release the rest.
            if cancellation.allowance.is_some() {
                counted = None;
            }
            cache.view().learn_all(&cancellation.stale_stripes);
            if cancellation.conflict || cancellation.throttled {
                conflicts += 1;
                retry::RELEASE.pause(conflicts).await;
            }
        }
        Err(retry::RELEASE.exhausted().into())
    }
}
