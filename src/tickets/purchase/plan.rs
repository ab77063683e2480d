//! The plan of the next step, from the view as it is now: a lucky dip's takes from stripe
//! ends, the writes of numbers named (chosen by the buyer, picked at random for a hold,
//! or a hold's own for its conversion), a read before a refusal the view suggests, or the
//! refusal.

use jiff::Timestamp;
use tally_domain::time::Epoch;

use super::refuse::shortage;
use super::{ConvertRequest, Kind, Read, Refusal, Run, Step};
use crate::store::StoreError;
use crate::store::limits::MAX_BATCH_GET_KEYS;
use crate::tickets::TicketError;
use crate::tickets::cache::DrawCache;
use tally_domain::hold::{Hold, HoldEnd, HoldStatus};
use tally_domain::schedule::Phase;
use tally_domain::stripes::{Choice, Plan, Shortfall, StripeView};

/// Full reads of the cursors one purchase may make.
const MAX_REFRESHES: u32 = 3;

/// Items a hold's conversion adds to the hold's own numbers and stripes: the purchase
/// record, the hold record and the payer's item across draws (the payer's allowance in
/// the draw comes apart, see `named`).
const CONVERSION_RECORDS: usize = 3;

impl Run<'_> {
    /// Plans from the view as it is now. The schedule is read on this process's clock
    /// before every step, so no purchase or hold is sent before `opens_at` or from
    /// `closes_at`; a conversion is refused by its hold's deadline, never past the close.
    pub(super) fn next_step(&mut self) -> Step {
        let now = (self.clock)();
        self.cache.view().stripes.at(now.epoch_millis());
        let draw = &self.cache.draw;
        let draw_id = draw.draw_id.clone();
        match draw.schedule.phase(now) {
            _ if matches!(self.kind, Kind::Convert(..)) => {}
            Phase::NotOpen => {
                return refuse(TicketError::DrawNotOpen {
                    draw_id,
                    opens_at: draw.schedule.opens_at().unwrap_or(draw.created_at),
                });
            }
            Phase::Over => return refuse(TicketError::DrawClosed(draw_id)),
            Phase::Open => {}
        }
        if let Some(refusal) = self.payer_refusal.take() {
            return refuse(refusal);
        }
        let max_per_payer = draw.config.max_per_payer();
        let quantity = self.kind.quantity();
        if let Kind::Convert(request, hold) = &self.kind {
            return convert(&self.cache, request, hold, now);
        }
        if matches!(self.kind, Kind::Purchase(_)) && max_per_payer.is_some_and(|max| quantity > max)
        {
            return Step::Refuse(Refusal::PayerLimit(self.kind.payer().cloned()));
        }
        if self.cache.view().closed {
            return refuse(TicketError::DrawClosed(draw_id));
        }
        match self.kind.numbers().map(<[u64]>::to_vec) {
            Some(numbers) => {
                let located = numbers.iter().map(|&n| self.cache.locate(n)).collect();
                self.named(located, numbers)
            }
            None if matches!(self.kind, Kind::Hold(_)) => self.hold_dip(quantity),
            None => self.dip(quantity),
        }
    }

    /// A hold's lucky dip: free numbers picked at random, then written as named ones.
    fn hold_dip(&mut self, quantity: u64) -> Step {
        let all = 0..self.cache.draw.config.stripes();
        let view = self.cache.view();
        if view.stale && !self.reread {
            return Step::Read(Read::stripes(all.collect()));
        }
        match view.stripes.pick_free(quantity, &mut self.rng) {
            Ok(located) => {
                drop(view);
                let tickets = located
                    .iter()
                    .map(|&(s, o)| self.cache.number(s, o))
                    .collect();
                self.named(located, tickets)
            }
            // Holds may have ended or been released since the view learned them.
            Err(_) if !self.reread => Step::Read(Read::stripes(all.collect())),
            Err(Shortfall::Free) => refuse(shortage(&view.stripes, quantity, all)),
            Err(Shortfall::HoldRoom) => refuse(self.holds_full(&view.stripes, all)),
            Err(Shortfall::Spread) => refuse(TicketError::TooFragmented {
                remaining: view.stripes.remaining(),
            }),
        }
    }

    /// The writes of named numbers (`located` as `(stripe, offset)`, `tickets` the
    /// numbers), by the buyer or by a hold's lucky dip. The view may take one for sold or
    /// held, or a stripe for full of hold marks, after a hold ended: their stripes are
    /// read once before a refusal.
    fn named(&mut self, located: Vec<(u32, u64)>, tickets: Vec<u64>) -> Step {
        let hold = matches!(self.kind, Kind::Hold(_));
        let capped = self.cache.draw.config.max_per_payer().is_some();
        // Items besides tickets and stripes: the record and a capped draw's allowance; a
        // hold keeps room for its conversion's (which also ends the hold on the payer's
        // allowance: a capped draw's budget leaves that item out already).
        let extra = match hold {
            true => CONVERSION_RECORDS + usize::from(!capped),
            false => 1 + usize::from(capped),
        };
        let view = self.cache.view();
        self.epoch = view.epoch;
        let choice = match view.stripes.choose(&located, extra) {
            Choice::Take(takes) if hold => view.stripes.fit_hold(takes).map(Choice::Take),
            choice => Ok(choice),
        };
        match choice {
            Ok(Choice::Take(takes)) => Step::Commit(Vec::new(), takes, tickets),
            Err(stripes) | Ok(Choice::Taken { stripes, .. }) if !self.reread => {
                Step::Read(Read::stripes(stripes))
            }
            Err(full) => refuse(self.holds_full(&view.stripes, full)),
            Ok(Choice::Taken { positions, .. }) => refuse(TicketError::NumbersTaken(
                positions.iter().map(|&p| tickets[p]).collect(),
            )),
            Ok(Choice::TooSpread) if self.kind.numbers().is_some() => {
                refuse(crate::tickets::too_spread())
            }
            Ok(Choice::TooSpread) => refuse(TicketError::TooFragmented {
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

    /// A purchase's lucky dip: takes from stripe ends, a claim of more, or a read first.
    fn dip(&mut self, quantity: u64) -> Step {
        let view = self.cache.view();
        let plan = view.stripes.plan(quantity, &mut self.rng);
        let ahead = match &plan {
            Plan::Take(takes) => view
                .stripes
                .read_ahead(takes.iter().map(|t| t.stripe), MAX_BATCH_GET_KEYS),
            // Before claiming more ends, see whether holds that ended on ours gave back.
            Plan::Claim(_) => view.stripes.ended_unread(),
            _ => Vec::new(),
        };
        let stale = view.stale && view.stripes.all_handed();
        // A claim would get ends whose room the view only guesses where buyers choose, or
        // where it never saw the next end's stripe (ends out since it last claimed).
        let survey = matches!(plan, Plan::Claim(_))
            && !self.surveyed
            && (view.stripes.marked() || view.stripes.next_end_unseen())
            && view.stripes.all_open()
            && !view.stripes.all_handed();
        self.epoch = view.epoch;
        // One request: the draw item and as many stripes as fit with it.
        if survey {
            return Step::Read(Read {
                stripes: view.stripes.survey(MAX_BATCH_GET_KEYS - 1),
                survey: true,
            });
        }
        let stripes = 0..self.cache.draw.config.stripes();
        let held = stripes.clone().any(|s| view.stripes.has_held(s));
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
            Plan::NotEnough if held && self.refreshes == 0 => Step::Refresh,
            Plan::Take(takes) => {
                let tickets = self.cache.numbers(&takes);
                Step::Commit(takes, Vec::new(), tickets)
            }
            Plan::Claim(count) => Step::Claim(count),
            // Held numbers are not sold: the refusal says how many there are.
            Plan::NotEnough => refuse(shortage(&view.stripes, quantity, stripes)),
            Plan::TooFragmented => refuse(TicketError::TooFragmented {
                remaining: view.stripes.remaining(),
            }),
        }
    }
}

/// A conversion: exactly the hold's numbers while it lives.
fn convert(cache: &DrawCache, request: &ConvertRequest, hold: &Hold, now: Timestamp) -> Step {
    let refusal = match (hold.status_at(now), &hold.end) {
        (HoldStatus::Held, _) => {
            let located: Vec<(u32, u64)> = hold.tickets.iter().map(|&n| cache.locate(n)).collect();
            let takes = cache.view().stripes.group(&located);
            return Step::Commit(Vec::new(), takes, hold.tickets.clone());
        }
        // The payment is on record: the refusal reads it and answers it.
        (HoldStatus::Converted, HoldEnd::Converted(paid)) if *paid == request.payment_id => {
            StoreError::Invariant("a converted hold names a payment that is not on record".into())
                .into()
        }
        (HoldStatus::Converted, _) => TicketError::HoldUsed(hold.hold_id.clone()),
        (HoldStatus::Expired | HoldStatus::Released, _) => {
            TicketError::HoldExpired(hold.hold_id.clone())
        }
    };
    refuse(refusal)
}

fn refuse(refusal: TicketError) -> Step {
    Step::Refuse(Refusal::Known(refusal))
}
