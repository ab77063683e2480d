//! Creating a hold: plan its numbers (the buyer's, or free ones picked at random), write
//! the hold in one transaction, learn from every cancellation. A hold moves no cursor: its
//! numbers are marked held on their stripes with the hold's deadline, which every later
//! write compares with its own clock.

use jiff::Timestamp;
use std::sync::Arc;
use tally_domain::time::{Epoch, rfc3339_millis};

use rand::SeedableRng;
use rand::rngs::StdRng;
use tracing::{debug, info, warn};

use super::super::TicketError;
use super::super::cache::DrawCache;
use super::refuse::shortage;
use crate::store::allowances::HoldCaps;
use crate::store::purchases::{Cancellation, Commit};
use crate::store::{Store, retry};
use crate::tickets::spend::{self, PayerKnown, SharedRules};
use tally_domain::hold::{Hold, HoldEnd, HoldRequest};
use tally_domain::schedule::Phase;
use tally_domain::stripes::{Choice, ChosenTake, Shortfall, StripeView};
use tally_domain::time::Clock;

/// Items a hold's conversion adds to the hold's own numbers and stripes: the purchase
/// record, the hold record and the payer's item across draws (the payer's allowance in
/// the draw comes apart, see `plan`).
const CONVERSION_RECORDS: usize = 3;

/// A hold and whether this call made it or found it.
#[derive(Debug, Clone)]
pub struct HoldReceipt {
    pub hold: Hold,
    pub replayed: bool,
}

/// What the next attempt should do.
enum Plan {
    Write(Vec<ChosenTake>, Vec<u64>),
    /// Read these stripes before trusting a refusal.
    Read(Vec<u32>),
    Refuse(TicketError),
}

/// The state of one hold while it runs.
pub(in crate::tickets) struct HoldRun<'a> {
    store: &'a Store,
    cache: Arc<DrawCache>,
    request: HoldRequest,
    fingerprint: String,
    clock: Clock,
    rng: StdRng,
    /// Stripes were read fresh since the last refusal the view suggested.
    refreshed: bool,
    conflicts: u32,
    rules: SharedRules,
    payer: PayerKnown,
}

impl<'a> HoldRun<'a> {
    pub(in crate::tickets) fn new(
        store: &'a Store,
        cache: Arc<DrawCache>,
        request: HoldRequest,
        (clock, rules): (Clock, SharedRules),
    ) -> Self {
        Self {
            store,
            fingerprint: request.fingerprint(&cache.fingerprint_key),
            cache,
            request,
            clock,
            rng: StdRng::from_rng(&mut rand::rng()),
            refreshed: false,
            conflicts: 0,
            rules,
            payer: PayerKnown::default(),
        }
    }

    pub(in crate::tickets) async fn run(mut self) -> Result<HoldReceipt, TicketError> {
        for _ in retry::HOLD.each() {
            let now = (self.clock)();
            let (takes, tickets) = match self.plan(now) {
                Plan::Write(takes, tickets) => (takes, tickets),
                Plan::Read(stripes) => {
                    self.read(&stripes).await?;
                    continue;
                }
                Plan::Refuse(refusal) => return self.refuse(refusal).await,
            };
            let draw = &self.cache.draw;
            let hold = Hold {
                draw_id: self.request.draw_id.clone(),
                hold_id: self.request.hold_id.clone(),
                payer_id: self.request.payer_id.clone(),
                tickets,
                chosen: self.request.numbers.is_some(),
                fingerprint: self.fingerprint.clone(),
                created_at: now,
                expires_at: Hold::deadline(now, draw.config.hold_seconds(), &draw.schedule),
                end: HoldEnd::Open,
            };
            let caps = HoldCaps {
                max_held_per_payer: draw.config.max_held_per_payer(),
                max_per_payer: draw.config.max_per_payer(),
            };
            // A hold counts no spend but needs room for its payment, and no exclusion.
            let amount = draw
                .config
                .price()
                .map(|p| p.charge(self.request.quantity, None, false));
            let planned = spend::plan_gate(
                self.store,
                &self.rules,
                &mut self.payer,
                (&self.request.payer_id, amount, false),
                now,
            )
            .await;
            let gate = match planned {
                Ok((gate, _)) => gate,
                Err(refusal) => return self.refuse(refusal).await,
            };
            let commit = self
                .store
                .commit_hold(
                    &hold,
                    &takes,
                    caps,
                    (&gate, &self.payer.record),
                    now.epoch_millis(),
                )
                .await?;
            match commit {
                Commit::Committed => {
                    {
                        let mut view = self.cache.view();
                        let end = hold.expires_at.epoch_millis();
                        for take in &takes {
                            view.stripes.hold(take, end);
                        }
                    }
                    info!(tickets = ?hold.tickets, expires_at = %rfc3339_millis(hold.expires_at), "hold created");
                    return Ok(HoldReceipt {
                        hold,
                        replayed: false,
                    });
                }
                Commit::Cancelled(cancellation) => {
                    if let Some(receipt) = self.learn(*cancellation, now).await? {
                        return Ok(receipt);
                    }
                }
            }
        }
        warn!("hold gave up under contention");
        Err(retry::HOLD.exhausted().into())
    }

