//! One run that commits a purchase, a hold or a hold's conversion: plan from what this
//! process knows (`plan.rs`), then read or claim (`reads.rs`), commit (`commit.rs`) or
//! refuse (`refuse.rs`), and learn from every cancellation (`learn.rs`). The table decides
//! every race; a cursor that moved comes back in the cancellation reasons, so most
//! purchases cost one transaction and no read.

mod commit;
mod learn;
mod plan;
mod reads;
mod refuse;

use reads::Read;
use refuse::Refusal;

use std::sync::Arc;

use jiff::Timestamp;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tally_domain::time::Epoch;
use tracing::{info, warn};

use super::cache::DrawCache;
use super::spend::{PayerKnown, SharedRules};
use super::{PurchaseReceipt, TicketError};
use crate::store::retry::{self, RetryPolicy};
use crate::store::{Store, StoreError};
use tally_domain::hold::{Hold, HoldRequest, conversion_fingerprint};
use tally_domain::ids::{DrawId, HoldId, PayerId, PaymentId};
use tally_domain::purchase::{PaymentToken, Purchase, PurchaseRequest};
use tally_domain::stripes::{ChosenTake, StripeTake};
use tally_domain::time::Clock;

/// Steps of any kind one run may take.
const MAX_STEPS: u32 = 96;

/// A payment for a hold.
#[derive(Debug, Clone)]
pub struct ConvertRequest {
    pub draw_id: DrawId,
    pub payment_id: PaymentId,
    pub hold_id: HoldId,
    pub token: Option<PaymentToken>,
}

#[derive(Debug, Clone)]
pub struct HoldReceipt {
    pub hold: Hold,
    pub replayed: bool,
}

pub(super) enum Kind {
    Purchase(PurchaseRequest),
    Hold(HoldRequest),
    /// A payment for the hold, as last read.
    Convert(ConvertRequest, Hold),
}

impl Kind {
    fn payer(&self) -> Option<&PayerId> {
        match self {
            Kind::Purchase(r) => r.payer_id.as_ref(),
            Kind::Hold(r) => Some(&r.payer_id),
            Kind::Convert(_, hold) => Some(&hold.payer_id),
        }
    }

    /// `None` for a lucky dip and a conversion.
    fn numbers(&self) -> Option<&[u64]> {
        match self {
            Kind::Purchase(r) => r.numbers.as_deref(),
            Kind::Hold(r) => r.numbers.as_deref(),
            Kind::Convert(..) => None,
        }
    }

    fn quantity(&self) -> u64 {
        match self {
            Kind::Purchase(r) => u64::from(r.quantity),
            Kind::Hold(r) => u64::from(r.quantity),
            Kind::Convert(_, hold) => hold.tickets.len() as u64,
        }
    }

    fn policy(&self) -> RetryPolicy {
        match self {
            Kind::Purchase(_) => retry::PURCHASE,
            Kind::Hold(_) => retry::HOLD,
            Kind::Convert(..) => retry::CONVERSION,
        }
    }
}

/// What to do next, decided from the view at one moment (`epoch`).
enum Step {
    /// Read the cursors that may still move, with the purchase record.
    Refresh,
    /// Claim this many more stripe ends.
    Claim(u32),
    /// Lucky-dip takes or named numbers, and the ticket numbers they stand for.
    Commit(Vec<StripeTake>, Vec<ChosenTake>, Vec<u64>),
    Read(Read),
    Refuse(Refusal),
}

pub(super) enum Receipt {
    Purchase(PurchaseReceipt),
    Hold(HoldReceipt),
}

impl Receipt {
    pub(super) fn purchase(self) -> Result<PurchaseReceipt, TicketError> {
        let Receipt::Purchase(receipt) = self else {
            return Err(mismatch());
        };
        Ok(receipt)
    }

    pub(super) fn hold(self) -> Result<HoldReceipt, TicketError> {
        let Receipt::Hold(receipt) = self else {
            return Err(mismatch());
        };
        Ok(receipt)
    }
}

fn mismatch() -> TicketError {
    StoreError::Invariant("a run answered a receipt of another kind".into()).into()
}

/// Finished with a receipt, or go on planning.
type Outcome = Result<Option<Receipt>, TicketError>;

