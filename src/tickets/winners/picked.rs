//! The tickets the picks landed on: who holds each (an eligible ticket may wait for its
//! item while its bundle is finished), and which were voided after the freeze.

use std::collections::HashMap;

use jiff::Timestamp;
use tracing::warn;

use super::super::{TicketError, TicketService};
use crate::store::StoreError;
use crate::store::winners::PickItem;
use tally_domain::draw::Draw;
use tally_domain::purchase::Ticket;
use tally_domain::winners::RoundSignature;

impl TicketService {
    /// The tickets of `picks` (redraws and replaced winners included) voided after the
    /// freeze, with their purchases: each was eligible at the freeze, so its void came
    /// later. Read by number, one item a pick, however many tickets the draw voided late.
    pub(super) async fn late_voids(
        &self,
        draw: &Draw,
        picks: &[PickItem],
    ) -> Result<Vec<Ticket>, TicketError> {
        if draw.late_voided == 0 {
            return Ok(Vec::new());
        }
        // A bundle's void cut short marks its tickets now, so a picked one reads void.
        self.finish_voids(draw).await?;
        let numbers: Vec<u64> = picks.iter().map(|p| p.ticket).collect();
        let mut tickets = self.store().get_tickets(&draw.draw_id, &numbers).await?;
        tickets.retain(|t| t.voided);
        tickets.sort_by_key(|t| t.number);
        Ok(tickets)
    }

    /// The items of picks `(pick, ticket)`, with who holds each ticket.
    pub(super) async fn pick_items(
        &self,
        draw: &Draw,
        chosen: &[(u64, u64)],
        details: impl Fn(u64) -> (u32, Option<String>, Option<RoundSignature>),
        at: Timestamp,
    ) -> Result<Vec<PickItem>, TicketError> {
        let numbers: Vec<u64> = chosen.iter().map(|c| c.1).collect();
        let mut holders: HashMap<u64, _> = self
            .store()
            .get_tickets(&draw.draw_id, &numbers)
            .await?
            .into_iter()
            .map(|t| (t.number, t))
            .collect();
        if holders.len() < numbers.len() {
            // A bundle listed since the eligible list finished the listed ones (the index
            // follows the table within moments) gets its ticket items now.
            self.store().finish_unfinished(&draw.draw_id).await?;
            let missing: Vec<u64> = numbers
                .iter()
                .copied()
                .filter(|n| !holders.contains_key(n))
                .collect();
            let found = self.store().get_tickets(&draw.draw_id, &missing).await?;
            holders.extend(found.into_iter().map(|t| (t.number, t)));
        }
        chosen
            .iter()
            .map(|&(pick, ticket)| {
                let holder = holders
                    .get(&ticket)
                    .ok_or_else(|| unfinished_unlisted(ticket))?;
                let (prize, reason, beacon) = details(pick);
                Ok(PickItem {
                    pick,
                    prize,
                    ticket,
                    payment_id: holder.payment_id.clone(),
                    payer_id: holder.payer_id.clone(),
                    reason,
                    requested_at: None,
                    beacon,
                    at,
                })
            })
            .collect()
    }
}

/// An eligible ticket without its item: its bundle's ticket items were cut short, and the
/// index that lists such bundles does not show it yet (it follows the table within
/// moments). A repeat finds it there and finishes it; nothing was recorded.
fn unfinished_unlisted(ticket: u64) -> StoreError {
    warn!(
        ticket,
        "an eligible ticket has no item yet: its bundle is not listed yet"
    );
    StoreError::Unavailable {
        operation: "Query",
        reason: format!(
            "eligible ticket {ticket} has no item, and the index of unfinished bundles lags"
        ),
    }
}
