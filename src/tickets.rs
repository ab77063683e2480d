//! Selling raffle tickets: draws, purchases and the per-process view of the cursors.
//!
//! The table decides every race (conditional writes in one transaction); this module only
//! chooses what to ask for. It keeps, per warm process, each draw's settings and a lower
//! bound of each stripe cursor, so that a purchase usually costs one transaction and no
//! read. A cursor that moved under us comes back in the cancellation reasons.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::{StreamExt, TryStreamExt};
use rand::SeedableRng;
use rand::rngs::StdRng;
use tracing::{debug, info, instrument, warn};

use crate::domain::draw::{Draw, DrawConfig, DrawStatus, Plan, Side, StripeTake, StripeView};
use crate::domain::ids::{DrawId, PaymentId};
use crate::domain::permutation::{Permutation, PermutationKey};
use crate::domain::purchase::{Purchase, PurchaseRequest, Ticket};
use crate::store::draws::{StripeClaim, StripeState};
use crate::store::purchases::{Commit, PurchaseRead};
use crate::store::{Store, StoreError, backoff};

/// Transactions one purchase may send before it reports contention.
const MAX_ATTEMPTS: u32 = 32;
/// Steps of any kind (transactions, claims, reads) one purchase may take.
const MAX_STEPS: u32 = 96;
/// Full reads of the cursors one purchase may make.
const MAX_REFRESHES: u32 = 3;
/// Once every stripe end is out, processes that find it out spread their first read of
/// the cursors over this many round trips of their claim. Read at once, they would all see
/// the same few stripes with room and all buy from them at once, and most would miss.
const ENTRY_SPREAD: f64 = 8.0;
/// After a miss on an end that others sell from, a purchase waits a random part of up to
/// this many round trips of its transaction, one more per miss.
const MISS_SPREAD_MAX: u32 = 4;
/// Stripes closed at once when a draw closes.
const CLOSE_CONCURRENCY: usize = 16;

/// Outcomes of ticket operations that are not successes.
#[derive(Debug, thiserror::Error)]
pub enum TicketError {
    #[error("draw {0} does not exist")]
    DrawNotFound(DrawId),
    #[error("draw {0} exists already")]
    DrawExists(DrawId),
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

/// A purchase and whether this call made it or found it.
#[derive(Debug, Clone)]
pub struct PurchaseReceipt {
    pub purchase: Purchase,
    pub replayed: bool,
    /// Transactions and reads this call sent (SDK retries not included).
    pub requests: u32,
}

/// One draw as this process knows it.
struct DrawCache {
    draw: Draw,
    permutation: Permutation,
    view: Mutex<CachedView>,
}

struct CachedView {
    stripes: StripeView,
    closed: bool,
    /// Cursors may be far behind: read them all before trusting a refusal or a choice
    /// among stripes that others sell from.
    stale: bool,
    /// Moves whenever this process learns something of the table. A purchase that saw its
    /// record absent at the newest state it knew may refuse without reading it again.
    epoch: u64,
}

impl CachedView {
    /// Records what the table says of a stripe.
    fn learn(&mut self, stripe: u32, state: &StripeState) {
        self.stripes.learn(stripe, state.counters);
        self.closed |= state.closed;
        self.epoch += 1;
    }
}

impl DrawCache {
    fn new(draw: Draw) -> Self {
        Self {
            permutation: Permutation::new(draw.config.total_tickets(), &draw.key),
            view: Mutex::new(CachedView {
                stripes: StripeView::new(draw.config.layout()),
                closed: draw.status == DrawStatus::Closed,
                stale: true,
                epoch: 0,
            }),
            draw,
        }
    }

    /// Records what a claim of stripe ends answered.
    fn claimed(&self, claim: &StripeClaim) {
        let mut view = self.view();
        view.stripes.claimed(claim.first, claim.count);
        for &stripe in &claim.sold_out {
            view.stripes.sold_out(stripe);
        }
        view.closed |= claim.draw.status == DrawStatus::Closed;
        view.epoch += 1;
    }

