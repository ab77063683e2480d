//! Drawing the winners once, from the list frozen at the close and the beacon round fixed
//! with it; redrawing a prize with a reason and a round of its own; reading them back with
//! everything needed to check them (`tally-draw-v2`, docs/winners.md).

mod eligible;
mod picked;
mod redraw;

use tally_domain::time::Epoch;

use sha2::{Digest, Sha256};
use tracing::{info, instrument};

pub(crate) use eligible::Eligible;

use super::freeze::prizes_to_fix;
use super::instant::InstantReveal;
use super::{TicketError, TicketService};
use crate::store::winners::{PickItem, Recorded};
use crate::store::{StoreError, retry};
use tally_domain::draw::{Draw, DrawStatus, WinnersRecord};
use tally_domain::hex;
use tally_domain::ids::DrawId;
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::purchase::Ticket;
use tally_domain::winners::{DrawInputs, EligibleSet, Picks, RoundSignature};

/// A beacon round's signature as a request gives it, and the round it says it is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeaconInput {
    pub signature: String,
    pub round: Option<u64>,
}

/// A drawn draw: its record (the seed is public now), every pick in order, and the
/// picked tickets voided after the freeze (the draw counts all, `late_voided`).
#[derive(Debug, Clone)]
pub struct Winners {
    pub draw: Draw,
    pub record: WinnersRecord,
    pub picks: Vec<PickItem>,
    pub late_voids: Vec<Ticket>,
    /// `false` when this call found them drawn (a repeat).
    pub drawn_now: bool,
    /// The instant wins' key, map and awards, in a draw created with some.
    pub instant: Option<InstantReveal>,
}

/// A prize and its winner: the last pick that went to it.
#[derive(Debug, Clone)]
pub struct Prize<'a> {
    pub prize: u32,
    pub pick: &'a PickItem,
    /// The ticket was voided after the freeze: a redraw with a reason replaces it.
    pub voided: bool,
}

/// A winner that a redraw replaced, with the redraw's reason and time.
#[derive(Debug, Clone)]
pub struct Replaced<'a> {
    pub pick: &'a PickItem,
    pub replaced_by: &'a PickItem,
}

impl Winners {
    pub fn prizes(&self) -> Vec<Prize<'_>> {
        (1..=self.record.prizes)
            .filter_map(|prize| {
                let pick = self.picks.iter().rev().find(|p| p.prize == prize)?;
                let voided = self.late_voids.iter().any(|t| t.number == pick.ticket);
                Some(Prize {
                    prize,
                    pick,
                    voided,
                })
            })
            .collect()
    }

    /// Every replaced winner, in the order of the picks.
    pub fn history(&self) -> Vec<Replaced<'_>> {
        self.picks
            .iter()
            .filter_map(|pick| {
                let replaced_by = self
                    .picks
                    .iter()
                    .find(|later| later.pick > pick.pick && later.prize == pick.prize)?;
                Some(Replaced { pick, replaced_by })
            })
            .collect()
    }

    pub fn inputs(&self) -> Result<DrawInputs, StoreError> {
        inputs(&self.draw, &self.record.eligible_digest)
    }
}

fn inputs(draw: &Draw, digest: &str) -> Result<DrawInputs, StoreError> {
    let digest = tally_domain::hex::decode32(digest)
        .ok_or_else(|| StoreError::Invariant("the stored eligible digest is not hex".into()))?;
    Ok(DrawInputs {
        seed: *draw.seed.as_bytes(),
        digest,
    })
}

/// The number of prizes to draw: the one the freeze fixed, which `given` (the draw's
/// declared number, else the caller's) must repeat if it is there; with none fixed (a draw
/// closed without it, or frozen before the close fixed it), `given`.
fn prizes_to_draw(fixed: Option<u32>, given: Option<u32>) -> Result<u32, TicketError> {
    match (fixed, given) {
        (Some(fixed), Some(given)) if fixed != given => Err(TicketError::PrizesFixed {
            fixed: Some(fixed),
            given,
        }),
        (Some(fixed), _) => Ok(fixed),
        (None, Some(given)) => Ok(given),
        (None, None) => Err(TicketError::PrizesRequired),
    }
}

/// SHA-256 of a round's signature: the randomness a pick hashes; empty without a beacon.
fn randomness(beacon: Option<&RoundSignature>) -> Vec<u8> {
    beacon
        .and_then(|b| tally_domain::hex::decode(&b.signature))
        .map_or_else(Vec::new, |sig| Sha256::digest(sig).to_vec())
}

