//! Selling raffle tickets: draws, purchases and the per-process view of the cursors.
//!
//! The table decides every race (conditional writes in one transaction); this module only
//! chooses what to ask for. It keeps, per warm process, each draw's settings and a lower
//! bound of each stripe cursor, so that a purchase usually costs one transaction and no
//! read.

mod availability;
mod cache;
mod close;
mod draws;
mod facts;
mod freeze;
mod holds;
mod instant;
mod lists;
mod purchase;
mod selection;
mod sold_out;
mod spend;
mod void;
mod winners;

use std::num::NonZeroUsize;
use std::sync::Arc;

use jiff::Timestamp;
use tracing::instrument;

pub use availability::Grid;
pub use cache::DEFAULT_CACHED_DRAWS;
pub use draws::{DrawSummary, NewDraw};
pub use facts::{FACTS_FRESH, FactsAnswer};
pub use instant::{InstantReveal, InstantWinsView};
pub use lists::{DrawFilter, DrawPurchasesPage, PurchaseFilter, PurchasesFrom, PurchasesPage};
pub use purchase::{ConvertRequest, HoldReceipt};
pub use spend::{DEFAULT_COOLING_OFF, PayerTerms, SpendRules};
pub use winners::{BeaconInput, Prize, Replaced, Winners};

use crate::store::{Store, StoreError};
use cache::{DrawCache, DrawCaches};
use purchase::{Kind, Run};
use selection::check_selection;
use tally_domain::draw::DrawConfigError;
use tally_domain::ids::{DrawId, HoldId, PaymentId};
use tally_domain::instant::InstantWin;
use tally_domain::purchase::{Purchase, PurchaseRequest, Ticket};
use tally_domain::secret::DeploymentSecret;
use tally_domain::spend::{OverLimit, SpendError};
use tally_domain::time::Clock;
use tally_domain::winners::BeaconNetworks;

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
    #[error(
        "the beacon of draw {0} is fixed (a ticket was sold or held, or it was declared while the draw may sell): it can no longer be withdrawn or switched"
    )]
    BeaconFixed(DrawId),
    #[error("`closes_at` ({}) has passed: a new draw must close in the future", tally_domain::time::rfc3339_millis(*.0))]
    ClosesAtPassed(Timestamp),
    #[error("draw {draw_id} opens at {opens_at}")]
    DrawNotOpen {
        draw_id: DrawId,
        opens_at: Timestamp,
    },
    #[error("this draw caps tickets per payer: a purchase needs a `payer_id`")]
    PayerRequired,
    #[error("the payer is excluded from every draw{}", .until.map(|u| format!(" until {}", tally_domain::time::rfc3339_millis(u))).unwrap_or_default())]
    PayerExcluded { until: Option<Timestamp> },
    #[error(
        "the payer's {} limit of {} {} leaves {} for {}",
        .0.span.as_str(), .0.limit, .0.currency, .0.left, .0.window.as_str()
    )]
    SpendLimit(OverLimit),
    #[error(transparent)]
    Spend(#[from] SpendError),
    #[error("the payer may hold at most {max_per_payer} tickets; {left} more are left")]
    PayerLimit { max_per_payer: u64, left: u64 },
    #[error(
        "the payer's live holds may take at most {max_held_per_payer} numbers; {left} more are left"
    )]
    PayerHoldLimit { max_held_per_payer: u64, left: u64 },
    #[error("draw {0} is not closed: close it before drawing its winners")]
    DrawOpen(DrawId),
    #[error(
        "the winners of draw {0} are drawn with another number of prizes or signature: they change only by a redraw"
    )]
    WinnersDrawn(DrawId),
    #[error("the winners of draw {0} are not drawn yet")]
    WinnersNotDrawn(DrawId),
    #[error(
        "draw {0} declared no number of prizes and none was named yet: its list is frozen by the close or winners call that names one"
    )]
    NotFrozen(DrawId),
    #[error("no beacon network is called {name:?}")]
    UnknownBeaconNetwork { name: String, known: Vec<String> },
    #[error("the draw uses round {round} of its beacon: `beacon_signature` is required")]
    BeaconSignatureRequired { round: u64 },
    #[error("`beacon_signature` is not the network's signature of round {round}")]
    InvalidBeaconSignature { round: u64 },
    #[error("this uses round {round}, not round {given}")]
    WrongBeaconRound { round: u64, given: u64 },
    #[error("round {round} is published at {publishes_at}, not yet")]
    BeaconNotPublished { round: u64, publishes_at: Timestamp },
    #[error("the draw declared no beacon, so it takes no `beacon_signature`")]
    BeaconNotDeclared,
    #[error("a redraw of prize {0} waits for its round: resolve it first")]
    RedrawPending(u32),
    #[error("ask for the redraw without a signature first: its round is fixed then")]
    RedrawNotRequested,
    #[error("{eligible} tickets are eligible, fewer than the {wanted} picks asked for")]
    NotEnoughEligible { eligible: u64, wanted: u64 },
    #[error("{}", match fixed {
        Some(fixed) => format!("the draw fixed {fixed} prizes, not {given}"),
        None => format!("the close fixed no number of prizes, and it is too late to fix {given}"),
    })]
    PrizesFixed { fixed: Option<u32>, given: u32 },
    #[error("`prizes` is required: the close fixed no number of prizes")]
    PrizesRequired,
    #[error("the draw has no prize {0}")]
    PrizeNotFound(u32),
    #[error("draw {0} was created without instant wins")]
    NoInstantWins(DrawId),
    #[error("prize {0} was redrawn meanwhile for another reason")]
    WinnerChanged(u32),
    #[error(
        "`quantity` must be between 1 and {max} (the draw's `max_per_purchase`), not {quantity}"
    )]
    InvalidQuantity { max: u32, quantity: u32 },
    #[error("{}", sold_out_detail(*remaining, *held))]
    SoldOut { remaining: u64, held: u64 },
    #[error(
        "only {remaining} tickets are free: live holds keep {held} more, and the first of them ends at {}",
        tally_domain::time::rfc3339_millis(*first_hold_ends_at)
    )]
    TicketsHeld {
        remaining: u64,
        held: u64,
        first_hold_ends_at: Timestamp,
    },
    #[error(
        "live holds take as many numbers as the draw allows where these would be ({max_held_percent}% of each stripe)"
    )]
    HoldsFull {
        max_held_percent: u8,
        first_hold_ends_at: Option<Timestamp>,
    },
    #[error("numbers {0:?} are sold or held")]
    NumbersTaken(Vec<u64>),
    #[error("{0}")]
    InvalidNumbers(String),
    #[error("{remaining} tickets remain, spread over more stripes than one purchase can take")]
    TooFragmented { remaining: u64 },
    #[error("payment id {0} was used for a different purchase")]
    IdempotencyConflict(PaymentId),
    #[error("hold id {0} was used for a different hold")]
    HoldConflict(HoldId),
    #[error("hold {0} does not exist")]
    HoldNotFound(HoldId),
    #[error("hold {0} has ended (expired or released): its numbers may be someone else's")]
    HoldExpired(HoldId),
    #[error("hold {0} was converted by another payment")]
    HoldUsed(HoldId),
    #[error("purchase {0} does not exist")]
    PurchaseNotFound(PaymentId),
    #[error("ticket {number} is outside 1..={total}")]
    TicketOutOfRange { number: u64, total: u64 },
    #[error("ticket {0} is not sold")]
    TicketNotSold(u64),
    #[error("the cursor is not one this listing gave")]
    InvalidCursor,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A purchase and whether this call made it or found it.