pub(super) struct Run<'a> {
    store: &'a Store,
    cache: Arc<DrawCache>,
    kind: Kind,
    fingerprint: String,
    created_at: Timestamp,
    rng: StdRng,
    clock: Clock,
    /// Transactions and reads sent (SDK retries not included).
    requests: u32,
    refreshes: u32,
    conflicts: u32,
    attempts: u32,
    /// The view's epoch at the last plan.
    epoch: u64,
    /// The view's epoch when this purchase last saw its record absent, with nothing in the
    /// view newer than that sight.
    absent_at: Option<u64>,
    /// Stripes were read fresh since the view suggested a refusal.
    reread: bool,
    surveyed: bool,
    rules: SharedRules,
    payer: PayerKnown,
    /// An exclusion or a spend limit.
    payer_refusal: Option<TicketError>,
}

impl<'a> Run<'a> {
    /// Reads the hold first: a conversion pays for exactly its numbers.
    pub(super) async fn convert(
        store: &'a Store,
        cache: Arc<DrawCache>,
        request: ConvertRequest,
        context: (Clock, SharedRules),
    ) -> Result<Self, TicketError> {
        let hold = store
            .get_hold(&request.draw_id, &request.hold_id)
            .await?
            .ok_or_else(|| TicketError::HoldNotFound(request.hold_id.clone()))?;
        let kind = Kind::Convert(request, hold);
        Ok(Self::new(store, cache, kind, 1, context))
    }

    /// `requests` counts what it took to get the draw into the cache.
    pub(super) fn new(
        store: &'a Store,
        cache: Arc<DrawCache>,
        kind: Kind,
        requests: u32,
        (clock, rules): (Clock, SharedRules),
    ) -> Self {
        let key = &cache.fingerprint_key;
        let fingerprint = match &kind {
            Kind::Purchase(r) => r.fingerprint(key),
            Kind::Hold(r) => r.fingerprint(key),
            Kind::Convert(r, _) => {
                conversion_fingerprint(key, &r.hold_id, r.token.as_ref().map(PaymentToken::as_str))
            }
        };
        Self {
            store,
            cache,
            kind,
            fingerprint,
            created_at: clock(),
            rng: StdRng::from_rng(&mut rand::rng()),
            clock,
            requests,
            refreshes: 0,
            conflicts: 0,
            attempts: 0,
            epoch: 0,
            absent_at: None,
            reread: false,
            surveyed: false,
            rules,
            payer: PayerKnown::default(),
            payer_refusal: None,
        }
    }

    pub(super) async fn run(mut self) -> Result<Receipt, TicketError> {
        let budget = self.kind.policy().budget();
        for _ in 0..MAX_STEPS {
            let outcome = match self.next_step() {
                Step::Refresh => self.refresh().await,
                Step::Claim(count) => self.claim(count).await,
                Step::Read(read) => self.read(read).await,
                Step::Refuse(refusal) => self.refuse(refusal).await,
                Step::Commit(..) if self.attempts == budget => break,
                Step::Commit(takes, chosen, tickets) => self.commit(takes, chosen, tickets).await,
            };
            if let Some(receipt) = outcome? {
                return Ok(receipt);
            }
        }
        let (requests, attempts) = (self.requests, self.attempts);
        warn!(requests, attempts, "gave up under contention");
        Err(StoreError::Contention { attempts }.into())
    }

    /// The payment is on record: the same body gets that purchase (a bundle cut short is
    /// finished first), another body is a conflict.
    async fn replay(&self, existing: Purchase) -> Outcome {
        if existing.fingerprint != self.fingerprint {
            return Err(TicketError::IdempotencyConflict(existing.payment_id));
        }
        let existing = self.store.finish(existing).await?;
        info!(tickets = ?existing.tickets, "purchase replayed");
        Ok(Some(Receipt::Purchase(PurchaseReceipt {
            instant_wins: self.cache.instant_wins(&existing.tickets),
            purchase: existing,
            replayed: true,
            requests: self.requests,
        })))
    }

    fn replay_hold(&self, existing: Hold) -> Outcome {
        if existing.fingerprint != self.fingerprint {
            return Err(TicketError::HoldConflict(existing.hold_id));
        }
        Ok(Some(Receipt::Hold(HoldReceipt {
            hold: existing,
            replayed: true,
        })))
    }

    /// For conditions on the end of holds.
    fn now_millis(&self) -> i64 {
        (self.clock)().epoch_millis()
    }
}
