//! A draw's public facts: entries by channel, numbers sold, held and remaining, and each
//! instant prize's unsold numbers, at one moment. A poll reads the draw's published facts
//! (one item); only when they are missing or older than [`FACTS_FRESH`] does the caller
//! count them again (the draw item, then every stripe, strongly consistent: a void counted
//! on the draw is of a sale the stripes already show, so entries never count a void
//! without its sale) and publish the new count. So a draw is counted at most about once
//! per bound, however many players poll it.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use tally_domain::time::Epoch;
use tracing::{instrument, warn};

use super::{TicketError, TicketService};
use tally_domain::availability::StripeMarks;
use tally_domain::draw::DrawStatus;
use tally_domain::draw::facts::{
    DrawFacts, Entries, InstantCount, WinningPlace, count, unsold_prizes,
};
use tally_domain::ids::DrawId;

/// How long a draw's published facts answer polls before a caller counts them again.
pub const FACTS_FRESH: Duration = Duration::from_secs(5);

/// The facts a poll answers and how they read now.
#[derive(Debug, Clone)]
pub struct FactsAnswer {
    /// Exact as of their `read_at`.
    pub facts: DrawFacts,
    /// The draw's status now, from its times: past `closes_at` closed at once.
    pub status: DrawStatus,
    /// How much longer these facts answer polls: what a cache may keep them.
    pub fresh_for: Duration,
}

impl TicketService {
    #[instrument(skip(self))]
    pub async fn draw_facts(&self, draw_id: &DrawId) -> Result<FactsAnswer, TicketError> {
        if let Some(published) = self.store().published_facts(draw_id).await? {
            let now = self.now();
            if let Some(fresh_for) = fresh_for(published.read_at, now) {
                return Ok(FactsAnswer {
                    status: published.status_at(now),
                    facts: published,
                    fresh_for,
                });
            }
        }
        let facts = self.publish_facts(draw_id).await?;
        Ok(FactsAnswer {
            status: facts.status_at(facts.read_at),
            facts,
            fresh_for: FACTS_FRESH,
        })
    }

    /// Counts the draw's facts and publishes them. A lost race (newer facts published
    /// meanwhile) still answers this count; so does a failed publish, which only means
    /// the next poll counts again.
    pub(super) async fn publish_facts(&self, draw_id: &DrawId) -> Result<DrawFacts, TicketError> {
        let facts = self.count_facts(draw_id).await?;
        if let Err(err) = self.store().publish_facts(&facts).await {
            warn!(%draw_id, error = %err, "the draw's facts were counted but not published");
        }
        Ok(facts)
    }

    async fn count_facts(&self, draw_id: &DrawId) -> Result<DrawFacts, TicketError> {
        let draw = self
            .store()
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        let all: Vec<u32> = (0..draw.config.stripes()).collect();
        let stripes = self.store().read_stripes(draw_id, &all).await?;
        let read_at = self.now();
        let now = read_at.epoch_millis();
        let postal: u64 = stripes.iter().map(|(_, s)| s.postal).sum();
        let marks: Vec<StripeMarks> = stripes.into_iter().map(|(_, s)| s.into_marks()).collect();
        let layout = draw.config.layout();
        let standings = count(layout, &marks, now);
        let instant = match &draw.instant_wins {
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
                let prizes = instant.prizes();
                let unsold = unsold_prizes(layout, &marks, now, &winning, prizes.len());
                Some(
                    prizes
                        .iter()
                        .zip(unsold)
                        .map(|(prize, remaining)| InstantCount {
                            prize: prize.prize.clone(),
                            count: prize.count,
                            remaining,
                        })
                        .collect(),
                )
            }
            None => None,
        };
        let entries = Entries::count(&draw, standings.sold, postal);
        Ok(DrawFacts {
            draw_id: draw.draw_id.clone(),
            status: draw.status,
            // Read only: the sold-out time is recorded by the draw's own read.
            sold_out: draw.sold_out_at.is_some() || standings.sold >= draw.config.total_tickets(),
            schedule: draw.schedule,
            total_tickets: draw.config.total_tickets(),
            price: draw.config.price(),
            standings,
            voided: draw.voided,
            entries,
            instant,
            read_at,
        })
    }
}

/// How much longer facts read at `read_at` answer polls at `now`; `None` once stale. A
/// count stamped ahead of this clock is fresh for the whole bound at most.
fn fresh_for(read_at: Timestamp, now: Timestamp) -> Option<Duration> {
    let bound = SignedDuration::try_from(FACTS_FRESH).ok()?;
    let left = read_at.duration_since(now).checked_add(bound)?.min(bound);
    Duration::try_from(left).ok().filter(|left| !left.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_facts_answer_for_the_bound_and_no_longer() {
        let read = Timestamp::from_millisecond(1_800_000_000_000).unwrap();
        let at = |ms| read + SignedDuration::from_millis(ms);
        assert_eq!(fresh_for(read, at(0)), Some(FACTS_FRESH));
        assert_eq!(
            fresh_for(read, at(3_500)),
            Some(Duration::from_millis(1_500))
        );
        assert_eq!(fresh_for(read, at(5_000)), None);
        assert_eq!(fresh_for(read, at(9_000)), None);
        // Stamped by a clock running ahead: never fresh for longer than the bound.
        assert_eq!(fresh_for(read, at(-60_000)), Some(FACTS_FRESH));
    }
}