impl TicketService {
    /// Draws the winners of a closed draw once: as many picks from the frozen eligible
    /// list as the draw declared or the freeze fixed prizes (`prizes`, if given, must be
    /// that number; a draw frozen without one takes it), with the randomness of the draw's
    /// beacon round. The same request again answers the same winners; another is refused.
    /// A draw closed on the way fixes its number with its list and is journalled under
    /// `by`.
    #[instrument(skip(self, beacon, by))]
    pub async fn draw_winners(
        &self,
        draw_id: &DrawId,
        prizes: Option<u32>,
        beacon: Option<BeaconInput>,
        by: &Operator,
    ) -> Result<Winners, TicketError> {
        for attempt in retry::DRAW_RECORD.each() {
            let draw = self.readable_draw(draw_id).await?;
            if draw.winners.is_some() {
                return self.same_winners(draw, prizes, beacon.as_ref()).await;
            }
            let prizes = prizes_to_fix(&draw, prizes)?;
            // A freeze without a number would leave one to choose once the round is out;
            // a draw that still sells is refused for that first.
            if draw.frozen.is_none() && prizes.is_none() {
                return Err(if self.still_sells(&draw) {
                    TicketError::DrawOpen(draw.draw_id)
                } else {
                    TicketError::PrizesRequired
                });
            }
            let draw = self.closed_and_frozen(draw, prizes, by).await?;
            let frozen = draw
                .frozen
                .clone()
                .ok_or_else(|| StoreError::Invariant("a frozen draw has no list".into()))?;
            let prizes = prizes_to_draw(frozen.prizes, prizes)?;
            let round = self.verified_round(&draw, frozen.beacon_round, beacon.as_ref())?;
            let Eligible { set, draw } = self.frozen_list(draw).await?;
            if set.count() < u64::from(prizes) {
                return Err(TicketError::NotEnoughEligible {
                    eligible: set.count(),
                    wanted: u64::from(prizes),
                });
            }
            let record = WinnersRecord {
                prizes,
                beacon: round,
                eligible_count: frozen.eligible_count,
                eligible_digest: frozen.eligible_digest,
                picks: u64::from(prizes),
                drawn_at: self.now(),
            };
            let chosen = Picks::new(&set, inputs(&draw, &record.eligible_digest)?)
                .take(prizes as usize, &randomness(record.beacon.as_ref()));
            let picks = self
                .pick_items(
                    &draw,
                    &chosen,
                    |pick| (pick as u32, None, None),
                    record.drawn_at,
                )
                .await?;
            let entry = Draft::new(
                record.drawn_at,
                by,
                Action::WinnersDrawn,
                format!("draw/{draw_id}"),
                &serde_json::json!({
                    "prizes": prizes,
                    "beacon_round": record.beacon.as_ref().map(|b| b.round),
                    "winning_tickets": picks.iter().map(|p| p.ticket).collect::<Vec<_>>(),
                }),
            );
            match self
                .store()
                .record_winners(draw_id, &record, &picks, &entry)
                .await?
            {
                Recorded::Recorded => {
                    info!(prizes, eligible = record.eligible_count, "winners drawn");
                    let late_voids = self.late_voids(&draw, &picks).await?;
                    let instant = self.revealed_instant_wins(&draw).await?;
                    return Ok(Winners {
                        draw,
                        record,
                        picks,
                        late_voids,
                        drawn_now: true,
                        instant,
                    });
                }
                Recorded::Refused(now) if now.winners.is_some() => {
                    return self.same_winners(*now, Some(prizes), beacon.as_ref()).await;
                }
                Recorded::Refused(_) => {}
                Recorded::Contended => retry::DRAW_RECORD.pause(attempt).await,
            }
        }
        Err(retry::DRAW_RECORD.exhausted().into())
    }

    /// The round's signature checked against the draw's network: `None` for a draw
    /// without a beacon (which takes none). A round not published yet by this service's
    /// clock is refused before its signature is looked at.
    fn verified_round(
        &self,
        draw: &Draw,
        round: Option<u64>,
        given: Option<&BeaconInput>,
    ) -> Result<Option<RoundSignature>, TicketError> {
        let (network, round, given) = match (&draw.beacon, round, given) {
            (None, _, None) => return Ok(None),
            (None, _, Some(_)) => return Err(TicketError::BeaconNotDeclared),
            (Some(_), None, _) => {
                return Err(StoreError::Invariant("a beacon draw froze no round".into()).into());
            }
            (Some(_), Some(round), None) => {
                return Err(TicketError::BeaconSignatureRequired { round });
            }
            (Some(network), Some(round), Some(given)) => (network, round, given),
        };
        if let Some(other) = given.round.filter(|&r| r != round) {
            return Err(TicketError::WrongBeaconRound {
                round,
                given: other,
            });
        }
        let publishes_at = network.published_at_ms(round);
        if self.now().epoch_millis() < publishes_at {
            return Err(TicketError::BeaconNotPublished {
                round,
                publishes_at: tally_domain::time::from_epoch_millis(publishes_at)
                    .unwrap_or_default(),
            });
        }
        network
            .randomness(round, &given.signature)
            .map_err(|_| TicketError::InvalidBeaconSignature { round })?;
        Ok(Some(RoundSignature {
            round,
            signature: given.signature.to_ascii_lowercase(),
        }))
    }

