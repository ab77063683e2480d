//! How a run that cannot be served ends: a refusal that rests on what the view knows,
//! unless the payment or hold is on record, which a replay gets even after a sell-out or
//! a close.

use super::{ConvertRequest, Kind, Outcome, Run};
use crate::tickets::TicketError;
use tally_domain::ids::PayerId;
use tally_domain::purchase::PurchaseRequest;
use tally_domain::stripes::StripeView;

/// Why a run cannot be served from what the view knows. Known cursors are lower bounds,
/// so a refusal is never premature; holds are not, so a view that knows of some reads the
/// stripes again before it answers sold out.
pub(super) enum Refusal {
    Known(TicketError),
    /// More than the payer may buy in the draw at all: what is left is read.
    PayerLimit(Option<PayerId>),
}

impl Run<'_> {
    /// A payment or hold on record gets its tickets even after a sell-out or close, so the
    /// record is read after what the refusal rests on, unless this purchase saw it absent
    /// at least that late.
    pub(super) async fn refuse(&mut self, refusal: Refusal) -> Outcome {
        let absent = self.absent_at == Some(self.epoch) && matches!(self.kind, Kind::Purchase(_));
        let draw_id = &self.cache.draw.draw_id;
        if !absent {
            self.requests += 1;
            let found = match &self.kind {
                Kind::Hold(r) => match self.store.get_hold(draw_id, &r.hold_id).await? {
                    Some(existing) => return self.replay_hold(existing),
                    None => None,
                },
                Kind::Purchase(PurchaseRequest { payment_id, .. })
                | Kind::Convert(ConvertRequest { payment_id, .. }, _) => {
                    self.store.get_purchase(draw_id, payment_id).await?
                }
            };
            if let Some(existing) = found {
                return self.replay(existing).await;
            }
        }
        Err(match refusal {
            Refusal::Known(refusal) => refusal,
            Refusal::PayerLimit(payer) => {
                let max_per_payer = self.cache.draw.config.max_per_payer().unwrap_or(0);
                let held = match payer {
                    Some(payer) => self.store.payer_held(draw_id, &payer).await?,
                    None => max_per_payer,
                };
                TicketError::PayerLimit {
                    max_per_payer,
                    left: max_per_payer.saturating_sub(held),
                }
            }
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
