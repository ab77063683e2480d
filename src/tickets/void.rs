//! Voiding a purchase (a refund, a chargeback): its tickets are never sold again. Before
//! the draw's freeze they leave the eligible list; after it the void is recorded as late
//! and the list stays as frozen (a late-voided winner is flagged and redrawn in public).
//! An instant prize the purchase won becomes void in the same transaction. A bundle's
//! void marks that do not fit its transaction follow it (`store::bundles`).

use tracing::{info, instrument, warn};

use super::{TicketError, TicketService};
use crate::store::retry;
use crate::store::voids::VoidOutcome;
use tally_domain::ids::{DrawId, PaymentId};
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::purchase::{Purchase, Void};

impl TicketService {
    /// Voids a purchase and its tickets, all or nothing, once, journalled under `by`: a
    /// repeat answers the voided purchase and journals nothing.
    #[instrument(skip(self, reason, by))]
    pub async fn void_purchase(
        &self,
        draw_id: &DrawId,
        payment_id: &PaymentId,
        reason: &str,
        by: &Operator,
    ) -> Result<Purchase, TicketError> {
        let mut award = None;
        let mut give_back = true;
        for attempt in retry::DRAW_RECORD.each() {
            let draw = self
                .store()
                .get_draw(draw_id)
                .await?
                .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
            let capped = draw.config.max_per_payer().is_some();
            let late = draw.frozen.is_some();
            // What to write is read; whether it may be written is the transaction's
            // condition (not void yet, frozen or not as read).
            // A bundle cut short gets its tickets, or its void marks, first.
            let purchase = self.get_purchase(draw_id, payment_id).await?;
            let purchase = self.store().finish(purchase).await?;
            if purchase.void.is_some() {
                return Ok(purchase);
            }
            if draw.instant_wins.is_some() && award.is_none() {
                let wins = self.purchase_wins(draw_id, &purchase.tickets).await?;
                award = Some(wins.first().map(|w| w.ticket));
            }
            let void = Void {
                reason: reason.to_owned(),
                at: self.now(),
                after_freeze: Some(late),
            };
            let back = give_back
                .then(|| self.spend.give_back(&purchase, void.at))
                .flatten();
            let entry = Draft::new(
                void.at,
                by,
                Action::PurchaseVoided,
                format!("draw/{draw_id}/purchase/{payment_id}"),
                &serde_json::json!({
                    "status": "void",
                    "reason": reason,
                    "tickets": purchase.tickets.len(),
                    "late": late,
                }),
            );
            match self
                .store()
                .void_purchase(
                    &purchase,
                    &void,
                    (capped, late),
                    award.flatten(),
                    back.as_ref(),
                    &entry,
                )
                .await?
            {
                VoidOutcome::Voided(purchase) => {
                    info!(tickets = ?purchase.tickets, late, "purchase voided");
                    return Ok(purchase);
                }
                VoidOutcome::AlreadyVoid(purchase) => return Ok(purchase),
                VoidOutcome::NotFound => {
                    return Err(TicketError::PurchaseNotFound(payment_id.clone()));
                }
                // Frozen meanwhile: the void becomes a late one.
                VoidOutcome::FreezeMoved => {}
                // Another clock counted a later window already: that one keeps its count.
                VoidOutcome::WindowPassed => give_back = false,
                VoidOutcome::Contended => retry::DRAW_RECORD.pause(attempt).await,
            }
        }
        warn!("void gave up under contention");
        Err(retry::DRAW_RECORD.exhausted().into())
    }
}
