//! Drawing the winners once, redrawing a prize with a reason, and reading them back with
//! everything needed to check them (`tally-draw-v1`, docs/winners.md).

mod eligible;
mod redraw;

use std::collections::HashMap;

use chrono::Utc;
use tracing::{info, instrument};

pub(crate) use eligible::Eligible;

use super::{TicketError, TicketService};
use crate::domain::draw::{Draw, DrawStatus, WinnersRecord};
use crate::domain::ids::DrawId;
use crate::domain::purchase::hex;
use crate::domain::winners::{DrawInputs, EligibleSet, Picks};
use crate::store::winners::{PickItem, Recorded};
use crate::store::{StoreError, backoff};

/// Attempts at recording the winners while voids or other writers move the draw.
const MAX_ATTEMPTS: u32 = 8;

/// A drawn draw: its record (the seed is public now) and every pick in order.
#[derive(Debug, Clone)]
pub struct Winners {
    pub draw: Draw,
    pub record: WinnersRecord,
    pub picks: Vec<PickItem>,
    /// `false` when this call found them drawn (a repeat).
    pub drawn_now: bool,
}

/// A prize and its winner: the last pick that went to it.
#[derive(Debug, Clone)]
pub struct Prize<'a> {
    pub prize: u32,
    pub pick: &'a PickItem,
}

/// A winner that a redraw replaced, with the redraw's reason and time.
#[derive(Debug, Clone)]
pub struct Replaced<'a> {
    pub pick: &'a PickItem,
    pub replaced_by: &'a PickItem,
}

impl Winners {
    pub fn prizes(&self) -> Vec<Prize<'_>> {
        (1..=self.record.prizes)
            .filter_map(|prize| {
                let pick = self.picks.iter().rev().find(|p| p.prize == prize)?;
                Some(Prize { prize, pick })
            })
            .collect()
    }

    /// Every replaced winner, in the order of the picks.
    pub fn history(&self) -> Vec<Replaced<'_>> {
        self.picks
            .iter()
            .filter_map(|pick| {
                let replaced_by = self
                    .picks
                    .iter()
                    .find(|later| later.pick > pick.pick && later.prize == pick.prize)?;
                Some(Replaced { pick, replaced_by })
            })
            .collect()
    }

    pub fn inputs(&self) -> Result<DrawInputs, StoreError> {
        inputs(
            &self.draw,
            self.record.beacon_value.clone(),
            &self.record.eligible_digest,
        )
    }
}

fn inputs(
    draw: &Draw,
    beacon_value: Option<String>,
    digest: &str,
) -> Result<DrawInputs, StoreError> {
    let digest = (0..32)
        .map(|i| u8::from_str_radix(digest.get(2 * i..2 * i + 2).unwrap_or(""), 16).ok())
        .collect::<Option<Vec<u8>>>()
        .and_then(|d| d.try_into().ok())
        .ok_or_else(|| StoreError::Invariant("the stored eligible digest is not hex".into()))?;
    Ok(DrawInputs {
        seed: draw.seed.clone(),
        beacon_value: beacon_value.unwrap_or_default(),
        digest,
    })
}

impl TicketService {
    /// Draws the winners of a closed draw once: `prizes` picks from the eligible tickets.
    /// The same request again answers the same winners; another is refused.
    #[instrument(skip(self))]
    pub async fn draw_winners(
        &self,
        draw_id: &DrawId,
        prizes: u32,
        beacon_value: Option<String>,
    ) -> Result<Winners, TicketError> {
        for attempt in 1..=MAX_ATTEMPTS {
            let draw = self.readable_draw(draw_id).await?;
            if draw.winners.is_some() {
                return self.same_winners(draw, prizes, &beacon_value).await;
            }
            let draw = self.sealed(draw).await?;
            match (&draw.beacon, &beacon_value) {
                (Some(_), None) => return Err(TicketError::BeaconValueRequired),
                (None, Some(_)) => return Err(TicketError::BeaconNotDeclared),
                _ => {}
            }
            let Eligible { set, draw } = self.eligible(draw).await?;
            if set.count() < u64::from(prizes) {
                return Err(TicketError::NotEnoughEligible {
                    eligible: set.count(),
                    wanted: u64::from(prizes),
                });
            }
            let record = WinnersRecord {
                prizes,
                beacon_value: beacon_value.clone(),
                eligible_count: set.count(),
                eligible_digest: hex(&set.digest()),
                picks: u64::from(prizes),
                drawn_at: Utc::now(),
            };
            let inputs = inputs(&draw, beacon_value.clone(), &record.eligible_digest)?;
            let chosen: Vec<(u64, u64)> = Picks::new(&set, inputs).take(prizes as usize).collect();
            let picks = self
                .pick_items(&draw, &chosen, |pick| (pick as u32, None), record.drawn_at)
                .await?;
            match self
                .store()
                .record_winners(draw_id, &record, draw.voided, &picks)
                .await?
            {
                Recorded::Recorded => {
                    info!(prizes, eligible = record.eligible_count, "winners drawn");
                    return Ok(Winners {
                        draw,
                        record,
                        picks,
                        drawn_now: true,
                    });
                }
                Recorded::Refused(now) if now.winners.is_some() => {
                    return self.same_winners(*now, prizes, &beacon_value).await;
                }
                // A void landed meanwhile: the list is computed again.
                Recorded::Refused(_) => {}
                Recorded::Contended => backoff(attempt).await,
            }
        }
        Err(StoreError::Contention {
            attempts: MAX_ATTEMPTS,
        }
        .into())
    }

