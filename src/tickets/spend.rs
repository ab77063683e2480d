//! Spend limits and self-exclusion across every draw, as the payer's item keeps them
//! (`store::payers`): setting them, and planning what a sale's transaction asks of that
//! item. A sale learns the item from a cancellation (or one read before a refusal), never
//! trusts an item read earlier to let it through: the transaction's conditions decide.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;

use jiff::{SignedDuration, Timestamp};
use tally_domain::time::{Epoch, rfc3339_exact};
use tracing::{info, instrument};

use super::{TicketError, TicketService};
use crate::store::payers::{PayerGate, PayerRecord, SpendCount, SpendReturn};
use crate::store::{Store, StoreError, retry};
use tally_domain::ids::PayerId;
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::purchase::Purchase;
use tally_domain::series::Timezone;
use tally_domain::spend::{
    Exclusion, LimitChange, Limits, Money, OverLimit, Span, SpendError, left_in,
};

/// The cooling-off span of a raised limit unless the deployment names another.
pub const DEFAULT_COOLING_OFF: SignedDuration = SignedDuration::from_hours(24);

/// Payers' items a process keeps from its sales' cancellations and reads.
const KNOWN_PAYERS: usize = 4_096;

/// The deployment's rules of spend: the time zone of its calendar windows, the limits of
/// payers who set none, and how long a raised limit waits; with the payers' items this
/// process learned.
#[derive(Debug, Clone)]
pub struct SpendRules {
    pub zone: Timezone,
    pub default: Limits,
    pub cooling_off: SignedDuration,
    pub known: KnownPayers,
}

impl Default for SpendRules {
    fn default() -> Self {
        Self {
            zone: Timezone::utc(),
            default: Limits::default(),
            cooling_off: DEFAULT_COOLING_OFF,
            known: KnownPayers::default(),
        }
    }
}

/// The payers' items this process learned, so that a payer's next sale plans from the
/// version of their terms instead of paying a cancelled transaction to learn it again.
/// Only a plan starts from it: a refusal rests on the item read fresh, and a stale entry
/// costs one cancellation, which corrects it.
#[derive(Clone)]
pub struct KnownPayers(Arc<Mutex<LruCache<PayerId, PayerRecord>>>);

impl Default for KnownPayers {
    fn default() -> Self {
        let capacity = NonZeroUsize::new(KNOWN_PAYERS).expect("positive");
        Self(Arc::new(Mutex::new(LruCache::new(capacity))))
    }
}

impl std::fmt::Debug for KnownPayers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KnownPayers")
    }
}

impl KnownPayers {
    fn get(&self, payer: &PayerId) -> Option<PayerRecord> {
        self.0.lock().ok()?.get(payer).cloned()
    }

    fn put(&self, payer: &PayerId, record: &PayerRecord) {
        if let Ok(mut known) = self.0.lock() {
            known.put(payer.clone(), record.clone());
        }
    }
}

/// A payer's terms as answered: limits in force, raises waiting, exclusion, spend.
#[derive(Debug, Clone)]
pub struct PayerTerms {
    pub record: PayerRecord,
    /// The windows that run now, by span.
    pub windows: Vec<(Span, tally_domain::spend::Window)>,
    pub at: Timestamp,
}

/// What a sale knows of its payer's item: the default record until a cancellation or a
/// read says otherwise.
#[derive(Debug, Default)]
pub(super) struct PayerKnown {
    pub record: PayerRecord,
    /// Read (or returned by a cancellation) during this sale.
    pub fresh: bool,
}

impl PayerKnown {
    /// After `gate` committed: the process keeps the item as the sale left it.
    pub(super) fn committed(&self, rules: &SpendRules, gate: &PayerGate) {
        rules.known.put(&gate.payer, &gate.applied(&self.record));
    }

    /// What a cancellation or a read returned; the process keeps it for later sales.
    pub(super) fn learn(&mut self, rules: &SpendRules, payer: &PayerId, record: PayerRecord) {
        rules.known.put(payer, &record);
        self.record = record;
        self.fresh = true;
    }
}

impl SpendRules {
    /// What a sale of `money` (none: a draw without a price) by `payer` at `now` asks of
    /// the payer's item, or why the payer may not buy: `count` for a purchase or a hold's
    /// payment, a check of room only for a hold. A free entry counts nothing.
    pub(super) fn gate(
        &self,
        payer: &PayerId,
        known: &PayerRecord,
        money: Option<Money>,
        count: bool,
        now: Timestamp,
    ) -> Result<PayerGate, TicketError> {
        if let Some(exclusion) = known.exclusion.filter(|e| e.excludes(now)) {
            return Err(TicketError::PayerExcluded {
                until: exclusion.until,
            });
        }
        let spend = match money.filter(|m| m.minor > 0) {
            None => None,
            Some(amount) => {
                let mut windows = Vec::with_capacity(Span::ALL.len());
                for span in Span::ALL {
                    let window = span.window(&self.zone, now);
                    let limit = known
                        .limits
                        .limit(&self.default, amount.currency, span, now);
                    if let Some(limit) = limit {
                        let left =
                            left_in(limit, &window, known.spent.get(&(amount.currency, span)));
                        if amount.minor > left {
                            return Err(TicketError::SpendLimit(OverLimit {
                                currency: amount.currency,
                                span,
                                window,
                                limit,
                                left,
                            }));
                        }
                    }
                    windows.push((span, window, limit));
                }
                Some(SpendCount {
                    amount,
                    windows,
                    count,
                })
            }
        };
        Ok(PayerGate {
            payer: payer.clone(),
            now: now.epoch_millis(),
            spend,
        })
    }

