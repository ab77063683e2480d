//! One purchase, as a small state machine: plan from what this process knows, then claim
//! stripe ends or read (`reads.rs`), commit, or refuse (`refuse.rs`); learn from every
//! cancellation (`learn.rs`). A purchase of numbers the buyer chose plans in `choose.rs`
//! and shares the rest; a hold is made in `hold.rs` and paid for in `convert.rs`.
//!
//! The table decides every race (conditional writes in one transaction); these steps only
//! choose what to ask for. A cursor that moved under us comes back in the cancellation
//! reasons, so most purchases cost one transaction and no read.

mod choose;
mod convert;
mod hold;
mod learn;
mod reads;
mod refuse;

pub use convert::ConvertRequest;
pub(super) use convert::ConvertRun;
pub use hold::HoldReceipt;
pub(super) use hold::HoldRun;
use reads::Read;
use refuse::Refusal;

use std::sync::Arc;

use jiff::Timestamp;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tally_domain::time::Epoch;
use tracing::{info, warn};

use super::cache::{BusyGuard, DrawCache};
use super::spend::{self, PayerKnown, SharedRules};
use super::{PurchaseReceipt, TicketError};
use crate::store::allowances::PayerCap;
use crate::store::limits::MAX_BATCH_GET_KEYS;
use crate::store::purchases::Commit;
use crate::store::{Store, StoreError, retry};
use crate::telemetry::metrics;
use tally_domain::purchase::{Channel, Purchase, PurchaseRequest};
use tally_domain::schedule::Phase;
use tally_domain::stripes::{ChosenTake, Plan, StripeTake};
use tally_domain::time::Clock;

/// Steps of any kind (transactions, claims, reads) one purchase may take.
const MAX_STEPS: u32 = 96;
/// Full reads of the cursors one purchase may make.
const MAX_REFRESHES: u32 = 3;

/// What the next step is, decided from the view at one moment (`epoch`).
enum Step {
    /// Read the cursors that may still move, with the purchase record.
    Refresh,
    /// Ask the draw's `opened` for this many more stripe ends.
    Claim(u32),
    /// Send the purchase transaction: lucky-dip takes from stripe ends, or the numbers
    /// the buyer chose, stripe by stripe.
    Commit(Vec<StripeTake>, Vec<ChosenTake>),
    /// Read stripes fresh into the view (`reads.rs`): where holds the view saw live have
    /// ended, before claiming more ends; where chosen numbers the view takes for sold or
    /// held lie; or, as a survey, with how far `opened` has handed out ends.
    Read(Read),
    Refuse(Refusal),
}

/// A step's result: finished with a receipt, or go on planning.
type Outcome = Result<Option<PurchaseReceipt>, TicketError>;

/// The state of one purchase while it runs.
pub(super) struct PurchaseRun<'a> {
    store: &'a Store,
    cache: Arc<DrawCache>,
    request: PurchaseRequest,
    fingerprint: String,
    created_at: Timestamp,
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
    /// This purchase read how far `opened` has gone.
    surveyed: bool,
    rules: SharedRules,
    /// The payer's item across draws, as this purchase knows it.
    payer: PayerKnown,
    /// The payer's item refuses the purchase (an exclusion, a spend limit).
    payer_refusal: Option<TicketError>,
}

