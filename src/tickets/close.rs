//! Closing a draw, resumably. First the draw item says `closing`, then every stripe cursor
//! is closed (a purchase transaction fails on a closed cursor), then the draw says
//! `closed`. So the draw never reads `closed` while a purchase can still commit, and a
//! close interrupted half way is finished by closing again: a repeat closes only the
//! stripes still open, so it converges even when DynamoDB keeps failing some calls.

use futures::{StreamExt, TryStreamExt};
use tracing::{info, instrument};

use super::{DrawSummary, TicketError, TicketService};
use crate::domain::draw::{Draw, DrawStatus};
use crate::domain::ids::DrawId;

/// Stripes closed at once.
const CLOSE_CONCURRENCY: usize = 16;

impl TicketService {
    /// Closes the draw; once this returns, no purchase can commit. Closing a closed draw
    /// changes nothing.
    #[instrument(skip(self))]
    pub async fn close_draw(&self, draw_id: &DrawId) -> Result<DrawSummary, TicketError> {
        let draw = self
            .store()
            .mark_draw_closing(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        if let Some(cache) = self.cached(draw_id) {
            cache.view().closed = true;
        }
        self.seal(&draw).await?;
        self.get_draw(draw_id).await
    }

    /// The steps of a close after the first: every open stripe is closed, then the draw
    /// says `closed`. Nothing after it can change which tickets were sold.
    pub(super) async fn seal(&self, draw: &Draw) -> Result<(), TicketError> {
        let draw_id = &draw.draw_id;
        if draw.status != DrawStatus::Closed {
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
            self.store()
                .mark_draw_closed(draw_id)
                .await?
                .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
            info!("draw closed");
        }
        Ok(())
    }
}
