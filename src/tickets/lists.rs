//! Lists: a payer's purchases, the draws, and every purchase of a draw for an export.

use chrono::Utc;
use futures::{Stream, StreamExt, TryStreamExt};
use tracing::instrument;

use super::{TicketError, TicketService};
use crate::domain::draw::{Draw, DrawStatus};
use crate::domain::ids::{DrawId, PayerId};
use crate::domain::purchase::Purchase;
use crate::store::lists::{After, Page};

/// A page of purchases.
pub type PurchasesPage = Page<Purchase>;

/// Which draws to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawFilter {
    All,
    Status(DrawStatus),
}

/// Index entries read per page while the draws listed are filtered by status.
const DRAW_SCAN_ROUNDS: u32 = 10;
/// Stripes whose purchases an export reads at once.
const EXPORT_CONCURRENCY: usize = 8;
/// Purchases per page of an export.
const EXPORT_PAGE: u32 = 100;

impl TicketService {
    /// A payer's purchases in a draw with their tickets, newest first.
    #[instrument(skip(self))]
    pub async fn payer_purchases(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        after: Option<&After>,
        limit: u32,
    ) -> Result<PurchasesPage, TicketError> {
        // An unknown draw is a 404, not an empty list.
        self.store()
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        Ok(self
            .store()
            .payer_purchases(draw_id, payer, after, limit)
            .await?)
    }

    /// Draws newest first, each with its status as it reads now. With a status filter a
    /// page may hold fewer than `limit` draws while more follow (`next` says so).
    #[instrument(skip(self))]
    pub async fn list_draws(
        &self,
        filter: DrawFilter,
        after: Option<&After>,
        limit: u32,
    ) -> Result<Page<(Draw, DrawStatus)>, TicketError> {
        let now = Utc::now();
        let mut items = Vec::new();
        let mut next = after.cloned();
        // Each round asks for what the page lacks, so a full page ends where a round does.
        for _ in 0..DRAW_SCAN_ROUNDS {
            let want = limit - items.len() as u32;
            let page = self.store().draws(next.as_ref(), want).await?;
            next = page.next;
            items.extend(
                page.items
                    .into_iter()
                    .map(|draw| {
                        let status = draw.status_at(now);
                        (draw, status)
                    })
                    .filter(|(_, status)| match filter {
                        DrawFilter::All => true,
                        DrawFilter::Status(wanted) => *status == wanted,
                    }),
            );
            if items.len() as u32 == limit || next.is_none() {
                break;
            }
        }
        Ok(Page { items, next })
    }

    /// Every purchase of a draw, stripe by stripe (by the first stripe each purchase took),
    /// oldest first within a stripe.
    pub fn export_purchases<'a>(
        &'a self,
        draw: &'a Draw,
    ) -> impl Stream<Item = Result<Purchase, TicketError>> + 'a {
        futures::stream::iter(0..draw.config.stripes())
            .map(move |stripe| self.stripe_purchases(&draw.draw_id, stripe))
            .buffered(EXPORT_CONCURRENCY)
            .map_ok(|purchases| futures::stream::iter(purchases.into_iter().map(Ok)))
            .try_flatten()
    }

    async fn stripe_purchases(
        &self,
        draw_id: &DrawId,
        stripe: u32,
    ) -> Result<Vec<Purchase>, TicketError> {
        let mut purchases = Vec::new();
        let mut after = None;
        loop {
            let page = self
                .store()
                .stripe_purchases(draw_id, stripe, after.as_ref(), EXPORT_PAGE)
                .await?;
            purchases.extend(page.items);
            match page.next {
                Some(next) => after = Some(next),
                None => return Ok(purchases),
            }
        }
    }
}