impl<'a> PurchaseRun<'a> {
    /// `requests` counts what it took to get the draw into the cache.
    pub(super) fn new(
        store: &'a Store,
        cache: Arc<DrawCache>,
        request: PurchaseRequest,
        requests: u32,
        (clock, rules): (Clock, SharedRules),
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
            rules,
            payer: PayerKnown::default(),
            payer_refusal: None,
        }
    }

    pub(super) async fn run(mut self) -> Result<PurchaseReceipt, TicketError> {
        for _ in 0..MAX_STEPS {
            let outcome = match self.next_step() {
                Step::Refresh => self.refresh().await,
                Step::Claim(count) => self.claim(count).await,
                Step::Read(read) => self.read(read).await,
                Step::Refuse(refusal) => return self.refuse(refusal).await,
                Step::Commit(..) if self.attempts == retry::PURCHASE.budget() => break,
                Step::Commit(takes, chosen) => self.commit(takes, chosen).await,
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
        self.cache.view().stripes.at(now.epoch_millis());
        match self.cache.draw.schedule.phase(now) {
            Phase::NotOpen => return Step::Refuse(Refusal::NotOpen),
            Phase::Over => return Step::Refuse(Refusal::Closed),
            Phase::Open => {}
        }
        if let Some(refusal) = self.payer_refusal.take() {
            return Step::Refuse(Refusal::Payer(refusal));
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
        // One request: the draw item and as many stripes as fit with it.
        let read = survey.then(|| {
            let (stripes, complete) = view.stripes.survey(MAX_BATCH_GET_KEYS - 1);
            Read {
                stripes,
                survey: Some(complete),
            }
        });
        let stripes = 0..self.cache.draw.config.stripes();
        let held = stripes.clone().any(|s| view.stripes.has_held(s));
        // Held numbers are not sold: the refusal says how many there are.
        let short = matches!(plan, Plan::NotEnough { .. })
            .then(|| refuse::shortage(&view.stripes, quantity, stripes));
        let closed = view.closed;
        self.epoch = view.epoch;
        drop(view);
        if closed {
            return Step::Refuse(Refusal::Closed);
        }
        // A survey is planned only for a claim, before every end is out.
        if let Some(read) = read {
            return Step::Read(read);
        }
        match plan {
            // Once every end is handed out, choosing among ends that others sell from
            // should rest on fresh cursors.
            Plan::Take(_) | Plan::Claim(_) if stale && self.refreshes < MAX_REFRESHES => {
                Step::Refresh
            }
            Plan::Take(_) | Plan::Claim(_) if !ahead.is_empty() => Step::Read(Read::stripes(ahead)),
            Plan::TooFragmented if self.refreshes == 0 => Step::Refresh,
            // Holds the view knows of may have given numbers back since: sold out is
            // answered from fresh stripes, with what really remains.
            Plan::NotEnough { .. } if held && self.refreshes == 0 => Step::Refresh,
            Plan::Take(takes) => Step::Commit(takes, Vec::new()),
            Plan::Claim(count) => Step::Claim(count),
            Plan::NotEnough { remaining } => Step::Refuse(Refusal::NotEnough(
                short.unwrap_or(TicketError::SoldOut { remaining, held: 0 }),
            )),
            Plan::TooFragmented => Step::Refuse(Refusal::Fragmented),
        }
    }

    /// Sends the purchase transaction for lucky-dip `takes` or `chosen` numbers.
    async fn commit(&mut self, takes: Vec<StripeTake>, chosen: Vec<ChosenTake>) -> Outcome {
        let free = self.request.channel == Channel::Postal;
        let amount = self
            .cache
            .draw
            .config
            .price()
            .map(|price| price.charge(self.request.quantity, self.request.amount, free));
        let gate = match &self.request.payer_id {
            Some(payer) => {
                let planned = spend::plan_gate(
                    self.store,
                    &self.rules,
                    &mut self.payer,
                    (payer, amount, true),
                    self.created_at,
                )
                .await;
                match planned {
                    Ok((gate, reads)) => {
                        self.requests += reads;
                        Some(gate)
                    }
                    Err(refusal) => {
                        self.payer_refusal = Some(refusal);
                        return Ok(None);
                    }
                }
            }
            None => None,
        };
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
            amount,
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
        let award = self.cache.award(&purchase.tickets);
        self.attempts += 1;
        self.requests += 1;
        let commit = {
            let _busy = BusyGuard::new(&self.cache, &takes);
            self.store
                .commit_purchase(
                    &purchase,
                    &takes,
                    &chosen,
                    (cap, gate.as_ref().map(|g| (g, &self.payer.record))),
                    award.as_deref(),
                    self.now_millis(),
                )
                .await?
        };
        match commit {
            Commit::Committed => {
                if let Some(gate) = &gate {
                    self.payer.committed(&self.rules, gate);
                }
                self.cache.view().stripes.committed(&takes, &chosen);
                metrics::PURCHASES.add(1);
                metrics::TICKETS_SOLD.add(purchase.tickets.len() as u64);
                info!(
                    tickets = ?purchase.tickets,
                    instant_wins = award.as_ref().map_or(0, Vec::len),
                    requests = self.requests,
                    attempts = self.attempts,
                    "purchase committed"
                );
                Ok(Some(PurchaseReceipt {
                    purchase,
                    instant_wins: award.unwrap_or_default(),
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
                self.learn(&touched, *cancellation).await
            }
        }
    }

    async fn replay(&self, existing: Purchase) -> Result<PurchaseReceipt, TicketError> {
        let receipt = replay(self.store, &self.cache, &self.fingerprint, existing).await?;
        Ok(PurchaseReceipt {
            requests: self.requests,
            ..receipt
        })
    }

    /// The writer's clock, in Unix milliseconds, for conditions on the end of holds.
    fn now_millis(&self) -> i64 {
        (self.clock)().epoch_millis()
    }
}

/// The payment id is on record: the same body (`fingerprint`) gets that purchase (a bundle
/// cut short is finished first), another body is a conflict.
async fn replay(
    store: &Store,
    cache: &DrawCache,
    fingerprint: &str,
    existing: Purchase,
) -> Result<PurchaseReceipt, TicketError> {
    if existing.fingerprint != fingerprint {
        return Err(TicketError::IdempotencyConflict(existing.payment_id));
    }
    let existing = store.finish(existing).await?;
    info!(tickets = ?existing.tickets, "purchase replayed");
    Ok(PurchaseReceipt {
        instant_wins: cache.instant_wins(&existing.tickets),
        purchase: existing,
        replayed: true,
        requests: 0,
    })
}
