//! The transaction of a run: the payer's gate planned from what the run knows of the
//! payer, then the purchase (its lucky-dip takes or chosen numbers), the hold (its numbers
//! marked held with its deadline, which every later write compares with its own clock), or
//! the conversion (the hold marked converted, its numbers taken from it) in one
//! transaction; what it committed is recorded in the view, a cancellation is learned.

use tally_domain::time::{Epoch, rfc3339_millis};
use tracing::info;

use super::{Kind, Outcome, Receipt, Run};
use crate::store::StoreError;
use crate::store::allowances::{HoldCaps, PayerCap};
use crate::store::payers::PayerGate;
use crate::store::purchases::Commit;
use crate::telemetry::metrics;
use crate::tickets::cache::BusyGuard;
use crate::tickets::spend;
use crate::tickets::{HoldReceipt, PurchaseReceipt};
use tally_domain::hold::{Hold, HoldEnd};
use tally_domain::instant::InstantWin;
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
        let gate = match self.kind.payer() {
            Some(payer) => {
                let planned = spend::plan_gate(
                    self.store,
                    &self.rules,
                    &mut self.payer,
                    (payer, amount, counts),
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
        let known = gate.as_ref().map(|g| (g, &self.payer.record));
        let now = self.now_millis();
        let created_at = self.created_at;
        let fingerprint = self.fingerprint.clone();
        let purchase = |payment_id, payer_id, chosen, channel| Purchase {
            draw_id: self.kind.draw_id().clone(),
            payment_id,
            quantity,
            payer_id,
            tickets: tickets.clone(),
            chosen,
            channel,
            amount,
            fingerprint: fingerprint.clone(),
            created_at,
            void: None,
            unfinished: None,
        };
        // Every purchase of a draw with instant wins writes its award item.
        let cache = &self.cache;
        let award = cache.instant_map().map(|_| cache.instant_wins(&tickets));
        self.attempts += 1;
        self.requests += 1;
        let _busy = BusyGuard::new(&self.cache, &takes);
        let (commit, receipt) = match &self.kind {
            Kind::Purchase(r) => {
                let purchase = purchase(
                    r.payment_id.clone(),
                    r.payer_id.clone(),
                    r.numbers.is_some(),
                    r.channel,
                );
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
                (commit, Receipt::Purchase(sold(purchase, award.clone())))
            }
            Kind::Convert(r, hold) => {
                let purchase = purchase(
                    r.payment_id.clone(),
                    Some(hold.payer_id.clone()),
                    hold.chosen,
                    Channel::Online,
                );
                let known = known.ok_or_else(|| StoreError::Invariant("no payer gate".into()))?;
                let commit = self
                    .store
                    .convert_hold(&purchase, hold, &chosen, known, award.as_deref(), now)
                    .await?;
                (commit, Receipt::Purchase(sold(purchase, award.clone())))
            }
            Kind::Hold(r) => {
                let draw = &self.cache.draw;
                let expires_at = Hold::deadline(created_at, config.hold_seconds(), &draw.schedule);
                let hold = Hold {
                    draw_id: r.draw_id.clone(),
                    hold_id: r.hold_id.clone(),
                    payer_id: r.payer_id.clone(),
                    tickets: tickets.clone(),
                    chosen: r.numbers.is_some(),
                    fingerprint,
                    created_at,
                    expires_at,
                    end: HoldEnd::Open,
                };
                let caps = HoldCaps {
                    max_held_per_payer: config.max_held_per_payer(),
                    max_per_payer: config.max_per_payer(),
                };
                let known = known.ok_or_else(|| StoreError::Invariant("no payer gate".into()))?;
                let commit = self
                    .store
                    .commit_hold(&hold, &chosen, caps, known, now)
                    .await?;
                (
                    commit,
                    Receipt::Hold(HoldReceipt {
                        hold,
                        replayed: false,
                    }),
                )
            }
        };
        drop(_busy);
        let cancellation = match commit {
            Commit::Committed => return Ok(Some(self.committed(takes, chosen, receipt, gate))),
            Commit::Cancelled(cancellation) => cancellation,
        };
        let touched: Vec<u32> = takes
            .iter()
            .map(|t| t.stripe)
            .chain(chosen.iter().map(|c| c.stripe))
            .collect();
        self.learn(&touched, *cancellation).await
    }

    /// Records what committed in the view and with the payer, and answers it.
    fn committed(
        &mut self,
        takes: Vec<StripeTake>,
        chosen: Vec<ChosenTake>,
        mut receipt: Receipt,
        gate: Option<PayerGate>,
    ) -> Receipt {
        let mut view = self.cache.view();
        match &mut receipt {
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
                sold.requests = self.requests;
                info!(
                    tickets = ?sold.purchase.tickets,
                    instant_wins = sold.instant_wins.len(),
                    requests = self.requests,
                    attempts = self.attempts,
                    "purchase committed"
                );
            }
        }
        receipt
    }
}

/// The answer of a purchase or conversion that committed.
fn sold(purchase: Purchase, award: Option<Vec<InstantWin>>) -> PurchaseReceipt {
    PurchaseReceipt {
        purchase,
        instant_wins: award.unwrap_or_default(),
        replayed: false,
        requests: 0,
    }
}
