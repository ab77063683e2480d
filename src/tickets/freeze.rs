//! Freezing a closed draw's eligible list: computed once, by the one function that says
//! which tickets may win (`eligible`), and written with its digest, its count, the time,
//! the beacon round that time fixes and the number of prizes: the draw's own, else the
//! caller's, if given. A void after it is recorded as late and never changes the list.

use tally_domain::time::Epoch;
use tracing::{info, instrument};

use super::winners::Eligible;
use super::{TicketError, TicketService};
use crate::store::draws::Freeze;
use crate::store::retry;
use tally_domain::draw::{Draw, Frozen};
use tally_domain::hex;
use tally_domain::journal::{Action, Draft, Operator};

/// The number of prizes a freeze of `draw` fixes: the one the draw declared at its create,
/// which `given` may only repeat, else `given`.
pub(super) fn prizes_to_fix(draw: &Draw, given: Option<u32>) -> Result<Option<u32>, TicketError> {
    match (draw.config.prizes(), given) {
        (Some(declared), Some(given)) if declared != given => Err(TicketError::PrizesFixed {
            fixed: Some(declared),
            given,
        }),
        (declared, given) => Ok(declared.or(given)),
    }
}

impl TicketService {
    /// The draw with its eligible list frozen, and with it the number of prizes (the
    /// draw's own, else `prizes` when the caller gives it: fixed before the round is out);
    /// `draw` must be closed. A void that lands while the list is computed makes the
    /// freeze's condition fail, and the list is computed again, with a later time and so
    /// a later round. A draw frozen already stays as it is.
    #[instrument(skip_all, fields(draw_id = %draw.draw_id))]
    pub(super) async fn freeze(
        &self,
        draw: Draw,
        prizes: Option<u32>,
        by: &Operator,
    ) -> Result<Draw, TicketError> {
        let prizes = prizes_to_fix(&draw, prizes)?;
        // A number the draw declared was fixed at its create: it is frozen whatever the
        // count (the winners then refuse more picks than tickets). One named now must fit.
        let named = prizes.filter(|_| draw.config.prizes().is_none());
        let mut draw = draw;
        for attempt in retry::DRAW_RECORD.each() {
            if draw.frozen.is_some() {
                return Ok(draw);
            }
            let Eligible { set, draw: read } = self.eligible(draw).await?;
            if let Some(wanted) = named.filter(|&p| u64::from(p) > set.count()) {
                return Err(TicketError::NotEnoughEligible {
                    eligible: set.count(),
                    wanted: u64::from(wanted),
                });
            }
            let frozen_at = self.now();
            let frozen = Frozen {
                eligible_count: set.count(),
                eligible_digest: hex::encode(&set.digest()),
                frozen_at,
                beacon_round: read
                    .beacon
                    .as_ref()
                    .map(|network| network.round_after(frozen_at.epoch_millis())),
                prizes,
            };
            // The close is done once the list is frozen: that write is journalled.
            let entry = Draft::new(
                frozen_at,
                by,
                Action::DrawClosed,
                format!("draw/{}", read.draw_id),
                &serde_json::json!({
                    "status": "closed",
                    "eligible_count": frozen.eligible_count,
                    "eligible_digest": frozen.eligible_digest,
                    "beacon_round": frozen.beacon_round,
                    "prizes": frozen.prizes,
                }),
            );
            match self
                .store()
                .freeze_draw(&read.draw_id, &frozen, read.voided, &entry)
                .await?
            {
                None => return Err(TicketError::DrawNotFound(read.draw_id)),
                Some(Freeze::Frozen(now)) => {
                    info!(
                        eligible = frozen.eligible_count,
                        round = ?frozen.beacon_round,
                        prizes = ?frozen.prizes,
                        "eligible list frozen"
                    );
                    return Ok(now);
                }
                Some(Freeze::Moved(now)) => {
                    draw = now;
                    retry::DRAW_RECORD.pause(attempt).await;
                }
            }
        }
        Err(retry::DRAW_RECORD.exhausted().into())
    }
}
