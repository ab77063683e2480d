//! A draw's public facts: entries by channel, numbers sold, held and remaining, and each
//! instant prize's unsold numbers, at one moment. The draw item is read first, then its
//! stripes (strongly consistent): a void counted on the draw is of a sale the stripes
//! already show, so entries never count a void without its sale. Nothing is written.

use jiff::Timestamp;
use tally_domain::time::Epoch;
use tracing::instrument;

use super::{TicketError, TicketService};
use tally_domain::availability::StripeMarks;
use tally_domain::draw::facts::{Standings, WinningPlace, count, unsold_prizes};
use tally_domain::draw::{Draw, DrawStatus};
use tally_domain::ids::DrawId;

/// What a draw's stripes and item say at one moment.
#[derive(Debug, Clone)]
pub struct DrawFacts {
    pub draw: Draw,
    /// The status at the moment of the read: past `closes_at` a draw reads closed.
    pub status: DrawStatus,
    pub standings: Standings,
    /// Of the numbers sold, postal entries (voided ones included).
    pub postal: u64,
    /// Per instant prize of the draw, in its order: winning numbers not sold yet.
    pub instant_unsold: Option<Vec<u32>>,
    pub read_at: Timestamp,
}

impl DrawFacts {
    /// Postal entries in the draw: sold by post and not voided before the freeze.
    pub fn postal_entries(&self) -> u64 {
        self.postal.saturating_sub(self.draw.postal_voided)
    }

    /// Online entries in the draw: the other numbers sold and not voided before the
    /// freeze.
    pub fn online_entries(&self) -> u64 {
        let online_sold = self.standings.sold.saturating_sub(self.postal);
        let online_voided = self.draw.voided.saturating_sub(self.draw.postal_voided);
        online_sold.saturating_sub(online_voided)
    }
}

impl TicketService {
    #[instrument(skip(self))]
    pub async fn draw_facts(&self, draw_id: &DrawId) -> Result<DrawFacts, TicketError> {
        let mut draw = self
            .store()
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        let all: Vec<u32> = (0..draw.config.stripes()).collect();
        let stripes = self.store().read_stripes(draw_id, &all).await?;
        let read_at = self.now();
        let now = read_at.epoch_millis();
        let postal = stripes.iter().map(|(_, s)| s.postal).sum();
        let marks: Vec<StripeMarks> = stripes
            .into_iter()
            .map(|(_, s)| (s.counters, s.chosen, s.held))
            .collect();
        let layout = draw.config.layout();
        let standings = count(layout, &marks, now);
        let instant_unsold = match &draw.instant_wins {
            Some(instant) => {
                let cache = self.draw_cache(draw_id).await?;
                let winning: Vec<WinningPlace> = cache
                    .instant_map()
                    .map(|map| map.slots())
                    .unwrap_or_default()
                    .iter()
                    .map(|&(ticket, prize)| {
                        let (stripe, offset) = cache.locate(ticket);
                        WinningPlace {
                            stripe,
                            offset,
                            prize,
                        }
                    })
                    .collect();
                let prizes = instant.prizes().len();
                Some(unsold_prizes(layout, &marks, now, &winning, prizes))
            }
            None => None,
        };
        // Read only: the sold-out time is recorded by the draw's own read.
        if standings.sold >= draw.config.total_tickets() && draw.sold_out_at.is_none() {
            draw.sold_out_at = Some(read_at);
        }
        Ok(DrawFacts {
            status: draw.status_at(read_at),
            draw,
            standings,
            postal,
            instant_unsold,
            read_at,
        })
    }
}
