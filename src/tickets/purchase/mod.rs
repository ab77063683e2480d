//! One purchase, as a small state machine: plan from what this process knows, then claim
//! stripe ends, read the cursors, commit, or refuse; learn from every cancellation. A
//! purchase of numbers the buyer chose plans in `choose.rs` and shares the rest; a hold
//! is made in `hold.rs` and paid for in `convert.rs`.
//!
//! The table decides every race (conditional writes in one transaction); these steps only
//! choose what to ask for. A cursor that moved under us comes back in the cancellation
//! reasons, so most purchases cost one transaction and no read.

mod choose;
mod convert;
mod hold;

pub use convert::ConvertRequest;
pub(super) use convert::ConvertRun;
pub use hold::HoldReceipt;
pub(super) use hold::HoldRun;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use rand::SeedableRng;
use rand::rngs::StdRng;
use tracing::{debug, info, warn};

use super::cache::{BusyGuard, CachedView, DrawCache};
use super::{Clock, PurchaseReceipt, TicketError};
use crate::domain::purchase::{Purchase, PurchaseRequest};
use crate::domain::schedule::Phase;
use crate::domain::stripes::{ChosenTake, Plan, StripeTake};
use crate::store::allowances::PayerCap;
use crate::store::limits::MAX_BATCH_GET_KEYS;
use crate::store::purchases::{Cancellation, Commit, PurchaseRead};
use crate::store::{Store, StoreError, backoff};
use crate::telemetry::metrics;

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

/// What the next step is, decided from the view at one moment (`epoch`).
enum Step {
    /// Read the cursors that may still move, with the purchase record.
    Refresh,
    /// Ask the draw's counter for this many more stripe ends.
    Claim(u32),
    Commit(Vec<StripeTake>),
    /// Take the numbers the buyer chose, stripe by stripe.
    CommitChosen(Vec<ChosenTake>),
    /// Read these stripes: numbers the view takes for sold or held may be free again.
    ReadStripes(Vec<u32>),
    /// Read these stripes before a lucky dip from ends whose marks the view has not seen.
    ReadAhead(Vec<u32>),
    /// Read how far the counter has handed out ends, with these stripes, before claiming
    /// more: near the end of a draw where buyers choose or hold numbers, the ends left
    /// are few and their stripes unknown.
    Survey(Vec<u32>),
    Refuse(Refusal),
}

/// Why a purchase cannot be served from what the view knows. Known cursors are lower
/// bounds, so a refusal is never premature; holds are not, so a view that knows of some
/// reads the stripes again before it answers sold out.
enum Refusal {
    Closed,
    /// Before the draw's `opens_at`.
    NotOpen,
    NotEnough {
        remaining: u64,
    },
    Fragmented,
    /// Chosen numbers that no purchase can write at once.
    TooSpread,
    /// Chosen numbers that are sold.
    Taken(Vec<u64>),
    /// The payer's allowance has no room: what is left, when known.
    PayerLimit {
        left: Option<u64>,
    },
}

/// A step's result: finished with a receipt, or go on planning.
type Outcome = Result<Option<PurchaseReceipt>, TicketError>;

/// The state of one purchase while it runs.
pub(super) struct PurchaseRun<'a> {
    store: &'a Store,
    cache: Arc<DrawCache>,
    request: PurchaseRequest,
    fingerprint: String,
    created_at: DateTime<Utc>,
    rng: StdRng,
    clock: Clock,
    /// Transactions and reads sent (SDK retries not included).
    requests: u32,
    refreshes: u32,
    conflicts: u32,
    attempts: u32,
    /// The view's epoch at the moment of the last plan.
    epoch: u64,
    /// The view's epoch when this purchase last saw its record absent, with nothing in the
    /// view newer than that sight.
    absent_at: Option<u64>,
    /// The payer's allowance refused the purchase: what is left for the payer.
    payer_left: Option<u64>,
    /// The stripes of chosen numbers the view took for sold or held were read fresh.
    read_taken: bool,
    /// This purchase read how far the counter has gone.
    surveyed: bool,
}