#[derive(Debug, Clone)]
pub struct PurchaseReceipt {
    pub purchase: Purchase,
    /// The instant prizes its tickets won, ascending by ticket; a replay answers the same.
    pub instant_wins: Vec<InstantWin>,
    pub replayed: bool,
    /// Transactions and reads this call sent (SDK retries not included).
    pub requests: u32,
}

/// Ticket operations for one process. Cheap to share behind an `Arc`.
pub struct TicketService {
    store: Store,
    draws: DrawCaches,
    /// Keys the purchase fingerprints.
    secret: DeploymentSecret,
    clock: Clock,
    networks: Arc<BeaconNetworks>,
    spend: spend::SharedRules,
}

impl TicketService {
    pub fn new(store: Store) -> Self {
        Self::with_cached_draws(
            store,
            NonZeroUsize::new(DEFAULT_CACHED_DRAWS).expect("positive"),
        )
    }

    /// A service that keeps at most `draws` draws in memory, with the local deployment
    /// secret until [`Self::with_deployment_secret`] gives another.
    pub fn with_cached_draws(store: Store, draws: NonZeroUsize) -> Self {
        Self {
            store,
            draws: DrawCaches::new(draws),
            secret: DeploymentSecret::local(),
            clock: Arc::new(Timestamp::now),
            networks: Arc::new(BeaconNetworks::default()),
            spend: Arc::default(),
        }
    }

