//! Selling raffle tickets: draws, purchases and the per-process view of the cursors.
//!
//! The table decides every race (conditional writes in one transaction); this module only
//! chooses what to ask for. It keeps, per warm process, each draw's settings and a lower
//! bound of each stripe cursor, so that a purchase usually costs one transaction and no
//! read.

mod cache;
mod close;
mod purchase;

use std::num::NonZeroUsize;
use std::sync::Arc;

use chrono::Utc;
use tracing::{info, instrument};

pub use cache::DEFAULT_CACHED_DRAWS;

use crate::domain::draw::{Draw, DrawConfig, DrawConfigError, DrawStatus};
use crate::domain::ids::{DrawId, PaymentId};
use crate::domain::permutation::PermutationKey;
use crate::domain::purchase::{Purchase, PurchaseRequest, Ticket};
use crate::store::limits::MAX_TRANSACTION_ITEMS;
use crate::store::{Inserted, Store, StoreError};
use cache::{DrawCache, DrawCaches};
use purchase::PurchaseRun;

/// Outcomes of ticket operations that are not successes.
#[derive(Debug, thiserror::Error)]
pub enum TicketError {
    #[error("draw {0} does not exist")]
    DrawNotFound(DrawId),
    #[error("draw {0} exists already with other settings")]
    DrawExists(DrawId),
    #[error(transparent)]
    InvalidConfig(#[from] DrawConfigError),
    #[error("draw {0} is closed")]
    DrawClosed(DrawId),
    #[error("quantity must be between 1 and {max}")]
    InvalidQuantity { max: u32 },
    #[error("only {remaining} tickets remain")]
    SoldOut { remaining: u64 },
    #[error("{remaining} tickets remain, spread over more stripes than one purchase can take")]
    TooFragmented { remaining: u64 },
    #[error("payment id {0} was used for a different purchase")]
    IdempotencyConflict(PaymentId),
    #[error("purchase {0} does not exist")]
    PurchaseNotFound(PaymentId),
    #[error("ticket {number} is outside 1..={total}")]
    TicketOutOfRange { number: u64, total: u64 },
    #[error("ticket {0} is not sold")]
    TicketNotSold(u64),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A new draw as asked for.
#[derive(Debug, Clone)]
pub struct NewDraw {
    pub draw_id: Option<DrawId>,
    pub name: Option<String>,
    pub config: DrawConfig,
}

/// A draw with its live counts.
#[derive(Debug, Clone)]
pub struct DrawSummary {
    pub draw: Draw,
    pub sold: u64,
}

impl DrawSummary {
    pub fn remaining(&self) -> u64 {
        self.draw.config.total_tickets() - self.sold
    }
}

/// What a create found: a new draw, or the identical one asked for before.
#[derive(Debug, Clone)]
pub struct CreatedDraw {
    pub summary: DrawSummary,
    /// `false` when an identical draw existed already (a repeated create).
    pub created: bool,
}

/// A purchase and whether this call made it or found it.
#[derive(Debug, Clone)]
pub struct PurchaseReceipt {
    pub purchase: Purchase,
    pub replayed: bool,
    /// Transactions and reads this call sent (SDK retries not included).
    pub requests: u32,
}

/// Ticket operations for one process. Cheap to share behind an `Arc`.
pub struct TicketService {
    store: Store,
    draws: DrawCaches,
}

impl TicketService {
    pub fn new(store: Store) -> Self {
        Self::with_cached_draws(
            store,
            NonZeroUsize::new(DEFAULT_CACHED_DRAWS).expect("positive"),
        )
    }

    /// A service that keeps at most `draws` draws in memory.
    pub fn with_cached_draws(store: Store, draws: NonZeroUsize) -> Self {
        Self {
            store,
            draws: DrawCaches::new(draws),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Creates a draw. Repeating a create with the same settings is safe: it answers the
    /// existing draw; other settings under the same id are a conflict.
    #[instrument(skip_all, fields(draw_id))]
    pub async fn create_draw(&self, new: NewDraw) -> Result<CreatedDraw, TicketError> {
        let config = new.config.check_fits(MAX_TRANSACTION_ITEMS)?;
        let draw = Draw {
            draw_id: new.draw_id.unwrap_or_else(DrawId::generate),
            name: new.name,
            config,
            key: PermutationKey::generate(),
            status: DrawStatus::Open,
            created_at: Utc::now(),
        };
        tracing::Span::current().record("draw_id", draw.draw_id.as_str());
        match self.store.insert_draw(&draw).await? {
            Inserted::New => {
                info!(
                    total_tickets = draw.config.total_tickets(),
                    stripes = draw.config.stripes(),
                    "draw created"
                );
                Ok(CreatedDraw {
                    summary: DrawSummary { draw, sold: 0 },
                    created: true,
                })
            }
            Inserted::Existing(existing)
                if existing.name == draw.name && existing.config == draw.config =>
            {
                info!("draw exists with the same settings");
                Ok(CreatedDraw {
                    summary: self.get_draw(&existing.draw_id).await?,
                    created: false,
                })
            }
            Inserted::Existing(existing) => Err(TicketError::DrawExists(existing.draw_id)),
        }
    }

    #[instrument(skip(self))]
    pub async fn get_draw(&self, draw_id: &DrawId) -> Result<DrawSummary, TicketError> {
        let draw = self
            .store
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        let all: Vec<u32> = (0..draw.config.stripes()).collect();
        let stripes = self.store.read_stripes(draw_id, &all).await?;
        let sold = stripes.iter().map(|(_, s)| s.sold()).sum();
        Ok(DrawSummary { draw, sold })
    }

    #[instrument(skip(self))]
    pub async fn get_purchase(
        &self,
        draw_id: &DrawId,
        payment_id: &PaymentId,
    ) -> Result<Purchase, TicketError> {
        self.store
            .get_purchase(draw_id, payment_id)
            .await?
            .ok_or_else(|| TicketError::PurchaseNotFound(payment_id.clone()))
    }

    #[instrument(skip(self))]
    pub async fn get_ticket(&self, draw_id: &DrawId, number: u64) -> Result<Ticket, TicketError> {
        let cache = self.draw_cache(draw_id).await?;
        let total = cache.draw.config.total_tickets();
        if !(1..=total).contains(&number) {
            return Err(TicketError::TicketOutOfRange { number, total });
        }
        self.store
            .get_ticket(draw_id, number)
            .await?
            .ok_or(TicketError::TicketNotSold(number))
    }

    /// Sells `quantity` tickets to one payment, all or nothing, exactly once per payment id.
    #[instrument(skip_all, fields(draw_id = %request.draw_id, payment_id = %request.payment_id, quantity = request.quantity))]
    pub async fn purchase(&self, request: PurchaseRequest) -> Result<PurchaseReceipt, TicketError> {
        // A process new to the draw reads it and opens its first stripe in one request.
        let (cache, requests) = match self.cached(&request.draw_id) {
            Some(cache) => (cache, 0),
            None => (self.open_draw(&request.draw_id).await?, 1),
        };
        let max = cache.draw.config.max_per_purchase();
        if !(1..=max).contains(&request.quantity) {
            return Err(TicketError::InvalidQuantity { max });
        }
        PurchaseRun::new(&self.store, cache, request, requests)
            .run()
            .await
    }

    fn cached(&self, draw_id: &DrawId) -> Option<Arc<DrawCache>> {
        self.draws.get(draw_id)
    }

    /// Caches a draw this process has not seen, opening its first stripe on the way.
    async fn open_draw(&self, draw_id: &DrawId) -> Result<Arc<DrawCache>, TicketError> {
        let claim = self
            .store
            .claim_stripes(draw_id, 1, &[])
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        let cache = self.draws.keep(DrawCache::new(claim.draw.clone()));
        // Another purchase of this process may have cached the draw meanwhile: the stripe
        // is ours all the same.
        cache.claimed(&claim);
        Ok(cache)
    }

    async fn draw_cache(&self, draw_id: &DrawId) -> Result<Arc<DrawCache>, TicketError> {
        if let Some(cache) = self.cached(draw_id) {
            return Ok(cache);
        }
        let draw = self
            .store
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        Ok(self.draws.keep(DrawCache::new(draw)))
    }
}