    /// Plans from the view as it is now.
    fn plan(&mut self, now: Timestamp) -> Plan {
        let draw = &self.cache.draw;
        match draw.schedule.phase(now) {
            Phase::NotOpen => {
                return Plan::Refuse(TicketError::DrawNotOpen {
                    draw_id: self.request.draw_id.clone(),
                    opens_at: draw.schedule.opens_at().unwrap_or(draw.created_at),
                });
            }
            Phase::Over => {
                return Plan::Refuse(TicketError::DrawClosed(self.request.draw_id.clone()));
            }
            Phase::Open => {}
        }
        let mut view = self.cache.view();
        if view.closed {
            return Plan::Refuse(TicketError::DrawClosed(self.request.draw_id.clone()));
        }
        view.stripes.at(now.epoch_millis());
        // The conversion also ends the hold on the payer's allowance: a capped draw's
        // budget leaves that item out already.
        let extra = CONVERSION_RECORDS + usize::from(draw.config.max_per_payer().is_none());
        if self.request.numbers.is_none() && view.stale && !self.refreshed {
            return Plan::Read((0..draw.config.stripes()).collect());
        }
        let quantity = u64::from(self.request.quantity);
        let all = 0..draw.config.stripes();
        let located = match &self.request.numbers {
            Some(numbers) => numbers.iter().map(|&n| self.cache.locate(n)).collect(),
            None => match view.stripes.pick_free(quantity, &mut self.rng) {
                Ok(picked) => picked,
                // Holds may have ended or been released since the view learned them.
                Err(_) if !self.refreshed => return Plan::Read(all.collect()),
                Err(Shortfall::Free) => {
                    return Plan::Refuse(shortage(&view.stripes, quantity, all));
                }
                Err(Shortfall::HoldRoom) => {
                    return Plan::Refuse(self.holds_full(&view.stripes, all));
                }
                Err(Shortfall::Spread) => {
                    return Plan::Refuse(TicketError::TooFragmented {
                        remaining: view.stripes.remaining(),
                    });
                }
            },
        };
        match view.stripes.choose(&located, extra) {
            Choice::Take(takes) => match view.stripes.fit_hold(takes) {
                Ok(takes) => {
                    let tickets = match &self.request.numbers {
                        Some(numbers) => numbers.clone(),
                        None => located
                            .iter()
                            .map(|&(s, o)| self.cache.number(s, o))
                            .collect(),
                    };
                    Plan::Write(takes, tickets)
                }
                // Marks the view counts may have left since it read them.
                Err(full) if !self.refreshed => Plan::Read(full),
                Err(full) => Plan::Refuse(self.holds_full(&view.stripes, full)),
            },
            // A number may have come free since the view learned it: read its stripe
            // once before refusing.
            Choice::Taken { stripes, .. } if !self.refreshed => Plan::Read(stripes),
            Choice::Taken { positions, .. } => {
                let numbers = self.request.numbers.as_deref().unwrap_or_default();
                Plan::Refuse(TicketError::NumbersTaken(
                    positions
                        .iter()
                        .filter_map(|&p| numbers.get(p).copied())
                        .collect(),
                ))
            }
            Choice::TooSpread if self.request.numbers.is_some() => {
                Plan::Refuse(super::super::too_spread())
            }
            Choice::TooSpread => Plan::Refuse(TicketError::TooFragmented {
                remaining: view.stripes.remaining(),
            }),
        }
    }

