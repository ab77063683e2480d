//! How a purchase that cannot be served ends: a refusal that rests on what the view knows,
//! unless the payment is on record, whose tickets a replay gets even after a sell-out or
//! a close.

use super::PurchaseRun;
use crate::tickets::{PurchaseReceipt, TicketError};
use tally_domain::stripes::StripeView;

/// Why a purchase cannot be served from what the view knows. Known cursors are lower
/// bounds, so a refusal is never premature; holds are not, so a view that knows of some
/// reads the stripes again before it answers sold out.
pub(super) enum Refusal {
    Closed,
    /// Before the draw's `opens_at`.
    NotOpen,
    /// Fewer numbers are free than asked for (see `shortage`).
    NotEnough(TicketError),
    Fragmented,
    /// Chosen numbers that no purchase can write at once.
    TooSpread,
    /// Chosen numbers that are sold.
    Taken(Vec<u64>),
    /// The payer's allowance has no room: what is left, when known.
    PayerLimit {
        left: Option<u64>,
    },
    /// The payer's item across draws refuses: an exclusion or a spend limit.
    Payer(TicketError),
}

impl PurchaseRun<'_> {
    /// A replayed payment gets its tickets even after a sell-out or close, so the record
    /// is read after what the refusal rests on, unless this purchase saw it absent at
    /// least that late.
    pub(super) async fn refuse(mut self, refusal: Refusal) -> Result<PurchaseReceipt, TicketError> {
        if self.absent_at != Some(self.epoch) {
            self.requests += 1;
            if let Some(existing) = self
                .store
                .get_purchase(&self.request.draw_id, &self.request.payment_id)
                .await?
            {
                return self.replay(existing).await;
            }
        }
        let draw = &self.cache.draw;
        Err(match refusal {
            Refusal::Closed => TicketError::DrawClosed(self.request.draw_id),
            Refusal::NotOpen => TicketError::DrawNotOpen {
                opens_at: draw.schedule.opens_at().unwrap_or(draw.created_at),
                draw_id: self.request.draw_id,
            },
            Refusal::PayerLimit { left } => {
                let max_per_payer = draw.config.max_per_payer().unwrap_or(0);
                let left = match (left, &self.request.payer_id) {
                    (Some(left), _) => left,
                    (None, Some(payer)) => max_per_payer
                        .saturating_sub(self.store.payer_held(&self.request.draw_id, payer).await?),
                    (None, None) => 0,
                };
                TicketError::PayerLimit {
                    max_per_payer,
                    left,
                }
            }
            Refusal::NotEnough(shortage) | Refusal::Payer(shortage) => shortage,
            Refusal::Taken(numbers) => TicketError::NumbersTaken(numbers),
            Refusal::TooSpread => crate::tickets::too_spread(),
            Refusal::Fragmented => TicketError::TooFragmented {
                remaining: self.cache.view().stripes.remaining(),
            },
        })
    }
}

/// The refusal of `quantity` numbers when the view knows of fewer free ones: `tickets_held`
/// when live holds on `stripes` keep enough to serve it once they end, `sold_out` when even
/// that would not. Held numbers are never counted as sold.
pub(super) fn shortage(
    view: &StripeView,
    quantity: u64,
    stripes: impl IntoIterator<Item = u32>,
) -> TicketError {
    let (remaining, held) = (view.remaining(), view.live_held());
    let first = view
        .first_hold_end(stripes)
        .and_then(tally_domain::time::from_epoch_millis);
    match first {
        Some(first_hold_ends_at) if remaining + held >= quantity => TicketError::TicketsHeld {
            remaining,
            held,
            first_hold_ends_at,
        },
        _ => TicketError::SoldOut { remaining, held },
    }
}
