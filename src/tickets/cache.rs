//! What one process knows of the draws it sells: their settings, a lower bound of each
//! stripe cursor and the stripe ends it holds. Bounded: the least recently used draw is
//! forgotten first, and read again when it is next used.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use jiff::Timestamp;
use lru::LruCache;

use crate::store::StoreError;
use crate::store::draws::{StripeClaim, StripeState, Survey};
use crate::store::limits::{MAX_TRANSACTION_ITEMS, STRIPE_HOLD_MARKS};
use tally_domain::draw::Draw;
use tally_domain::ids::DrawId;
use tally_domain::instant::{InstantKey, InstantWin};
use tally_domain::permutation::Permutation;
use tally_domain::purchase::FingerprintKey;
use tally_domain::secret::DeploymentSecret;
use tally_domain::stripes::{StripeTake, StripeView, held_caps};
use tally_domain::winners::InstantMap;

/// Draws one process keeps by default: about 24 KB each for a draw of 1,024 stripes, so
/// at most about 12 MB.
pub const DEFAULT_CACHED_DRAWS: usize = 512;

pub(super) struct DrawCache {
    pub(super) draw: Draw,
    pub(super) fingerprint_key: FingerprintKey,
    permutation: Permutation,
    /// The winning numbers of a draw with instant wins: secret until the winners.
    instant_map: Option<InstantMap>,
    view: Mutex<CachedView>,
    /// When this process last read the counts after a refusal (Unix ms).
    sell_out_read_at: AtomicI64,
    /// This process saw the draw sold out, and recorded it.
    sold_out: AtomicBool,
    /// The draw's beacon is fixed (`Draw::beacon_fixed`), as read or as this process
    /// recorded it.
    beacon_fixed: AtomicBool,
    /// Read without a beacon before the draw opened, by this process's clock: one declared
    /// since may not be fixed by its declaration (made more than a minute before the
    /// opening by its own clock), and this process would not know it.
    read_before_selling: bool,
}

pub(super) struct CachedView {
    pub(super) stripes: StripeView,
    /// The draw's close has begun.
    pub(super) closed: bool,
    /// Cursors may be far behind: read them (a snapshot, every stripe, or a survey) before
    /// trusting a refusal or a choice among stripes that others sell from.
    pub(super) stale: bool,
    /// Moves whenever this process learns something of the table. A purchase that saw its
    /// record absent at the newest state it knew may refuse without reading it again.
    pub(super) epoch: u64,
}

impl CachedView {
    pub(super) fn learn_all(&mut self, states: &[(u32, StripeState)]) {
        for (stripe, state) in states {
            self.stripes.learn(*stripe, state.cursors, &state.chosen);
            self.stripes.learn_held(*stripe, &state.held);
            self.closed |= state.closed;
            self.epoch += 1;
        }
    }
}

impl DrawCache {
    /// Refuses a draw whose instant wins were committed under another deployment secret:
    /// its map would not be the one committed.
    pub(super) fn new(
        draw: Draw,
        secret: &DeploymentSecret,
        now: Timestamp,
    ) -> Result<Self, StoreError> {
        let instant_map = draw
            .instant_wins
            .as_ref()
            .map(|instant| {
                let key = InstantKey::derive(secret, &draw.seed);
                if key.commitment() != instant.commitment {
                    return Err(StoreError::Invariant(format!(
                        "draw {}: the deployment secret is not the one its instant wins were committed under",
                        draw.draw_id
                    )));
                }
                Ok(instant.map(&key, draw.config.total_tickets()))
            })
            .transpose()?;
        let layout = draw.config.layout();
        let mut stripes =
            StripeView::new(layout, draw.config.purchase_budget(MAX_TRANSACTION_ITEMS))
                .with_held_caps(held_caps(
                    layout,
                    draw.config.max_held_percent(),
                    STRIPE_HOLD_MARKS,
                ));
        if draw.sold_out_at.is_some() {
            stripes.all_sold_out();
        }
        Ok(Self {
            instant_map,
            permutation: Permutation::new(draw.config.total_tickets(), &draw.key),
            fingerprint_key: FingerprintKey::derive(secret, &draw.draw_id),
            view: Mutex::new(CachedView {
                stripes,
                closed: draw.status.refuses_sales(),
                stale: true,
                epoch: 0,
            }),
            sell_out_read_at: AtomicI64::new(i64::MIN),
            sold_out: AtomicBool::new(draw.sold_out_at.is_some()),
            beacon_fixed: AtomicBool::new(draw.beacon_fixed),
            read_before_selling: draw.beacon.is_none()
                && draw
                    .schedule
                    .opens_at()
                    .is_some_and(|opens_at| now < opens_at),
            draw,
        })
    }

    /// What `tickets` (of one transaction) win, ascending.
    pub(super) fn instant_wins(&self, tickets: &[u64]) -> Vec<InstantWin> {
        match (&self.draw.instant_wins, &self.instant_map) {
            (Some(instant), Some(map)) => instant.wins(map, tickets),
            _ => Vec::new(),
        }
    }