    /// The winners and their picks, once drawn.
    #[instrument(skip(self))]
    pub async fn get_winners(&self, draw_id: &DrawId) -> Result<Winners, TicketError> {
        let draw = self.readable_draw(draw_id).await?;
        self.winners_of(draw).await
    }

    /// The eligible list of a closed draw; once the winners are drawn, the very list they
    /// were drawn from.
    #[instrument(skip(self))]
    pub async fn get_eligible(&self, draw_id: &DrawId) -> Result<(Draw, EligibleSet), TicketError> {
        let draw = self.readable_draw(draw_id).await?;
        let Eligible { set, draw } = self.eligible(draw).await?;
        if let Some(record) = &draw.winners
            && record.eligible_digest != hex(&set.digest())
        {
            return Err(StoreError::Invariant(
                "the eligible list no longer matches the digest of the winners".into(),
            )
            .into());
        }
        Ok((draw, set))
    }

    async fn readable_draw(&self, draw_id: &DrawId) -> Result<Draw, TicketError> {
        self.store()
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))
    }

    /// The draw closed for good: a draw past its `closes_at` is closed now (every stripe,
    /// so that no purchase sent before `closes_at` can still land); any other draw must
    /// have been closed.
    async fn sealed(&self, draw: Draw) -> Result<Draw, TicketError> {
        if draw.status == DrawStatus::Closed {
            return Ok(draw);
        }
        if draw.status_at(Utc::now()) != DrawStatus::Closed {
            return Err(TicketError::DrawOpen(draw.draw_id));
        }
        Ok(self.close_draw(&draw.draw_id).await?.draw)
    }

    async fn winners_of(&self, draw: Draw) -> Result<Winners, TicketError> {
        let record = draw
            .winners
            .clone()
            .ok_or_else(|| TicketError::WinnersNotDrawn(draw.draw_id.clone()))?;
        let picks = self.store().get_picks(&draw.draw_id, record.picks).await?;
        Ok(Winners {
            draw,
            record,
            picks,
            drawn_now: false,
        })
    }

    /// Drawn already: the same request gets the winners, another is refused.
    async fn same_winners(
        &self,
        draw: Draw,
        prizes: u32,
        beacon_value: &Option<String>,
    ) -> Result<Winners, TicketError> {
        let winners = self.winners_of(draw).await?;
        if winners.record.prizes != prizes || &winners.record.beacon_value != beacon_value {
            return Err(TicketError::WinnersDrawn(winners.draw.draw_id));
        }
        Ok(winners)
    }

    /// The items of picks `(pick, ticket)`, with who holds each ticket.
    async fn pick_items(
        &self,
        draw: &Draw,
        chosen: &[(u64, u64)],
        prize_and_reason: impl Fn(u64) -> (u32, Option<String>),
        at: chrono::DateTime<Utc>,
    ) -> Result<Vec<PickItem>, TicketError> {
        let numbers: Vec<u64> = chosen.iter().map(|c| c.1).collect();
        let holders: HashMap<u64, _> = self
            .store()
            .get_tickets(&draw.draw_id, &numbers)
            .await?
            .into_iter()
            .map(|t| (t.number, t))
            .collect();
        chosen
            .iter()
            .map(|&(pick, ticket)| {
                let holder = holders.get(&ticket).ok_or_else(|| {
                    StoreError::Invariant(format!("eligible ticket {ticket} has no item"))
                })?;
                let (prize, reason) = prize_and_reason(pick);
                Ok(PickItem {
                    pick,
                    prize,
                    ticket,
                    payment_id: holder.payment_id.clone(),
                    payer_id: holder.payer_id.clone(),
                    reason,
                    at,
                })
            })
            .collect()
    }
}