    fn view(&self) -> std::sync::MutexGuard<'_, CachedView> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn numbers(&self, takes: &[StripeTake]) -> Vec<u64> {
        let layout = self.draw.config.layout();
        takes
            .iter()
            .flat_map(|t| {
                let stripe = layout.indices(t.stripe);
                match t.side {
                    Side::Bottom => stripe.start + t.cursor..stripe.start + t.cursor + t.count,
                    Side::Top => stripe.end - t.cursor - t.count..stripe.end - t.cursor,
                }
            })
            .map(|index| self.permutation.apply(index) + 1)
            .collect()
    }
}

/// What a read of the cursors found.
struct Refreshed {
    requests: u32,
    /// The purchase on record for the payment id.
    existing: Option<Purchase>,
    /// The view's epoch after the read, when it saw no record and nothing newer came in.
    absent_at: Option<u64>,
}

/// Marks stripes busy in this process for the life of one attempt.
struct BusyGuard<'a> {
    cache: &'a DrawCache,
    takes: &'a [StripeTake],
}

impl<'a> BusyGuard<'a> {
    fn new(cache: &'a DrawCache, takes: &'a [StripeTake]) -> Self {
        cache.view().stripes.set_busy(takes, true);
        Self { cache, takes }
    }
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.cache.view().stripes.set_busy(self.takes, false);
    }
}

/// Ticket operations for one process. Cheap to share behind an `Arc`.
pub struct TicketService {
    store: Store,
    draws: Mutex<HashMap<DrawId, Arc<DrawCache>>>,
}