    /// The same service under the deployment's spend rules.
    pub fn with_spend_rules(self, rules: SpendRules) -> Self {
        Self {
            spend: Arc::new(rules),
            ..self
        }
    }

    /// The same service with another clock: tests set the time instead of waiting for a
    /// beacon round.
    pub fn with_clock(self, clock: Clock) -> Self {
        Self { clock, ..self }
    }

    /// The same service trusting `networks` (quicknet is always among them).
    pub fn with_networks(self, networks: BeaconNetworks) -> Self {
        Self {
            networks: Arc::new(networks),
            ..self
        }
    }

    /// The service with the deployment's own secret.
    pub fn with_deployment_secret(self, secret: DeploymentSecret) -> Self {
        Self { secret, ..self }
    }

    /// The deployment's spend rules.
    pub fn spend_rules(&self) -> &SpendRules {
        &self.spend
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The time now, to the millisecond as stored.
    fn now(&self) -> Timestamp {
        let now = (self.clock)();
        tally_domain::time::to_millis(now)
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
        if let Some(ticket) = self.store.get_ticket(draw_id, number).await? {
            return Ok(ticket);
        }
        // A bundle cut short holds numbers without their items until it is finished: only
        // the one holding this number is, so that a read writes one bundle's worth at most.
        if self.store.finish_bundle_holding(draw_id, number).await?
            && let Some(ticket) = self.store.get_ticket(draw_id, number).await?
        {
            return Ok(ticket);
        }
        Err(TicketError::TicketNotSold(number))
    }

    /// Sells `quantity` tickets to one payment, all or nothing, exactly once per payment id.
    #[instrument(skip_all, fields(draw_id = %request.draw_id, payment_id = %request.payment_id, quantity = request.quantity))]
    pub async fn purchase(&self, request: PurchaseRequest) -> Result<PurchaseReceipt, TicketError> {
        // A process new to the draw reads it and opens its first stripe in one request;
        // numbers the buyer chose need no stripe of their own.
        let (cache, requests) = match self.cached(&request.draw_id) {
            Some(cache) => (cache, 0),
            None if request.numbers.is_some() => (self.draw_cache(&request.draw_id).await?, 1),
            None => (self.open_draw(&request.draw_id).await?, 1),
        };
        check_selection(
            request.quantity,
            request.numbers.as_deref(),
            &cache.draw.config,
        )?;
        if cache.draw.config.max_per_payer().is_some() && request.payer_id.is_none() {
            return Err(TicketError::PayerRequired);
        }
        if let (Some(amount), price) = (request.amount, cache.draw.config.price()) {
            let most = price.map_or(0, |p| p.of(request.quantity));
            if amount > most {
                return Err(SpendError::Amount(most).into());
            }
        }
        let context = (self.clock.clone(), self.spend.clone());
        let kind = Kind::Purchase(request);
        let run = Run::new(&self.store, cache.clone(), kind, requests, context);
        let outcome = run.run().await.and_then(|r| r.purchase());
        self.notice_sell_out(&cache, &outcome).await;
        outcome
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
        let cache = self.draws.keep(DrawCache::new(
            claim.draw.clone(),
            &self.secret,
            self.now(),
        )?);
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
        Ok(self
            .draws
            .keep(DrawCache::new(draw, &self.secret, self.now())?))
    }
}

/// What a sold-out refusal says: how many tickets are left, and held, as a sentence.
fn sold_out_detail(remaining: u64, held: u64) -> String {
    let tickets = |n: u64| match n {
        1 => "1 ticket is".to_owned(),
        n => format!("{n} tickets are"),
    };
    match (remaining, held) {
        (0, 0) => "the draw is sold out: no ticket is left".to_owned(),
        (0, held) => format!(
            "no ticket is free, and the {held} held would be too few even if their holds ended"
        ),
        (n, 0) => format!("only {} left: buy at most {n}", tickets(n)),
        (n, held) => format!("only {} free, and {held} held: buy at most {n}", tickets(n)),
    }
}

/// Chosen numbers that lie in more stripes, or more of them in one stripe, than one
/// purchase writes: always the same answer for the same numbers, so a request error.
pub(super) fn too_spread() -> TicketError {
    TicketError::InvalidNumbers(format!(
        "these numbers lie in more of the draw's stripes than one purchase can write: up to {} chosen numbers always fit, more only in a draw of at most {} stripes",
        tally_domain::stripes::CHOSEN_ALWAYS_FIT,
        tally_domain::stripes::BUNDLE_STRIPES
    ))
}
