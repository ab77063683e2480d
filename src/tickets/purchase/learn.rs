//! What a run learns from a cancelled transaction: its record on file, the stripes it met,
//! the hold as it is now, the payer's item and allowance; and, after a conflict or
//! throttling, a backoff before it tries again.

use tally_domain::time::Epoch;

use super::{Kind, Outcome, Refusal, Run};
use crate::store::StoreError;
use crate::store::purchases::Cancellation;
use crate::tickets::TicketError;

impl Run<'_> {
    /// A miss on a stale cursor is planned again at once, from what the cancellation
    /// returned.
    pub(super) async fn learn(&mut self, cancellation: Cancellation) -> Outcome {
        if let Some(existing) = cancellation.existing {
            return self.replay(existing).await;
        }
        match (&mut self.kind, cancellation.hold) {
            (Kind::Hold(_), Some(existing)) => return self.replay_hold(existing),
            // Converted, released or expired meanwhile: decided on the next plan.
            (Kind::Convert(_, hold), Some(now_on_record)) => {
                *hold = now_on_record;
                return Ok(None);
            }
            _ => {}
        }
        if let Some(record) = cancellation.payer {
            // The payer's terms or spend moved: planned again, at the time of the next
            // attempt (a count of a later window is never overwritten).
            if let Some(payer) = self.kind.payer() {
                self.payer.learn(&self.rules, payer, record);
            }
            self.created_at = (self.clock)();
        }
        // Tickets behind a stale cursor are expected: the cursor check failed too.
        if cancellation.stale_stripes.is_empty() && !cancellation.taken_tickets.is_empty() {
            return Err(StoreError::Invariant(format!(
                "tickets {:?} exist behind their stripe cursor",
                cancellation.taken_tickets
            ))
            .into());
        }
        let decided = !cancellation.conflict && !cancellation.throttled;
        {
            let mut view = self.cache.view();
            // Every condition was checked at one point in time: the record's passed, so it
            // was absent then. That holds for refusals only if the view learned nothing
            // newer meanwhile.
            let alone = view.epoch == self.epoch;
            view.learn_all(&cancellation.stale_stripes);
            self.absent_at = (alone && decided).then_some(view.epoch);
            // A lucky dip's miss on stripes that others sell from means the rest of the
            // view is old too, and one read corrects it all. Named numbers need only the
            // stripes they lie in.
            let dip = matches!(self.kind, Kind::Purchase(_)) && self.kind.numbers().is_none();
            view.stale |= dip
                && view.stripes.all_handed()
                && cancellation
                    .stale_stripes
                    .iter()
                    .any(|(s, _)| !view.stripes.owns(*s));
        }
        if let Kind::Convert(_, hold) = &self.kind {
            let end = hold.expires_at.epoch_millis();
            // The close ends every hold. A number that no longer carries the hold's deadline
            // was taken by a writer whose clock saw the hold end. An allowance that no
            // longer counts the hold gave it back as ended.
            let lost = cancellation.allowance.is_some()
                || cancellation.stale_stripes.iter().any(|(stripe, state)| {
                    state.closed
                        || hold
                            .tickets
                            .iter()
                            .map(|&n| self.cache.locate(n))
                            .any(|(s, o)| s == *stripe && state.held.get(&o) != Some(&end))
                });
            if lost {
                return Err(TicketError::HoldExpired(hold.hold_id.clone()));
            }
        }
        let now = self.now_millis();
        let config = self.cache.draw.config;
        if let (Some(payer), Some(allowance)) = (self.kind.payer(), &cancellation.allowance) {
            // Holds of the payer that ended still count until given back, which comes first.
            if allowance.has_ended(now) {
                self.requests += 1;
                let capped = config.max_per_payer().is_some();
                let (draw_id, holds) = (&self.cache.draw.draw_id, &allowance.holds);
                self.store
                    .give_back_ended_holds(draw_id, payer, holds, now, capped)
                    .await?;
                return Ok(None);
            }
            // The record's condition passed at the same moment: the payer is at a cap.
            let quantity = self.kind.quantity();
            let max_held_per_payer = config.max_held_per_payer();
            let max_per_payer = config.max_per_payer();
            let refusal = match (&self.kind, max_per_payer) {
                _ if !decided => None,
                (Kind::Purchase(_), max) => Some(TicketError::PayerLimit {
                    max_per_payer: max.unwrap_or(0),
                    left: max.unwrap_or(0).saturating_sub(allowance.held),
                }),
                _ if allowance.holding + quantity > max_held_per_payer => {
                    Some(TicketError::PayerHoldLimit {
                        max_held_per_payer,
                        left: max_held_per_payer.saturating_sub(allowance.holding),
                    })
                }
                (_, Some(max_per_payer)) if allowance.held + quantity > max_per_payer => {
                    Some(TicketError::PayerLimit {
                        max_per_payer,
                        left: max_per_payer.saturating_sub(allowance.held),
                    })
                }
                // Room under both caps now: the allowance changed since; plan again.
                _ => return Ok(None),
            };
            if let Some(refusal) = refusal {
                return self.refuse(Refusal::Known(refusal)).await;
            }
        }
        if !decided {
            self.conflicts += 1;
            self.kind.policy().pause(self.conflicts).await;
        }
        Ok(None)
    }
}