    /// The winners and their picks, once drawn.
    #[instrument(skip(self))]
    pub async fn get_winners(&self, draw_id: &DrawId) -> Result<Winners, TicketError> {
        let draw = self.readable_draw(draw_id).await?;
        self.winners_of(draw).await
    }

    /// The eligible list of a closed draw, frozen at its close: the very list the winners
    /// are drawn from. A draw past its `closes_at` is closed on the way, journalled under
    /// `by`.
    #[instrument(skip(self, by))]
    pub async fn get_eligible(
        &self,
        draw_id: &DrawId,
        by: &Operator,
    ) -> Result<(Draw, EligibleSet), TicketError> {
        let draw = self.readable_draw(draw_id).await?;
        // A freeze fixes the number of prizes with the list: a read, which names none,
        // freezes only a draw that declared one.
        if draw.frozen.is_none()
            && draw.config.prizes().is_none()
            && matches!(
                draw.status_at(self.now()),
                DrawStatus::Closing | DrawStatus::Closed
            )
        {
            return Err(TicketError::NotFrozen(draw.draw_id));
        }
        let draw = self.closed_and_frozen(draw, None, by).await?;
        let Eligible { set, draw } = self.frozen_list(draw).await?;
        Ok((draw, set))
    }

    /// The list of a frozen draw, computed again and checked against its digest.
    async fn frozen_list(&self, draw: Draw) -> Result<Eligible, TicketError> {
        let digest = draw.frozen.as_ref().map(|f| f.eligible_digest.clone());
        let eligible = self.eligible(draw).await?;
        if digest.as_deref() != Some(hex::encode(&eligible.set.digest()).as_str()) {
            return Err(StoreError::Invariant(
                "the eligible list no longer matches the digest frozen at the close".into(),
            )
            .into());
        }
        Ok(eligible)
    }

    async fn readable_draw(&self, draw_id: &DrawId) -> Result<Draw, TicketError> {
        self.store()
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))
    }

    async fn winners_of(&self, draw: Draw) -> Result<Winners, TicketError> {
        let record = draw
            .winners
            .clone()
            .ok_or_else(|| TicketError::WinnersNotDrawn(draw.draw_id.clone()))?;
        let picks = self.store().get_picks(&draw.draw_id, record.picks).await?;
        let late_voids = self.late_voids(&draw, &picks).await?;
        let instant = self.revealed_instant_wins(&draw).await?;
        Ok(Winners {
            draw,
            record,
            picks,
            late_voids,
            drawn_now: false,
            instant,
        })
    }

    /// The instant wins' proof of a draw whose winners are drawn, with its awards.
    async fn revealed_instant_wins(
        &self,
        draw: &Draw,
    ) -> Result<Option<InstantReveal>, TicketError> {
        if draw.instant_wins.is_none() {
            return Ok(None);
        }
        let awards = self.store().instant_awards(&draw.draw_id).await?;
        self.instant_reveal(draw, awards).await
    }

    /// Whether `draw` still sells, as the winners call sees it: not closed, not past its
    /// `closes_at`, and no close begun that the call would finish.
    fn still_sells(&self, draw: &Draw) -> bool {
        !matches!(
            draw.status_at(self.now()),
            DrawStatus::Closing | DrawStatus::Closed
        )
    }

    /// Drawn already: the same request gets the winners, another is refused.
    async fn same_winners(
        &self,
        draw: Draw,
        prizes: Option<u32>,
        beacon: Option<&BeaconInput>,
    ) -> Result<Winners, TicketError> {
        let winners = self.winners_of(draw).await?;
        let same_beacon = match (&winners.record.beacon, beacon) {
            (None, None) => true,
            (Some(drawn), Some(given)) => {
                drawn.signature.eq_ignore_ascii_case(&given.signature)
                    && given.round.is_none_or(|r| r == drawn.round)
            }
            _ => false,
        };
        if prizes.is_some_and(|p| p != winners.record.prizes) || !same_beacon {
            return Err(TicketError::WinnersDrawn(winners.draw.draw_id));
        }
        Ok(winners)
    }
}