    pub(super) fn instant_map(&self) -> Option<&InstantMap> {
        self.instant_map.as_ref()
    }

    pub(super) fn claimed(&self, claim: &StripeClaim) {
        let mut view = self.view();
        view.stripes.claimed(claim.first, claim.count);
        self.sold_out(&mut view, &claim.sold_out, claim.draw.sold_out_at.is_some());
        view.closed |= claim.draw.status.refuses_sales();
        view.epoch += 1;
    }

    /// A survey leaves the view fresh even where it could not read every stripe that may
    /// still sell: those it left out keep their cursors (lower bounds), which a miss there
    /// corrects, and a snapshot after it would cost a request more.
    pub(super) fn surveyed(&self, survey: &Survey) {
        let mut view = self.view();
        view.learn_all(&survey.stripes);
        view.stripes.handed_at_least(survey.opened);
        view.stale = false;
        self.sold_out(&mut view, &survey.sold_out, survey.sell_out_recorded);
    }

    /// Records `stripes` seen run out, and all of them if the draw's sell-out is recorded.
    fn sold_out(&self, view: &mut CachedView, stripes: &[u32], recorded: bool) {
        for &stripe in stripes {
            view.stripes.sold_out(stripe);
        }
        if recorded {
            view.stripes.all_sold_out();
            self.set_seen_sold_out();
        }
    }

    pub(super) fn seen_sold_out(&self) -> bool {
        self.sold_out.load(Ordering::Relaxed)
    }

    pub(super) fn set_seen_sold_out(&self) {
        self.sold_out.store(true, Ordering::Relaxed);
    }

    /// Whether this process fixes the draw's beacon before its first sale or hold: the
    /// beacon it knows, or one it may not know of.
    pub(super) fn beacon_to_fix(&self) -> bool {
        !self.beacon_fixed.load(Ordering::Relaxed)
            && (self.draw.beacon.is_some() || self.read_before_selling)
    }

    pub(super) fn set_beacon_fixed(&self) {
        self.beacon_fixed.store(true, Ordering::Relaxed);
    }

    /// Whether this process may read the counts after a refusal at `now` (Unix ms): once
    /// per `every` ms at most, the first to ask taking the turn.
    pub(super) fn sell_out_read_turn(&self, now: i64, every: i64) -> bool {
        let last = self.sell_out_read_at.load(Ordering::Relaxed);
        now.saturating_sub(last) >= every
            && self
                .sell_out_read_at
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    pub(super) fn view(&self) -> MutexGuard<'_, CachedView> {
        self.view.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The ticket numbers that the takes stand for.
    pub(super) fn numbers(&self, takes: &[StripeTake]) -> Vec<u64> {
        takes
            .iter()
            .flat_map(|t| t.taken.iter().chain(&t.returned).map(|&o| (t.stripe, o)))
            .map(|(s, o)| self.number(s, o))
            .collect()
    }

    pub(super) fn permutation(&self) -> &Permutation {
        &self.permutation
    }

    pub(super) fn number(&self, stripe: u32, offset: u64) -> u64 {
        let start = self.draw.config.layout().indices(stripe).start;
        self.permutation.apply(start + offset) + 1
    }

    /// The stripe and offset of ticket `number` (in `1..=total_tickets`).
    pub(super) fn locate(&self, number: u64) -> (u32, u64) {
        let index = self.permutation.invert(number - 1);
        self.draw.config.layout().locate(index)
    }
}

/// Marks stripes busy in this process for the life of one attempt.
pub(super) struct BusyGuard<'a>(&'a DrawCache, &'a [StripeTake]);

impl<'a> BusyGuard<'a> {
    pub(super) fn new(cache: &'a DrawCache, takes: &'a [StripeTake]) -> Self {
        cache.view().stripes.set_busy(takes, true);
        Self(cache, takes)
    }
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.view().stripes.set_busy(self.1, false);
    }
}

/// The draws of one process, least recently used forgotten first.
pub(super) struct DrawCaches(Mutex<LruCache<DrawId, Arc<DrawCache>>>);

impl DrawCaches {
    pub(super) fn new(capacity: NonZeroUsize) -> Self {
        Self(Mutex::new(LruCache::new(capacity)))
    }

    fn lock(&self) -> MutexGuard<'_, LruCache<DrawId, Arc<DrawCache>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn get(&self, draw_id: &DrawId) -> Option<Arc<DrawCache>> {
        self.lock().get(draw_id).cloned()
    }

    /// Keeps `cache` unless another purchase of this process cached the draw meanwhile;
    /// returns the one kept.
    pub(super) fn keep(&self, cache: DrawCache) -> Arc<DrawCache> {
        self.lock()
            .get_or_insert(cache.draw.draw_id.clone(), || Arc::new(cache))
            .clone()
    }
}
