//! Redrawing one prize: its winner is replaced by the next pick of the same procedure, and
//! the replaced winner stays in the history with the reason. In a draw with a beacon the
//! redraw is asked for first, which fixes a round published after the request; the pick
//! is made once that round's signature is given, so nobody knows the replacement when
//! asking for it.

use jiff::{SignedDuration, Timestamp};
use tally_domain::time::Epoch;
use tracing::{info, instrument};

use super::super::{TicketError, TicketService};
use super::{BeaconInput, Eligible, Winners, inputs, randomness};
use crate::store::winners::Recorded;
use crate::store::{StoreError, retry};
use tally_domain::draw::PendingRedraw;
use tally_domain::ids::DrawId;
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::winners::{Picks, RoundSignature};

impl TicketService {
    /// Replaces the winner of `prize` with the next pick. A redraw is known by its prize
    /// and reason: when the prize's latest redraw has the same reason, this is a repeat
    /// and answers the winners as they are. In a draw with a beacon, the first call asks
    /// for the redraw (the answer's `pending_redraw` names its round) and a call with the
    /// round's signature makes the pick.
    /// The ask and the pick are each journalled under `by`.
    #[instrument(skip(self, reason, beacon, by))]
    pub async fn redraw(
        &self,
        draw_id: &DrawId,
        prize: u32,
        reason: &str,
        beacon: Option<BeaconInput>,
        by: &Operator,
    ) -> Result<Winners, TicketError> {
        let mut replacing = None;
        for attempt in retry::DRAW_RECORD.each() {
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
            let pending = winners.draw.pending_redraw.clone();
            let round = match (&pending, &winners.draw.beacon) {
                (Some(p), _) if p.prize != prize || p.reason != reason => {
                    return Err(TicketError::RedrawPending(p.prize));
                }
                // Asked for already: a repeat without the signature answers it as it is.
                (Some(p), _) => match &beacon {
                    None => return Ok(winners),
                    Some(_) => {
                        self.verified_round(&winners.draw, Some(p.beacon_round), beacon.as_ref())?
                    }
                },
                (None, Some(network)) => {
                    if beacon.is_some() {
                        return Err(TicketError::RedrawNotRequested);
                    }
                    let requested_at = request_time(&winners, self.now());
                    let asked = PendingRedraw {
                        prize,
                        pick: winners.record.picks + 1,
                        reason: reason.to_owned(),
                        requested_at,
                        beacon_round: network.round_after(requested_at.epoch_millis()),
                    };
                    let entry = Draft::new(
                        requested_at,
                        by,
                        Action::Redraw,
                        format!("draw/{draw_id}"),
                        &serde_json::json!({
                            "prize": prize,
                            "reason": reason,
                            "pending_round": asked.beacon_round,
                        }),
                    );
                    match self.store().request_redraw(draw_id, &asked, &entry).await? {
                        Recorded::Recorded => {
                            info!(prize, round = asked.beacon_round, "redraw asked for");
                            let mut winners = winners;
                            winners.draw.pending_redraw = Some(asked);
                            winners.drawn_now = true;
                            return Ok(winners);
                        }
                        Recorded::Refused(_) => continue,
                        Recorded::Contended => {
                            retry::DRAW_RECORD.pause(attempt).await;
                            continue;
                        }
                    }
                }
                (None, None) => self.verified_round(&winners.draw, None, beacon.as_ref())?,
            };
            // The winner this request set out to replace was replaced by another redraw.
            if *replacing.get_or_insert(current.pick) != current.pick {
                return Err(TicketError::WinnerChanged(prize));
            }
            match self
                .record_pick(&winners, prize, reason, pending, round, by)
                .await?
            {
                Some(winners) => return Ok(winners),
                None => retry::DRAW_RECORD.pause(attempt).await,
            }
        }
        Err(retry::DRAW_RECORD.exhausted().into())
    }

    /// Makes and records the next pick for `prize`, with the randomness of `round`;
    /// `None` when the draw moved meanwhile.
    async fn record_pick(
        &self,
        winners: &Winners,
        prize: u32,
        reason: &str,
        pending: Option<PendingRedraw>,
        round: Option<RoundSignature>,
        by: &Operator,
    ) -> Result<Option<Winners>, TicketError> {
        let Eligible { set, .. } = self.frozen_list(winners.draw.clone()).await?;
        let made = winners.record.picks;
        let picked: Vec<u64> = winners.picks.iter().map(|p| p.ticket).collect();
        let mut picks = Picks::after(
            &set,
            inputs(&winners.draw, &winners.record.eligible_digest)?,
            &picked,
        )
        .map_err(|e| StoreError::Invariant(e.to_string()))?;
        let Some(next) = picks.pick(&randomness(round.as_ref())) else {
            return Err(TicketError::NotEnoughEligible {
                eligible: set.count(),
                wanted: made + 1,
            });
        };
        let at = self.now();
        let mut items = self
            .pick_items(
                &winners.draw,
                &[next],
                |_| (prize, Some(reason.to_owned()), round.clone()),
                at,
            )
            .await?;
        let mut pick = items.pop().expect("one pick");
        pick.requested_at = Some(
            pending
                .as_ref()
                .map_or_else(|| request_time(winners, at), |p| p.requested_at),
        );
        let entry = Draft::new(
            at,
            by,
            Action::Redraw,
            format!("draw/{}", winners.draw.draw_id),
            &serde_json::json!({
                "prize": prize,
                "reason": reason,
                "pick": pick.pick,
                "winning_ticket": pick.ticket,
            }),
        );
        match self
            .store()
            .record_redraw(&winners.draw.draw_id, &pick, pending.is_some(), &entry)
            .await?
        {
            Recorded::Recorded => {
                info!(
                    prize,
                    pick = pick.pick,
                    ticket = pick.ticket,
                    "prize redrawn"
                );
                let mut winners = winners.clone();
                winners.record.picks = pick.pick;
                winners.draw.pending_redraw = None;
                winners.picks.push(pick);
                winners.drawn_now = true;
                // The new winner may be a ticket voided after the freeze: flagged too.
                winners.late_voids = self.late_voids(&winners.draw, &winners.picks).await?;
                Ok(Some(winners))
            }
            Recorded::Refused(_) | Recorded::Contended => Ok(None),
        }
    }
}

/// When a redraw asked for at `now` was asked for, as its proof says: never before the
/// winners were drawn nor at or before the redraw before it, even from a process whose
/// clock is a little behind the one that drew them.
fn request_time(winners: &Winners, now: Timestamp) -> Timestamp {
    let drawn = winners.record.drawn_at;
    let after_last = winners
        .picks
        .iter()
        .filter_map(|p| p.requested_at)
        .max()
        .map_or(drawn, |last| last + SignedDuration::from_millis(1));
    now.max(drawn).max(after_last)
}
