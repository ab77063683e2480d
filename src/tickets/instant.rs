//! Instant wins as the service reads them: the awards so far, and once the winners are
//! drawn, the key and the whole map that prove them (`tally-instant-v1`,
//! docs/winners.md). Awards are written by every purchase transaction
//! (`store::instant`); before the winners nothing here names an unsold winning number.

use tracing::instrument;

use super::{TicketError, TicketService};
use tally_domain::draw::Draw;
use tally_domain::ids::DrawId;
use tally_domain::instant::{InstantAward, InstantKey, InstantPrize, InstantWin};

/// A draw's instant wins: the prizes won so far and, after the winners, the proof.
#[derive(Debug, Clone)]
pub struct InstantWinsView {
    pub draw: Draw,
    pub awards: Vec<InstantAward>,
    pub reveal: Option<InstantReveal>,
}

/// What the winners reveal of the instant wins: the key, and the map it gives.
#[derive(Debug, Clone)]
pub struct InstantReveal {
    /// The key in hex; its SHA-256 is `commitment`, shown from the creation on.
    pub key: String,
    pub commitment: String,
    pub prizes: Vec<InstantPrize>,
    /// Slot by slot: the winning ticket and its prize.
    pub map: Vec<(u64, String)>,
    pub awards: Vec<InstantAward>,
}

impl TicketService {
    /// The instant wins of a draw created with some: the awards so far, and the whole
    /// map with its key once the winners are drawn.
    #[instrument(skip(self))]
    pub async fn get_instant_wins(&self, draw_id: &DrawId) -> Result<InstantWinsView, TicketError> {
        let draw = self
            .store()
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        if draw.instant_wins.is_none() {
            return Err(TicketError::NoInstantWins(draw_id.clone()));
        }
        let awards = self.store().instant_awards(draw_id).await?;
        // Only the winners make the map public.
        let reveal = match draw.winners {
            Some(_) => self.instant_reveal(&draw, awards.clone()).await?,
            None => None,
        };
        Ok(InstantWinsView {
            draw,
            awards,
            reveal,
        })
    }

    /// The proof of a drawn draw's instant wins, with `awards` as recorded. Call it only
    /// once the winners are drawn: it names every winning number.
    pub(super) async fn instant_reveal(
        &self,
        draw: &Draw,
        awards: Vec<InstantAward>,
    ) -> Result<Option<InstantReveal>, TicketError> {
        let Some(instant) = &draw.instant_wins else {
            return Ok(None);
        };
        let cache = self.draw_cache(&draw.draw_id).await?;
        let map = cache
            .instant_map()
            .map(|map| {
                map.slots()
                    .iter()
                    .map(|&(ticket, entry)| (ticket, instant.prizes()[entry].prize.clone()))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Some(InstantReveal {
            key: InstantKey::derive(&self.secret, &draw.seed).reveal(),
            commitment: instant.commitment.clone(),
            prizes: instant.prizes().to_vec(),
            map,
            awards,
        }))
    }

    /// The instant prizes of `tickets` of one purchase, ascending: what a void marks void.
    pub(super) async fn purchase_wins(
        &self,
        draw_id: &DrawId,
        tickets: &[u64],
    ) -> Result<Vec<InstantWin>, TicketError> {
        Ok(self.draw_cache(draw_id).await?.instant_wins(tickets))
    }
}