impl<'a> PurchaseRun<'a> {
    /// `requests` counts what it took to get the draw into the cache.
    pub(super) fn new(
        store: &'a Store,
        cache: Arc<DrawCache>,
        request: PurchaseRequest,
        requests: u32,
        clock: Clock,
    ) -> Self {
        Self {
            store,
            fingerprint: request.fingerprint(&cache.fingerprint_key),
            cache,
            request,
            created_at: clock(),
            rng: StdRng::from_rng(&mut rand::rng()),
            clock,
            requests,
            refreshes: 0,
            conflicts: 0,
            attempts: 0,
            epoch: 0,
            absent_at: None,
            payer_left: None,
            read_taken: false,
            surveyed: false,
        }
    }

    pub(super) async fn run(mut self) -> Result<PurchaseReceipt, TicketError> {
        for _ in 0..MAX_STEPS {
            let outcome = match self.next_step() {
                Step::Refresh => self.refresh().await,
                Step::Claim(count) => self.claim(count).await,
                Step::ReadStripes(stripes) => {
                    self.read_taken = true;
                    self.read_stripes(&stripes).await
                }
                Step::ReadAhead(stripes) => self.read_stripes(&stripes).await,
                Step::Survey(stripes) => self.survey(&stripes).await,
                Step::Refuse(refusal) => return self.refuse(refusal).await,
                Step::Commit(_) | Step::CommitChosen(_) if self.attempts == MAX_ATTEMPTS => break,
                Step::Commit(takes) => self.commit(takes, Vec::new()).await,
                Step::CommitChosen(chosen) => self.commit(Vec::new(), chosen).await,
            };
            if let Some(receipt) = outcome? {
                return Ok(receipt);
            }
        }
        warn!(
            requests = self.requests,
            attempts = self.attempts,
            "purchase gave up under contention"
        );
        Err(StoreError::Contention {
            attempts: self.attempts,
        }
        .into())
    }

    /// Plans from the view as it is now. The schedule is read on this process's clock
    /// before every step, so no transaction is sent before `opens_at` or from `closes_at`.
    fn next_step(&mut self) -> Step {
        let quantity = u64::from(self.request.quantity);
        let now = (self.clock)();
        self.cache.view().stripes.at(now.timestamp_millis());
        match self.cache.draw.schedule.phase(now) {
            Phase::NotOpen => return Step::Refuse(Refusal::NotOpen),
            Phase::Over => return Step::Refuse(Refusal::Closed),
            Phase::Open => {}
        }
        if let Some(left) = self.payer_left {
            return Step::Refuse(Refusal::PayerLimit { left: Some(left) });
        }
        if self
            .cache
            .draw
            .config
            .max_per_payer()
            .is_some_and(|max| quantity > max)
        {
            return Step::Refuse(Refusal::PayerLimit { left: None });
        }
        if let Some(numbers) = &self.request.numbers {
            return self.choose(numbers.clone());
        }
        let view = self.cache.view();
        let plan = view.stripes.plan(quantity, &mut self.rng);
        let ahead = match &plan {
            Plan::Take(takes) if view.stripes.marked() => {
                let touched: Vec<u32> = takes.iter().map(|t| t.stripe).collect();
                view.stripes.read_ahead(&touched, MAX_BATCH_GET_KEYS)
            }
            // Before claiming more ends, see whether holds that ended on ours gave back.
            Plan::Claim(_) => view.stripes.ended_unread(),
            _ => Vec::new(),
        };
        let stale = view.stale && view.stripes.all_handed();
        let survey = matches!(plan, Plan::Claim(_))
            && !self.surveyed
            && view.stripes.marked()
            && view.stripes.all_open()
            && !view.stripes.all_handed();
        let open = if survey {
            self.may_sell(&view)
        } else {
            Vec::new()
        };
        let held = (0..self.cache.draw.config.stripes()).any(|s| view.stripes.has_held(s));
        let closed = view.closed;
        self.epoch = view.epoch;
        drop(view);
        if closed {
            return Step::Refuse(Refusal::Closed);
        }
        match plan {
            // Once every end is handed out, choosing among ends that others sell from
            // should rest on fresh cursors.
            Plan::Take(_) | Plan::Claim(_) if stale && self.refreshes < MAX_REFRESHES => {
                Step::Refresh
            }
            Plan::Claim(_) if survey => Step::Survey(open),
            Plan::Take(_) | Plan::Claim(_) if !ahead.is_empty() => Step::ReadAhead(ahead),
            Plan::TooFragmented if self.refreshes == 0 => Step::Refresh,
            // Holds the view knows of may have given numbers back since: sold out is
            // answered from fresh stripes, with what really remains.
            Plan::NotEnough { .. } if held && self.refreshes == 0 => Step::Refresh,
            Plan::Take(takes) => Step::Commit(takes),
            Plan::Claim(count) => Step::Claim(count),
            Plan::NotEnough { remaining } => Step::Refuse(Refusal::NotEnough { remaining }),
            Plan::TooFragmented => Step::Refuse(Refusal::Fragmented),
        }
    }

