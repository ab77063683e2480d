//! Converting a hold into a purchase of exactly its numbers, once, while it lives: the
//! purchase record, the hold marked converted (its deadline after the writer's clock),
//! its numbers taken from the hold on their stripes, and one ticket item each, in one
//! transaction. A repeat of the payment answers its purchase.

use jiff::Timestamp;
use std::sync::Arc;
use tally_domain::time::Epoch;

use tracing::{info, warn};

use super::super::cache::DrawCache;
use super::super::spend::{self, PayerKnown, SharedRules};
use super::super::{PurchaseReceipt, TicketError};
use crate::store::purchases::{Cancellation, Commit};
use crate::store::{Store, StoreError, retry};
use crate::telemetry::metrics;
use tally_domain::hold::{Hold, HoldEnd, HoldStatus, conversion_fingerprint};
use tally_domain::ids::{DrawId, HoldId, PaymentId};
use tally_domain::purchase::{Channel, Purchase};
use tally_domain::time::Clock;

/// A payment for a hold.
#[derive(Debug, Clone)]
pub struct ConvertRequest {
    pub draw_id: DrawId,
    pub payment_id: PaymentId,
    pub hold_id: HoldId,
    /// Opaque to Tally and never stored: only its hash enters the fingerprint.
    pub token: Option<String>,
}

/// What a cancelled conversion says to do next.
enum Next {
    Again,
    Done(Box<Result<PurchaseReceipt, TicketError>>),
}

pub(in crate::tickets) struct ConvertRun<'a> {
    store: &'a Store,
    cache: Arc<DrawCache>,
    request: ConvertRequest,
    fingerprint: String,
    clock: Clock,
    conflicts: u32,
    rules: SharedRules,
    payer: PayerKnown,
}

impl<'a> ConvertRun<'a> {
    pub(in crate::tickets) fn new(
        store: &'a Store,
        cache: Arc<DrawCache>,
        request: ConvertRequest,
        (clock, rules): (Clock, SharedRules),
    ) -> Self {
        let fingerprint = conversion_fingerprint(
            &cache.fingerprint_key,
            &request.hold_id,
            request.token.as_deref(),
        );
        Self {
            store,
            cache,
            request,
            fingerprint,
            clock,
            conflicts: 0,
            rules,
            payer: PayerKnown::default(),
        }
    }

    pub(in crate::tickets) async fn run(mut self) -> Result<PurchaseReceipt, TicketError> {
        let mut hold = self.read_hold().await?;
        for _ in retry::CONVERSION.each() {
            let now = (self.clock)();
            match (hold.status_at(now), &hold.end) {
                (HoldStatus::Held, _) => {}
                (HoldStatus::Converted, HoldEnd::Converted(paid))
                    if *paid == self.request.payment_id =>
                {
                    return self.replay_record().await;
                }
                (HoldStatus::Converted, _) => {
                    return self.unless_paid(TicketError::HoldUsed(hold.hold_id)).await;
                }
                (HoldStatus::Expired | HoldStatus::Released, _) => {
                    return self
                        .unless_paid(TicketError::HoldExpired(hold.hold_id))
                        .await;
                }
            }
            let purchase = self.purchase(&hold, now);
            // The payment counts toward the payer's spend, and an exclusion refuses it.
            let planned = spend::plan_gate(
                self.store,
                &self.rules,
                &mut self.payer,
                (&hold.payer_id, purchase.amount, true),
                now,
            )
            .await;
            let gate = match planned {
                Ok((gate, _)) => gate,
                Err(refusal) => return self.unless_paid(refusal).await,
            };
            let located: Vec<(u32, u64)> =
                hold.tickets.iter().map(|&n| self.cache.locate(n)).collect();
            let takes = {
                let mut view = self.cache.view();
                view.stripes.at(now.epoch_millis());
                view.stripes.group(&located)
            };
            let award = self.cache.award(&purchase.tickets);
            let commit = self
                .store
                .convert_hold(
                    &purchase,
                    &hold,
                    &takes,
                    (&gate, &self.payer.record),
                    award.as_deref(),
                    now.epoch_millis(),
                )
                .await?;
            match commit {
                Commit::Committed => {
                    self.payer.committed(&self.rules, &gate);
                    self.cache.view().stripes.committed(&[], &takes);
                    metrics::PURCHASES.add(1);
                    metrics::TICKETS_SOLD.add(purchase.tickets.len() as u64);
                    info!(tickets = ?purchase.tickets, hold_id = %hold.hold_id, "hold converted");
                    return Ok(PurchaseReceipt {
                        purchase,
                        instant_wins: award.unwrap_or_default(),
                        replayed: false,
                        requests: 0,
                    });
                }
                Commit::Cancelled(cancellation) => {
                    match self.learn(&mut hold, *cancellation).await {
                        Next::Again => {}
                        Next::Done(result) => return *result,
                    }
                }
            }
        }
        warn!("conversion gave up under contention");
        Err(retry::CONVERSION.exhausted().into())
    }

