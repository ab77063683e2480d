//! Closing a draw, resumably. First the draw item says `closing`, then every stripe cursor
//! is closed (a purchase transaction fails on a closed cursor), then the draw says
//! `closed`, then its eligible list is frozen (`freeze.rs`). So the draw never reads
//! `closed` while a purchase can still commit, and a close interrupted half way is
//! finished by closing again: a repeat closes only the stripes still open and freezes a
//! list not frozen yet, so it converges even when DynamoDB keeps failing some calls.

use futures::{StreamExt, TryStreamExt};
use jiff::Timestamp;
use tracing::{info, instrument};

use super::freeze::prizes_to_fix;
use super::{DrawSummary, TicketError, TicketService};
use tally_domain::draw::{Draw, DrawStatus};
use tally_domain::ids::DrawId;
use tally_domain::journal::Operator;

/// Stripes closed at once.
const CLOSE_CONCURRENCY: usize = 16;

impl TicketService {
    /// Closes the draw and freezes its eligible list with the number of prizes the draw
    /// declared, else `prizes` if given; once this returns, no purchase can commit, no
    /// void changes the list and polls read the closed draw's facts. Closing a closed draw
    /// changes nothing; naming another number than the draw declared is refused before
    /// anything changes, and one whose freeze fixed another number (or none) is refused.
    /// The freeze is journalled under `by`.
    #[instrument(skip(self, by))]
    pub async fn close_draw(
        &self,
        draw_id: &DrawId,
        prizes: Option<u32>,
        by: &Operator,
    ) -> Result<DrawSummary, TicketError> {
        if prizes.is_some() {
            let draw = self
                .store()
                .get_draw(draw_id)
                .await?
                .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
            prizes_to_fix(&draw, prizes)?;
        }
        let frozen = self.close_and_freeze(draw_id, prizes, by).await?;
        let fixed = frozen.frozen.as_ref().and_then(|f| f.prizes);
        if let Some(given) = prizes.filter(|&given| fixed != Some(given)) {
            return Err(TicketError::PrizesFixed { fixed, given });
        }
        self.summary(frozen).await
    }

    /// Every step of a close, the freeze with `prizes` included.
    async fn close_and_freeze(
        &self,
        draw_id: &DrawId,
        prizes: Option<u32>,
        by: &Operator,
    ) -> Result<Draw, TicketError> {
        let draw = self
            .store()
            .set_draw_closing(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        if let Some(cache) = self.cached(draw_id) {
            cache.view().closed = true;
        }
        let closed = self.seal(draw).await?;
        let frozen = self.freeze(closed, prizes, by).await?;
        // Polls read the closed draw's facts from now on, not an open count's.
        self.publish_facts(draw_id).await?;
        Ok(frozen)
    }

    /// The steps of a close after the first: every open stripe is closed, then the draw
    /// says `closed`. Nothing after it can change which tickets were sold.
    async fn seal(&self, draw: Draw) -> Result<Draw, TicketError> {
        let draw_id = &draw.draw_id;
        if draw.status == DrawStatus::Closed {
            return Ok(draw);
        }
        let all: Vec<u32> = (0..draw.config.stripes()).collect();
        let open: Vec<u32> = self
            .store()
            .read_stripes(draw_id, &all)
            .await?
            .into_iter()
            .filter(|(_, state)| !state.closed)
            .map(|(stripe, _)| stripe)
            .collect();
        futures::stream::iter(open)
            .map(|s| self.store().close_stripe(draw_id, s))
            .buffer_unordered(CLOSE_CONCURRENCY)
            .try_collect::<()>()
            .await?;
        let closed = self
            .store()
            .set_draw_closed(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        info!("draw closed");
        Ok(closed)
    }

    /// The draw closed for good and its list frozen: a draw past its `closes_at`, or whose
    /// close began and stopped, is closed now (every stripe, so that no purchase sent
    /// before can still land), a closed one is frozen if a close stopped before; any other
    /// draw must be closed first.
    /// A freeze made here fixes the draw's number of prizes, else `prizes`, with the list.
    pub(super) async fn closed_and_frozen(
        &self,
        draw: Draw,
        prizes: Option<u32>,
        by: &Operator,
    ) -> Result<Draw, TicketError> {
        if draw.frozen.is_some() {
            return Ok(draw);
        }
        if draw.status == DrawStatus::Closed {
            return self.freeze(draw, prizes, by).await;
        }
        if !matches!(
            draw.status_at(Timestamp::now()),
            DrawStatus::Closing | DrawStatus::Closed
        ) {
            return Err(TicketError::DrawOpen(draw.draw_id));
        }
        self.close_and_freeze(&draw.draw_id, prizes, by).await
    }
}