impl TicketService {
    pub fn new(store: Store) -> Self {
        Self {
            store,
            draws: Mutex::new(HashMap::new()),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    #[instrument(skip_all, fields(draw_id))]
    pub async fn create_draw(&self, new: NewDraw) -> Result<DrawSummary, TicketError> {
        let draw = Draw {
            draw_id: new.draw_id.unwrap_or_else(DrawId::generate),
            name: new.name,
            config: new.config,
            key: PermutationKey::generate(),
            status: DrawStatus::Open,
            created_at: Utc::now(),
        };
        tracing::Span::current().record("draw_id", draw.draw_id.as_str());
        if !self.store.insert_draw(&draw).await? {
            return Err(TicketError::DrawExists(draw.draw_id));
        }
        info!(
            total_tickets = draw.config.total_tickets(),
            stripes = draw.config.stripes(),
            "draw created"
        );
        Ok(DrawSummary { draw, sold: 0 })
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

    /// Closes the draw: first the draw item, then every stripe cursor, so that once this
    /// returns no purchase can commit. Closing again finishes an interrupted close.
    #[instrument(skip(self))]
    pub async fn close_draw(&self, draw_id: &DrawId) -> Result<DrawSummary, TicketError> {
        let draw = self
            .store
            .mark_draw_closed(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        futures::stream::iter(0..draw.config.stripes())
            .map(|s| self.store.close_stripe(draw_id, s))
            .buffer_unordered(CLOSE_CONCURRENCY)
            .try_collect::<()>()
            .await?;
        if let Some(cache) = self.cached(draw_id) {
            cache.view().closed = true;
        }
        info!("draw closed");
        self.get_draw(draw_id).await
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
        let (cache, mut requests) = match self.cached(&request.draw_id) {
            Some(cache) => (cache, 0u32),
            None => (self.open_draw(&request.draw_id).await?, 1),
        };
        let max = cache.draw.config.max_per_purchase();
        if !(1..=max).contains(&request.quantity) {
            return Err(TicketError::InvalidQuantity { max });
        }
        let fingerprint = request.fingerprint();
        let created_at = Utc::now();
        let mut rng = StdRng::from_rng(&mut rand::rng());
        let mut refreshes = 0u32;
        let mut conflicts = 0u32;
        let mut attempt = 0u32;
        // The view's epoch when this purchase last saw its record absent, with nothing in
        // the view newer than that sight.
        let mut absent_at: Option<u64> = None;
        for _ in 0..MAX_STEPS {
            let (plan, closed, stale, epoch) = {
                let view = cache.view();
                let plan = view.stripes.plan(u64::from(request.quantity), &mut rng);
                let stale = view.stale && view.stripes.all_handed();
                (plan, view.closed, stale, view.epoch)
            };
            let refresh = !closed
                && match plan {
                    // Once every end is handed out, choosing among ends that others sell
                    // from should rest on fresh cursors.
                    Plan::Take(_) | Plan::Claim(_) => stale && refreshes < MAX_REFRESHES,
                    Plan::TooFragmented => refreshes == 0,
                    Plan::NotEnough { .. } => false,
                };
            if refresh {
                let refreshed = self.refresh(&cache, &request.payment_id).await?;
                requests += refreshed.requests;
                if let Some(existing) = refreshed.existing {
                    return replay(existing, &fingerprint, requests);
                }
                absent_at = refreshed.absent_at;
                refreshes += 1;
                continue;
            }
            let takes = match plan {
                Plan::Take(takes) if !closed => takes,
                Plan::Claim(count) if !closed => {
                    requests += 1;
                    let sold_out = cache.view().stripes.unreported_sold_out();
                    let sent = Instant::now();
                    let claim = self
                        .store
                        .claim_stripes(&request.draw_id, count, &sold_out)
                        .await?
                        .ok_or_else(|| TicketError::DrawNotFound(request.draw_id.clone()))?;
                    cache.claimed(&claim);
                    if claim.first >= 2 * u64::from(cache.draw.config.stripes()) {
                        spread(sent.elapsed().mul_f64(ENTRY_SPREAD)).await;
                    }
                    continue;
                }
                refusal => {
                    // Known cursors are lower bounds, so "not enough" is never wrong. A
                    // replayed payment gets its tickets even after a sell-out or close, so
                    // the record is read after what the refusal rests on, unless this
                    // purchase saw it absent at least that late.
                    if absent_at != Some(epoch) {
                        requests += 1;
                        if let Some(existing) = self
                            .store
                            .get_purchase(&request.draw_id, &request.payment_id)
                            .await?
                        {
                            return replay(existing, &fingerprint, requests);
                        }
                    }
                    return Err(match refusal {
                        _ if closed => TicketError::DrawClosed(request.draw_id),
                        Plan::NotEnough { remaining } => TicketError::SoldOut { remaining },
                        _ => TicketError::TooFragmented {
                            remaining: cache.view().stripes.remaining(),
                        },
                    });
                }
            };
            let purchase = Purchase {
                draw_id: request.draw_id.clone(),
                payment_id: request.payment_id.clone(),
                quantity: request.quantity,
                payer_id: request.payer_id.clone(),
                tickets: cache.numbers(&takes),
                fingerprint: fingerprint.clone(),
                created_at,
            };
            if attempt == MAX_ATTEMPTS {
                break;
            }
            attempt += 1;
            requests += 1;
            let sent = Instant::now();
            let commit = {
                let _busy = BusyGuard::new(&cache, &takes);
                self.store.commit_purchase(&purchase, &takes).await?
            };
            let took = sent.elapsed();
            let cancellation = match commit {
                Commit::Committed => {
                    let mut view = cache.view();
                    view.stripes.committed(&takes);
                    drop(view);
                    info!(tickets = ?purchase.tickets, requests, attempt, "purchase committed");
                    return Ok(PurchaseReceipt {
                        purchase,
                        replayed: false,
                        requests,
                    });
                }
                Commit::Cancelled(cancellation) => cancellation,
            };
            debug!(
                attempt,
                stripes = ?takes.iter().map(|t| t.stripe).collect::<Vec<_>>(),
                stale = ?cancellation.stale_stripes,
                conflict = cancellation.conflict,
                throttled = cancellation.throttled,
                "purchase attempt cancelled"
            );
            if let Some(existing) = cancellation.existing {
                return replay(existing, &fingerprint, requests);
            }
            // Tickets behind a stale cursor are expected: the cursor check failed too.
            // A ticket taken while every cursor matched would mean a broken invariant.
            if cancellation.stale_stripes.is_empty() && !cancellation.taken_tickets.is_empty() {
                return Err(StoreError::Invariant(format!(
                    "tickets {:?} exist behind their stripe cursor",
                    cancellation.taken_tickets
                ))
                .into());
            }
            let shared_miss = {
                let mut view = cache.view();
                // The transaction checked every condition at one point in time: its record's
                // passed, so the record was absent then. That holds for refusals only if the
                // view learned nothing newer meanwhile.
                let alone = view.epoch == epoch;
                for (stripe, state) in &cancellation.stale_stripes {
                    view.learn(*stripe, state);
                }
                absent_at = (alone && !cancellation.conflict && !cancellation.throttled)
                    .then_some(view.epoch);
                // A miss corrects the stripes it touched; a miss on stripes that others sell
                // from means the rest of the view is old too, and one read corrects it all.
                let shared_miss = view.stripes.all_handed()
                    && cancellation
                        .stale_stripes
                        .iter()
                        .any(|(s, _)| !view.stripes.owns(*s));
                view.stale |= shared_miss;
                shared_miss
            };
            // Where processes share ends, retrying at once meets the same crowd again.
            if shared_miss {
                conflicts += 1;
                spread(took * conflicts.min(MISS_SPREAD_MAX)).await;
            } else if cancellation.conflict || cancellation.throttled {
                conflicts += 1;
                backoff(conflicts).await;
            }
        }
        warn!(requests, attempt, "purchase gave up under contention");
        Err(StoreError::Contention { attempts: attempt }.into())
    }

    /// Reads the cursors of the draw that may still move, then the purchase record.
    async fn refresh(
        &self,
        cache: &DrawCache,
        payment_id: &PaymentId,
    ) -> Result<Refreshed, TicketError> {
        // A full stripe stays full: only stripes that may have room are read again.
        let (open, epoch): (Vec<u32>, u64) = {
            let view = cache.view();
            let open = (0..cache.draw.config.stripes())
                .filter(|&s| view.stripes.room(s) > 0)
                .collect();
            (open, view.epoch)
        };
        let read = self
            .store
            .read_cursors_then_purchase(&cache.draw.draw_id, &open, payment_id)
            .await?;
        let mut view = cache.view();
        let alone = view.epoch == epoch;
        for (stripe, state) in &read.stripes {
            view.learn(*stripe, state);
        }
        view.stale = false;
        let (existing, absent_at) = match read.purchase {
            PurchaseRead::Found(existing) => (Some(existing), None),
            PurchaseRead::Absent if alone => (None, Some(view.epoch)),
            PurchaseRead::Absent | PurchaseRead::Unknown => (None, None),
        };
        debug!(
            read = open.len(),
            remaining = view.stripes.remaining(),
            "cursors refreshed"
        );
        Ok(Refreshed {
            requests: read.requests,
            existing,
            absent_at,
        })
    }

    fn cached(&self, draw_id: &DrawId) -> Option<Arc<DrawCache>> {
        self.draws
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(draw_id)
            .cloned()
    }

    /// Caches a draw this process has not seen, opening its first stripe on the way.
    async fn open_draw(&self, draw_id: &DrawId) -> Result<Arc<DrawCache>, TicketError> {
        let claim = self
            .store
            .claim_stripes(draw_id, 1, &[])
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        let cache = self.cache(DrawCache::new(claim.draw.clone()));
        // Another purchase of this process may have cached the draw meanwhile: the stripe
        // is ours all the same.
        cache.claimed(&claim);
        Ok(cache)
    }

    fn cache(&self, cache: DrawCache) -> Arc<DrawCache> {
        self.draws
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(cache.draw.draw_id.clone())
            .or_insert_with(|| Arc::new(cache))
            .clone()
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
        Ok(self.cache(DrawCache::new(draw)))
    }
}

/// Waits a random part of `window`.
async fn spread(window: Duration) {
    tokio::time::sleep(window.mul_f64(rand::random::<f64>())).await;
}

fn replay(
    existing: Purchase,
    fingerprint: &str,
    requests: u32,
) -> Result<PurchaseReceipt, TicketError> {
    if existing.fingerprint != fingerprint {
        return Err(TicketError::IdempotencyConflict(existing.payment_id));
    }
    info!(tickets = ?existing.tickets, "purchase replayed");
    Ok(PurchaseReceipt {
        purchase: existing,
        replayed: true,
        requests,
    })
}
