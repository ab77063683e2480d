//! The transaction of a run: the payer's gate planned from what the run knows of the
//! payer, the draw's beacon fixed (once per process and draw), then the purchase, the
//! hold (its numbers marked held with its deadline, which every later write compares with
//! its own clock) or the conversion (the hold marked converted, its numbers taken from
//! it) in one transaction.

use tally_domain::time::{Epoch, rfc3339_millis};
use tracing::{debug, info};

use super::{Kind, Outcome, Receipt, Run};
use crate::store::StoreError;
use crate::store::allowances::{HoldCaps, PayerCap};
use crate::store::purchases::Commit;
use crate::telemetry::metrics;
use crate::tickets::cache::BusyGuard;
use crate::tickets::spend;
use crate::tickets::{HoldReceipt, PurchaseReceipt};
use tally_domain::hold::{Hold, HoldEnd};
use tally_domain::ids::{PayerId, PaymentId};
use tally_domain::purchase::{Channel, Purchase};
use tally_domain::stripes::{ChosenTake, StripeTake};

impl Run<'_> {
    /// Sends the transaction for lucky-dip `takes` or named numbers (`chosen`), which
    /// stand for `tickets`.
    pub(super) async fn commit(
        &mut self,
        takes: Vec<StripeTake>,
        chosen: Vec<ChosenTake>,
        tickets: Vec<u64>,
    ) -> Outcome {
        let config = self.cache.draw.config;
        let quantity = tickets.len() as u32;
        // A hold counts no spend but needs room for its payment, and no exclusion.
        let (paid, free, counts) = match &self.kind {
            Kind::Purchase(r) => (r.amount, r.channel == Channel::Postal, true),
            Kind::Hold(_) => (None, false, false),
            Kind::Convert(..) => (None, false, true),
        };
        let amount = config.price().map(|p| p.charge(quantity, paid, free));
        let mut gate = None;
        if let Some(payer) = self.kind.payer() {
            let (rules, sale) = (&self.rules, (payer, amount, counts));
            let planned =
                spend::plan_gate(self.store, rules, &mut self.payer, sale, self.created_at);
            match planned.await {
                Ok((planned, reads)) => {
                    self.requests += reads;
                    gate = Some(planned);
                }
                Err(refusal) => {
                    self.payer_refusal = Some(refusal);
                    return Ok(None);
                }
            }
        }
        self.fix_beacon().await?;
        self.attempts += 1;
        self.requests += 1;
        let known = gate.as_ref().map(|g| (g, &self.payer.record));
        let gated = || known.ok_or_else(|| StoreError::Invariant("no payer gate".into()));
        let now = self.now_millis();
        // Every purchase of a draw with instant wins writes its award item.
        let cache = &self.cache;
        let award = cache.instant_map().map(|_| cache.instant_wins(&tickets));
        let purchase =
            |payment_id: &PaymentId, payer_id: Option<&PayerId>, chosen, channel| Purchase {
                draw_id: self.cache.draw.draw_id.clone(),
                payment_id: payment_id.clone(),
                quantity,
                payer_id: payer_id.cloned(),
                tickets: tickets.clone(),
                chosen,
                channel,
                amount,
                fingerprint: self.fingerprint.clone(),
                created_at: self.created_at,
                void: None,
                unfinished: None,
            };
        let sold = |purchase, instant_wins: Option<_>| {
            Receipt::Purchase(PurchaseReceipt {
                purchase,
                instant_wins: instant_wins.unwrap_or_default(),
                replayed: false,
                requests: self.requests,
            })
        };
        let busy = BusyGuard::new(&self.cache, &takes);
        let (commit, receipt) = match &self.kind {
            Kind::Purchase(r) => {
                let payer = r.payer_id.as_ref();
                let purchase = purchase(&r.payment_id, payer, r.numbers.is_some(), r.channel);
                let cap = config
                    .max_per_payer()
                    .map(|max_per_payer| PayerCap { max_per_payer });
                let commit = self
                    .store
                    .commit_purchase(
                        &purchase,
                        &takes,
                        &chosen,
                        (cap, known),
                        award.as_deref(),
                        now,
                    )
                    .await?;
                (commit, sold(purchase, award))
            }
            Kind::Convert(r, hold) => {
                let payer = Some(&hold.payer_id);
                let purchase = purchase(&r.payment_id, payer, hold.chosen, Channel::Online);
                let commit = self
                    .store
                    .convert_hold(&purchase, hold, &chosen, gated()?, award.as_deref(), now)
                    .await?;
                (commit, sold(purchase, award))
            }
            Kind::Hold(r) => {
                let schedule = &self.cache.draw.schedule;
                let hold = Hold {
                    draw_id: r.draw_id.clone(),
                    hold_id: r.hold_id.clone(),
                    payer_id: r.payer_id.clone(),
                    tickets: tickets.clone(),
                    chosen: r.numbers.is_some(),
                    fingerprint: self.fingerprint.clone(),
                    created_at: self.created_at,
                    expires_at: Hold::deadline(self.created_at, config.hold_seconds(), schedule),
                    end: HoldEnd::Open,
                };
                let caps = HoldCaps {
                    max_held_per_payer: config.max_held_per_payer(),
                    max_per_payer: config.max_per_payer(),
                };
                let commit = self
                    .store
                    .commit_hold(&hold, &chosen, caps, gated()?, now)
                    .await?;
                let receipt = HoldReceipt {
                    hold,
                    replayed: false,
                };
                (commit, Receipt::Hold(receipt))
            }
        };
        drop(busy);
        if let Commit::Cancelled(cancellation) = commit {
            let touched: Vec<u32> = takes
                .iter()
                .map(|t| t.stripe)
                .chain(chosen.iter().map(|c| c.stripe))
                .collect();
            debug!(
                attempt = self.attempts,
                stripes = ?touched,
                stale = ?cancellation.stale_stripes,
                conflict = cancellation.conflict,
                throttled = cancellation.throttled,
                "attempt cancelled"
            );
            return self.learn(*cancellation).await;
        }
        let mut view = self.cache.view();
        match &receipt {
            Receipt::Hold(HoldReceipt { hold, .. }) => {
                let end = hold.expires_at.epoch_millis();
                view.stripes.committed(&[], &chosen, Some(end));
                let expires_at = rfc3339_millis(hold.expires_at);
                info!(tickets = ?hold.tickets, %expires_at, "hold created");
            }
            Receipt::Purchase(sold) => {
                if let Some(gate) = &gate {
                    self.payer.committed(&self.rules, gate);
                }
                view.stripes.committed(&takes, &chosen, None);
                metrics::PURCHASES.add(1);
                metrics::TICKETS_SOLD.add(sold.purchase.tickets.len() as u64);
                info!(
                    tickets = ?sold.purchase.tickets,
                    instant_wins = sold.instant_wins.len(),
                    requests = self.requests,
                    attempts = self.attempts,
                    "purchase committed"
                );
            }
        }
        Ok(Some(receipt))
    }

    /// Fixes the draw's beacon before this process's first transaction that could sell or
    /// hold: a buyer trusts the beacon the draw declares, so no withdrawal or switch may
    /// follow a sale. A draw read without a beacon once it may sell has none to fix: a
    /// beacon declared since is fixed by its declaration. One read earlier may have missed
    /// a declaration, so it is fixed all the same, and a beacon declared later with it.
    async fn fix_beacon(&mut self) -> Result<(), StoreError> {
        if !self.cache.beacon_to_fix() {
            return Ok(());
        }
        self.requests += 1;
        self.store.fix_beacon(&self.cache.draw.draw_id).await?;
        self.cache.set_beacon_fixed();
        Ok(())
    }
}