    /// Reads the cursors of the draw that may still move, then the purchase record.
    async fn refresh(&mut self) -> Outcome {
        // A full stripe stays full unless holds give numbers back: only stripes that may
        // have room are read again.
        let (open, epoch): (Vec<u32>, u64) = {
            let view = self.cache.view();
            (self.may_sell(&view), view.epoch)
        };
        let read = self
            .store
            .read_cursors_then_purchase(&self.request.draw_id, &open, &self.request.payment_id)
            .await?;
        self.requests += read.requests;
        self.refreshes += 1;
        let (alone, epoch) = {
            let mut view = self.cache.view();
            let alone = view.epoch == epoch;
            for (stripe, state) in &read.stripes {
                view.learn(*stripe, state);
            }
            view.stale = false;
            debug!(
                read = open.len(),
                remaining = view.stripes.remaining(),
                "cursors refreshed"
            );
            (alone, view.epoch)
        };
        self.absent_at = match read.purchase {
            PurchaseRead::Found(existing) => return self.replay(existing).await.map(Some),
            PurchaseRead::Absent if alone => Some(epoch),
            PurchaseRead::Absent | PurchaseRead::Unknown => None,
        };
        Ok(None)
    }

    /// The stripes that may still sell: a full stripe stays full unless holds give
    /// numbers back.
    fn may_sell(&self, view: &CachedView) -> Vec<u32> {
        (0..self.cache.draw.config.stripes())
            .filter(|&s| view.stripes.room(s) > 0 || view.stripes.has_held(s))
            .collect()
    }