    /// What a void of `purchase` at `now` gives back: its amount, to each window it was
    /// counted in that still runs (a window over has nothing left to give to).
    pub(super) fn give_back(&self, purchase: &Purchase, now: Timestamp) -> Option<SpendReturn> {
        let (payer, amount) = (purchase.payer_id.clone()?, purchase.amount?);
        let windows: Vec<_> = Span::ALL
            .into_iter()
            .map(|p| (p, p.window(&self.zone, purchase.created_at)))
            .filter(|(p, w)| &p.window(&self.zone, now) == w)
            .collect();
        (amount.minor > 0 && !windows.is_empty()).then_some(SpendReturn {
            payer,
            amount,
            windows,
        })
    }
}

/// Plans the payer's gate of a sale; a refusal that rests on an item this sale has not
/// read is checked against a fresh read first.
pub(super) async fn plan_gate(
    store: &Store,
    rules: &SpendRules,
    known: &mut PayerKnown,
    (payer, money, count): (&PayerId, Option<Money>, bool),
    now: Timestamp,
) -> Result<(PayerGate, u32), TicketError> {
    if !known.fresh
        && let Some(record) = rules.known.get(payer)
    {
        known.record = record;
    }
    match rules.gate(payer, &known.record, money, count, now) {
        Err(refusal) if known.fresh => Err(refusal),
        Err(_) => {
            known.learn(rules, payer, store.get_payer(payer).await?);
            Ok((rules.gate(payer, &known.record, money, count, now)?, 1))
        }
        Ok(gate) => Ok((gate, 0)),
    }
}

impl TicketService {
    /// The payer's limits, exclusion and spend as they are now.
    #[instrument(skip_all)]
    pub async fn payer_terms(&self, payer: &PayerId) -> Result<PayerTerms, TicketError> {
        let at = self.now();
        Ok(PayerTerms {
            record: self.store().get_payer(payer).await?,
            windows: Span::ALL
                .into_iter()
                .map(|p| (p, p.window(&self.spend.zone, at)))
                .collect(),
            at,
        })
    }

    /// Sets the payer's limits: lower ones apply at once, higher ones after the cooling-off
    /// span (the answer's raises say from when).
    #[instrument(skip_all)]
    pub async fn set_limits(
        &self,
        payer: &PayerId,
        wanted: &LimitChange,
        by: &Operator,
    ) -> Result<PayerTerms, TicketError> {
        self.change_terms(payer, (Action::LimitsSet, by), |record, now| {
            let limits =
                record
                    .limits
                    .change(&self.spend.default, wanted, now, self.spend.cooling_off)?;
            Ok((limits, record.exclusion))
        })
        .await
    }

    /// Excludes the payer from every sale until `wanted` ends: from when this returns, no
    /// sale of the payer commits. An exclusion is extended, never shortened.
    #[instrument(skip_all)]
    pub async fn set_exclusion(
        &self,
        payer: &PayerId,
        wanted: Exclusion,
        by: &Operator,
    ) -> Result<PayerTerms, TicketError> {
        self.change_terms(payer, (Action::ExclusionSet, by), |record, now| {
            let next = Exclusion::extend(record.exclusion, wanted, now)?;
            Ok((record.limits.clone(), next.or(record.exclusion)))
        })
        .await
    }

    /// Reads the payer's item, decides the new terms, writes them with their journal entry
    /// (`action` by whom) if the item's terms did not change meanwhile; else again. Terms
    /// that stay as they are write nothing: a repeat after a lost answer journals nothing.
    async fn change_terms(
        &self,
        payer: &PayerId,
        (action, by): (Action, &Operator),
        decide: impl Fn(&PayerRecord, Timestamp) -> Result<(Limits, Option<Exclusion>), SpendError>,
    ) -> Result<PayerTerms, TicketError> {
        for attempt in retry::DRAW_RECORD.each() {
            let record = self.store().get_payer(payer).await?;
            let now = self.now();
            let (limits, exclusion) = decide(&record, now)?;
            if limits == record.limits && exclusion == record.exclusion {
                return self.payer_terms(payer).await;
            }
            let change = serde_json::to_value(&limits)
                .map_err(|err| StoreError::Invariant(format!("limits as JSON: {err}")))?;
            let entry = Draft::new(
                now,
                by,
                action,
                format!("payer/{}", payer.key_part()),
                &serde_json::json!({
                    "limits": change,
                    "excluded_until": exclusion.map(|e| e.until.map(rfc3339_exact)),
                }),
            );
            if self
                .store()
                .set_payer_terms(payer, &record, (&limits, exclusion), &entry)
                .await?
            {
                info!(version = record.version + 1, "payer terms set");
                return self.payer_terms(payer).await;
            }
            retry::DRAW_RECORD.pause(attempt).await;
        }
        Err(retry::DRAW_RECORD.exhausted().into())
    }
}

/// The deployment's spend rules, shared by every sale of the process.
pub(super) type SharedRules = Arc<SpendRules>;