    async fn read_hold(&self) -> Result<Hold, TicketError> {
        match self
            .store
            .get_hold(&self.request.draw_id, &self.request.hold_id)
            .await?
        {
            Some(hold) => Ok(hold),
            None => Err(TicketError::HoldNotFound(self.request.hold_id.clone())),
        }
    }

    /// The purchase a conversion at `now` writes.
    fn purchase(&self, hold: &Hold, now: Timestamp) -> Purchase {
        Purchase {
            draw_id: hold.draw_id.clone(),
            payment_id: self.request.payment_id.clone(),
            quantity: hold.tickets.len() as u32,
            payer_id: Some(hold.payer_id.clone()),
            tickets: hold.tickets.clone(),
            chosen: hold.chosen,
            channel: Channel::Online,
            amount: self
                .cache
                .draw
                .config
                .price()
                .map(|p| p.charge(hold.tickets.len() as u32, None, false)),
            fingerprint: self.fingerprint.clone(),
            created_at: now,
            void: None,
            unfinished: None,
        }
    }

    /// Learns from a cancelled conversion.
    async fn learn(&mut self, hold: &mut Hold, cancellation: Cancellation) -> Next {
        if let Some(existing) = cancellation.existing {
            return Next::Done(Box::new(self.replay(existing).await));
        }
        if let Some(record) = cancellation.payer {
            // The payer's terms or spend moved: planned again from the item.
            self.payer.learn(&self.rules, &hold.payer_id, record);
            return Next::Again;
        }
        if let Some(now_on_record) = cancellation.hold {
            // Converted, released or expired meanwhile: decided on the next round.
            *hold = now_on_record;
            return Next::Again;
        }
        if cancellation.allowance.is_some() {
            // The payer's allowance no longer counts the hold: it was given back as ended.
            return Next::Done(Box::new(Err(TicketError::HoldExpired(
                hold.hold_id.clone(),
            ))));
        }
        let end = hold.expires_at.epoch_millis();
        let mut lost = false;
        {
            let mut view = self.cache.view();
            for (stripe, state) in &cancellation.stale_stripes {
                view.learn(*stripe, state);
                // A hold never outlives the sale: the close ends it.
                lost |= state.closed;
                // A number of the hold that no longer carries its deadline was taken by
                // a writer whose clock saw the hold end.
                lost |= hold
                    .tickets
                    .iter()
                    .map(|&n| self.cache.locate(n))
                    .any(|(s, o)| s == *stripe && state.held.get(&o) != Some(&end));
            }
        }
        if lost {
            return Next::Done(Box::new(Err(TicketError::HoldExpired(
                hold.hold_id.clone(),
            ))));
        }
        if cancellation.conflict || cancellation.throttled {
            self.conflicts += 1;
            retry::CONVERSION.pause(self.conflicts).await;
        }
        Next::Again
    }

    async fn replay(&self, existing: Purchase) -> Result<PurchaseReceipt, TicketError> {
        super::replay(self.store, &self.cache, &self.fingerprint, existing).await
    }

    /// The payment is on record: a conversion of the hold answered it.
    async fn replay_record(&self) -> Result<PurchaseReceipt, TicketError> {
        let missing =
            StoreError::Invariant("a converted hold names a payment that is not on record".into());
        self.unless_paid(missing.into()).await
    }

    /// A refusal stands unless this payment is on record (a repeat still answers it).
    async fn unless_paid(&self, refusal: TicketError) -> Result<PurchaseReceipt, TicketError> {
        match self
            .store
            .get_purchase(&self.request.draw_id, &self.request.payment_id)
            .await?
        {
            Some(existing) => self.replay(existing).await,
            None => Err(refusal),
        }
    }
}
