//! Lists: a payer's purchases, the draws, a draw's purchases page by page for
//! reconciliation, and every purchase of a draw for an export.

use futures::{Stream, StreamExt, TryStreamExt};
use jiff::Timestamp;
use tracing::instrument;

use super::{TicketError, TicketService};
use crate::store::lists::{After, Page};
use tally_domain::draw::{Draw, DrawStatus};
use tally_domain::ids::{DrawId, PayerId};
use tally_domain::purchase::{Channel, Purchase, PurchaseStatus};

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
/// Index partitions (stripes) one page of a draw's purchases may query: a draw with many
/// stripes and few purchases answers a short page and a cursor rather than a slow one.
const STRIPE_ROUNDS: u32 = 16;

/// Which of a draw's purchases to list: each filter, when given, keeps the purchases that
/// have that value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurchaseFilter {
    pub status: Option<PurchaseStatus>,
    pub channel: Option<Channel>,
}

impl PurchaseFilter {
    pub fn keeps(&self, purchase: &Purchase) -> bool {
        self.status.is_none_or(|s| s == purchase.status())
            && self.channel.is_none_or(|c| c == purchase.channel)
    }
}

/// Where a page of a draw's purchases starts: in the index partition of `stripe`, after
/// the entry `after` (from its first entry when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurchasesFrom {
    pub stripe: u32,
    pub after: Option<After>,
}

/// A page of a draw's purchases and where the next one starts, `None` at the end.
#[derive(Debug, Clone)]
pub struct DrawPurchasesPage {
    pub items: Vec<Purchase>,
    pub next: Option<PurchasesFrom>,
}

impl TicketService {
    /// A payer's purchases in a draw with their tickets, newest first.
    #[instrument(skip(self, payer))]
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
        // A cursor's id is checked as a payment's, which allows what a draw's does not.
        if after.is_some_and(|a| DrawId::parse(a.id()).is_err()) {
            return Err(TicketError::InvalidCursor);
        }
        let now = Timestamp::now();
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

    /// A page of a draw's purchases: stripe by stripe (the first stripe each took), oldest
    /// first within a stripe, each read strongly consistent. With a filter, or past many
    /// empty stripes, a page may hold fewer than `limit` while `next` says more follow.
    #[instrument(skip(self))]
    pub async fn draw_purchases(
        &self,
        draw_id: &DrawId,
        filter: PurchaseFilter,
        from: Option<PurchasesFrom>,
        limit: u32,
    ) -> Result<DrawPurchasesPage, TicketError> {
        let draw = self
            .store()
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        let stripes = draw.config.stripes();
        let mut at = from.unwrap_or(PurchasesFrom {
            stripe: 0,
            after: None,
        });
        if at.stripe >= stripes {
            return Err(TicketError::InvalidCursor);
        }
        let mut items = Vec::new();
        for _ in 0..STRIPE_ROUNDS {
            let want = limit - items.len() as u32;
            let page = self
                .store()
                .stripe_purchases(draw_id, at.stripe, at.after.as_ref(), want)
                .await?;
            items.extend(page.items.into_iter().filter(|p| filter.keeps(p)));
            at = match page.next {
                Some(after) => PurchasesFrom {
                    stripe: at.stripe,
                    after: Some(after),
                },
                None if at.stripe + 1 < stripes => PurchasesFrom {
                    stripe: at.stripe + 1,
                    after: None,
                },
                None => return Ok(DrawPurchasesPage { items, next: None }),
            };
            if items.len() as u32 == limit {
                break;
            }
        }
        Ok(DrawPurchasesPage {
            items,
            next: Some(at),
        })
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