    /// Reads how far the counter has gone, with `stripes`, into the view.
    async fn survey(&mut self, stripes: &[u32]) -> Outcome {
        self.requests += (stripes.len() + 1).div_ceil(MAX_BATCH_GET_KEYS) as u32;
        self.surveyed = true;
        let survey = self
            .store
            .survey(&self.request.draw_id, stripes)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(self.request.draw_id.clone()))?;
        self.cache.surveyed(&survey);
        Ok(None)
    }

    /// Reads stripes fresh into the view.
    async fn read_stripes(&mut self, stripes: &[u32]) -> Outcome {
        self.requests += stripes.len().div_ceil(MAX_BATCH_GET_KEYS) as u32;
        let states = self
            .store
            .read_stripes(&self.request.draw_id, stripes)
            .await?;
        let mut view = self.cache.view();
        for (stripe, state) in &states {
            view.learn(*stripe, state);
        }
        Ok(None)
    }

    /// Claims `count` more stripe ends from the draw's counter.
    async fn claim(&mut self, count: u32) -> Outcome {
        self.requests += 1;
        let sold_out = self.cache.view().stripes.unreported_sold_out();
        let sent = Instant::now();
        let claim = self
            .store
            .claim_stripes(&self.request.draw_id, count, &sold_out)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(self.request.draw_id.clone()))?;
        self.cache.claimed(&claim);
        if claim.first >= 2 * u64::from(self.cache.draw.config.stripes()) {
            spread(sent.elapsed().mul_f64(ENTRY_SPREAD)).await;
        }
        Ok(None)
    }

    /// A replayed payment gets its tickets even after a sell-out or close, so the record
    /// is read after what the refusal rests on, unless this purchase saw it absent at
    /// least that late.
    async fn refuse(mut self, refusal: Refusal) -> Result<PurchaseReceipt, TicketError> {
        if self.absent_at != Some(self.epoch) {
            self.requests += 1;
            if let Some(existing) = self
                .store
                .get_purchase(&self.request.draw_id, &self.request.payment_id)
                .await?
            {
                return self.replay(existing).await;
            }
        }
        let draw = &self.cache.draw;
        Err(match refusal {
            Refusal::Closed => TicketError::DrawClosed(self.request.draw_id),
            Refusal::NotOpen => TicketError::DrawNotOpen {
                opens_at: draw.schedule.opens_at().unwrap_or(draw.created_at),
                draw_id: self.request.draw_id,
            },
            Refusal::PayerLimit { left } => {
                let max_per_payer = draw.config.max_per_payer().unwrap_or(0);
                let left = match (left, &self.request.payer_id) {
                    (Some(left), _) => left,
                    (None, Some(payer)) => max_per_payer
                        .saturating_sub(self.store.payer_held(&self.request.draw_id, payer).await?),
                    (None, None) => 0,
                };
                TicketError::PayerLimit {
                    max_per_payer,
                    left,
                }
            }
            Refusal::NotEnough { remaining } => TicketError::SoldOut { remaining },
            Refusal::Taken(numbers) => TicketError::NumbersTaken(numbers),
            Refusal::TooSpread => super::too_spread(),
            Refusal::Fragmented => TicketError::TooFragmented {
                remaining: self.cache.view().stripes.remaining(),
            },
        })
    }

    /// Sends the purchase transaction for lucky-dip `takes` or `chosen` numbers.
    async fn commit(&mut self, takes: Vec<StripeTake>, chosen: Vec<ChosenTake>) -> Outcome {
        let purchase = Purchase {
            draw_id: self.request.draw_id.clone(),
            payment_id: self.request.payment_id.clone(),
            quantity: self.request.quantity,
            payer_id: self.request.payer_id.clone(),
            tickets: match &self.request.numbers {
                Some(numbers) => numbers.clone(),
                None => self.cache.numbers(&takes),
            },
            chosen: self.request.numbers.is_some(),
            channel: self.request.channel,
            fingerprint: self.fingerprint.clone(),
            created_at: self.created_at,
            void: None,
            unfinished: None,
        };
        let cap = self
            .cache
            .draw
            .config
            .max_per_payer()
            .map(|max_per_payer| PayerCap { max_per_payer });
        let wins = self.cache.instant_wins(&purchase.tickets);
        self.attempts += 1;
        self.requests += 1;
        let sent = Instant::now();
        let commit = {
            let _busy = BusyGuard::new(&self.cache, &takes);
            self.store
                .commit_purchase(&purchase, &takes, &chosen, cap, &wins, self.now_millis())
                .await?
        };
        match commit {
            Commit::Committed => {
                {
                    let mut view = self.cache.view();
                    view.stripes.committed(&takes);
                    for take in &chosen {
                        view.stripes
                            .chose(take.stripe, &take.offsets, &take.returned);
                    }
                }
                if !chosen.is_empty() {
                    self.requests += note_marked(self.store, &self.cache).await;
                }
                metrics::PURCHASES.add(1);
                metrics::TICKETS_SOLD.add(purchase.tickets.len() as u64);
                info!(
                    tickets = ?purchase.tickets,
                    instant_wins = wins.len(),
                    requests = self.requests,
                    attempts = self.attempts,
                    "purchase committed"
                );
                Ok(Some(PurchaseReceipt {
                    purchase,
                    instant_wins: wins,
                    replayed: false,
                    requests: self.requests,
                }))
            }
            Commit::Cancelled(cancellation) => {
                let touched: Vec<u32> = takes
                    .iter()
                    .map(|t| t.stripe)
                    .chain(chosen.iter().map(|c| c.stripe))
                    .collect();
                self.learn(&touched, *cancellation, sent.elapsed()).await
            }
        }
    }

    /// Learns from a cancelled transaction, and waits before the next attempt where
    /// retrying at once would meet the same crowd again.
    async fn learn(
        &mut self,
        stripes: &[u32],
        cancellation: Cancellation,
        took: Duration,
    ) -> Outcome {
        debug!(
            attempt = self.attempts,
            ?stripes,
            stale = ?cancellation.stale_stripes,
            conflict = cancellation.conflict,
            throttled = cancellation.throttled,
            "purchase attempt cancelled"
        );
        if let Some(existing) = cancellation.existing {
            return self.replay(existing).await.map(Some);
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
            let mut view = self.cache.view();
            // The transaction checked every condition at one point in time: its record's
            // passed, so the record was absent then. That holds for refusals only if the
            // view learned nothing newer meanwhile.
            let alone = view.epoch == self.epoch;
            for (stripe, state) in &cancellation.stale_stripes {
                view.learn(*stripe, state);
            }
            let decided = !cancellation.conflict && !cancellation.throttled;
            self.absent_at = (alone && decided).then_some(view.epoch);
            // Every condition was checked at one point in time, the record's passed: the
            // payer is at the cap for this purchase.
            // Holds of the payer that ended still count until given back, which happens
            // first.
            let now = self.now_millis();
            let ended = cancellation.payer_holds.iter().any(|h| h.end <= now);
            if let (true, Some(held), false) = (decided, cancellation.payer_held, ended) {
                let max = self.cache.draw.config.max_per_payer().unwrap_or(0);
                self.payer_left = Some(max.saturating_sub(held));
            }
            // A miss corrects the stripes it touched; a lucky dip's miss on stripes that
            // others sell from means the rest of the view is old too, and one read
            // corrects it all. Chosen numbers need only the stripes they lie in.
            let shared_miss = self.request.numbers.is_none()
                && view.stripes.all_handed()
                && cancellation
                    .stale_stripes
                    .iter()
                    .any(|(s, _)| !view.stripes.owns(*s));
            view.stale |= shared_miss;
            shared_miss
        };
        let now = self.now_millis();
        let ended = cancellation.payer_holds.iter().any(|h| h.end <= now);
        if let (Some(payer), Some(_), true) =
            (&self.request.payer_id, cancellation.payer_held, ended)
        {
            self.requests += 1;
            self.store
                .give_back_ended_holds(&self.request.draw_id, payer, &cancellation.payer_holds, now)
                .await?;
        }
        if shared_miss {
            self.conflicts += 1;
            spread(took * self.conflicts.min(MISS_SPREAD_MAX)).await;
        } else if cancellation.conflict || cancellation.throttled {
            self.conflicts += 1;
            backoff(self.conflicts).await;
        }
        Ok(None)
    }

    /// The payment id is on record: the same body gets that purchase (a bundle cut short
    /// is finished first), another body is a conflict.
    async fn replay(&self, existing: Purchase) -> Result<PurchaseReceipt, TicketError> {
        if existing.fingerprint != self.fingerprint {
            return Err(TicketError::IdempotencyConflict(existing.payment_id));
        }
        let existing = self.store.finish(existing).await?;
        info!(tickets = ?existing.tickets, "purchase replayed");
        Ok(PurchaseReceipt {
            instant_wins: self.cache.instant_wins(&existing.tickets),
            purchase: existing,
            replayed: true,
            requests: self.requests,
        })
    }
}

impl PurchaseRun<'_> {
    /// The writer's clock, in Unix milliseconds, for conditions on the end of holds.
    fn now_millis(&self) -> i64 {
        (self.clock)().timestamp_millis()
    }
}

/// After buyers chose or held numbers, notes it on the draw once per process, so that
/// processes claiming stripe ends later read their marks before they dip there. A hint:
/// a failure is logged and the sale goes on (the next choice tries again). Answers the
/// requests sent.
pub(super) async fn note_marked(store: &Store, cache: &DrawCache) -> u32 {
    if cache.draw_marked() {
        return 0;
    }
    match store.mark_draw(&cache.draw.draw_id).await {
        Ok(()) => cache.set_draw_marked(),
        Err(error) => {
            warn!(%error, "could not note on the draw that buyers choose or hold numbers")
        }
    }
    1
}

/// Waits a random part of `window`.
async fn spread(window: Duration) {
    tokio::time::sleep(window.mul_f64(rand::random::<f64>())).await;
}
