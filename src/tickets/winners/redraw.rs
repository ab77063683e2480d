//! Redrawing one prize: its winner is replaced by the next pick of the same procedure, and
//! the replaced winner stays in the history with the reason.

use chrono::Utc;
use tracing::{info, instrument};

use super::super::{TicketError, TicketService};
use super::{Eligible, MAX_ATTEMPTS, Winners};
use crate::domain::ids::DrawId;
use crate::domain::purchase::hex;
use crate::domain::winners::Picks;
use crate::store::winners::Recorded;
use crate::store::{StoreError, backoff};

impl TicketService {
    /// Replaces the winner of `prize` with the next pick. A redraw is known by its prize
    /// and reason: when the prize's latest redraw has the same reason, this is a repeat
    /// and answers the winners as they are.
    #[instrument(skip(self, reason))]
    pub async fn redraw(
        &self,
        draw_id: &DrawId,
        prize: u32,
        reason: &str,
    ) -> Result<Winners, TicketError> {
        let mut replacing = None;
        for attempt in 1..=MAX_ATTEMPTS {
            let winners = self.get_winners(draw_id).await?;
            if !(1..=winners.record.prizes).contains(&prize) {
                return Err(TicketError::PrizeNotFound(prize));
            }
            let current = winners
                .prizes()
                .into_iter()
                .find(|p| p.prize == prize)
                .map(|p| p.pick.clone())
                .ok_or_else(|| StoreError::Invariant(format!("prize {prize} has no pick")))?;
            if current.reason.as_deref() == Some(reason) {
                return Ok(winners);
            }
            // The winner this request set out to replace was replaced by another redraw.
            if *replacing.get_or_insert(current.pick) != current.pick {
                return Err(TicketError::WinnerChanged(prize));
            }
            let Eligible { set, .. } = self.eligible(winners.draw.clone()).await?;
            if hex(&set.digest()) != winners.record.eligible_digest {
                return Err(StoreError::Invariant(
                    "the eligible list no longer matches the digest of the winners".into(),
                )
                .into());
            }
            let made = winners.record.picks;
            let Some(next) = Picks::new(&set, winners.inputs()?).nth(made as usize) else {
                return Err(TicketError::NotEnoughEligible {
                    eligible: set.count(),
                    wanted: made + 1,
                });
            };
            let at = Utc::now();
            let reason = reason.to_owned();
            let mut items = self
                .pick_items(
                    &winners.draw,
                    &[next],
                    |_| (prize, Some(reason.clone())),
                    at,
                )
                .await?;
            let pick = items.pop().expect("one pick");
            match self.store().record_redraw(draw_id, &pick).await? {
                Recorded::Recorded => {
                    info!(
                        prize,
                        pick = pick.pick,
                        ticket = pick.ticket,
                        "prize redrawn"
                    );
                    let mut winners = winners;
                    winners.record.picks = pick.pick;
                    winners.picks.push(pick);
                    winners.drawn_now = true;
                    return Ok(winners);
                }
                Recorded::Refused(_) => {}
                Recorded::Contended => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention {
            attempts: MAX_ATTEMPTS,
        }
        .into())
    }
}