    /// The refusal of a hold that the caps on hold marks of `stripes` leave no room for.
    fn holds_full(&self, view: &StripeView, stripes: impl IntoIterator<Item = u32>) -> TicketError {
        TicketError::HoldsFull {
            max_held_percent: self.cache.draw.config.max_held_percent(),
            first_hold_ends_at: view
                .first_hold_end(stripes)
                .and_then(tally_domain::time::from_epoch_millis),
        }
    }

    /// Reads stripes fresh into the view.
    async fn read(&mut self, stripes: &[u32]) -> Result<(), TicketError> {
        let states = self
            .store
            .read_stripes(&self.request.draw_id, stripes)
            .await?;
        let mut view = self.cache.view();
        view.learn_all(&states);
        view.stale &= stripes.len() < self.cache.draw.config.stripes() as usize;
        self.refreshed = true;
        Ok(())
    }

    /// A refusal stands unless this very hold is on record (a repeat after a sell-out or
    /// the close still answers its hold).
    async fn refuse(&self, refusal: TicketError) -> Result<HoldReceipt, TicketError> {
        match self
            .store
            .get_hold(&self.request.draw_id, &self.request.hold_id)
            .await?
        {
            Some(existing) => self.replay(existing),
            None => Err(refusal),
        }
    }

    /// Learns from a cancelled hold: the hold on record, fresh stripes, the payer's
    /// allowance (holds in it whose deadline passed are given back first).
    async fn learn(
        &mut self,
        cancellation: Cancellation,
        now: Timestamp,
    ) -> Result<Option<HoldReceipt>, TicketError> {
        debug!(
            stale = ?cancellation.stale_stripes.len(),
            conflict = cancellation.conflict,
            "hold attempt cancelled"
        );
        if let Some(existing) = cancellation.hold {
            return self.replay(existing).map(Some);
        }
        if let Some(record) = cancellation.payer {
            self.payer
                .learn(&self.rules, &self.request.payer_id, record);
        }
        self.cache.view().learn_all(&cancellation.stale_stripes);
        let decided = !cancellation.conflict && !cancellation.throttled;
        if let (true, Some(allowance)) = (decided, &cancellation.allowance) {
            let now = now.epoch_millis();
            let config = &self.cache.draw.config;
            if allowance.has_ended(now) {
                self.store
                    .give_back_ended_holds(
                        &self.request.draw_id,
                        &self.request.payer_id,
                        &allowance.holds,
                        now,
                        config.max_per_payer().is_some(),
                    )
                    .await?;
                return Ok(None);
            }
            let quantity = u64::from(self.request.quantity);
            let max_held_per_payer = config.max_held_per_payer();
            let refusal = match config.max_per_payer() {
                _ if allowance.holding + quantity > max_held_per_payer => {
                    TicketError::PayerHoldLimit {
                        max_held_per_payer,
                        left: max_held_per_payer.saturating_sub(allowance.holding),
                    }
                }
                Some(max_per_payer) if allowance.held + quantity > max_per_payer => {
                    TicketError::PayerLimit {
                        max_per_payer,
                        left: max_per_payer.saturating_sub(allowance.held),
                    }
                }
                // Room under both caps now: the allowance changed since; plan again.
                _ => return Ok(None),
            };
            return self.refuse(refusal).await.map(Some);
        }
        if !decided {
            self.conflicts += 1;
            retry::HOLD.pause(self.conflicts).await;
        }
        Ok(None)
    }

    /// The hold id is on record: the same body gets that hold, another body is a conflict.
    fn replay(&self, existing: Hold) -> Result<HoldReceipt, TicketError> {
        if existing.fingerprint != self.fingerprint {
            return Err(TicketError::HoldConflict(existing.hold_id));
        }
        Ok(HoldReceipt {
            hold: existing,
            replayed: true,
        })
    }
}
