//! Creating a draw, reading it, and declaring its beacon.

use jiff::{SignedDuration, Timestamp};
use serde_json::json;
use tally_domain::time::Epoch;
use tracing::{info, instrument, warn};

use super::{TicketError, TicketService};
use crate::store::Inserted;
use crate::store::draws::BeaconChange;
use crate::store::limits::MAX_TRANSACTION_ITEMS;
use tally_domain::draw::facts::Entries;
use tally_domain::draw::{Draw, DrawConfig, DrawConfigError, DrawStatus};
use tally_domain::ids::DrawId;
use tally_domain::instant::{InstantKey, InstantPrize, InstantWins};
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::permutation::PermutationKey;
use tally_domain::schedule::Schedule;
use tally_domain::seed::DrawSeed;
use tally_domain::time::rfc3339_millis;
use tally_domain::winners::BeaconNetwork;

/// A new draw as asked for.
#[derive(Debug, Clone)]
pub struct NewDraw {
    pub draw_id: Option<DrawId>,
    pub name: Option<String>,
    pub config: DrawConfig,
    pub schedule: Schedule,
    /// The name of the drand network whose round the winners will hash.
    pub beacon: Option<String>,
    /// Prizes to fix on numbers now, won by whoever buys them (none: empty).
    pub instant_wins: Vec<InstantPrize>,
    /// Who creates it, for the journal.
    pub by: Operator,
}

impl NewDraw {
    /// A draw with these settings, open at once, without a name, beacon or instant wins.
    pub fn new(draw_id: DrawId, config: DrawConfig) -> Self {
        Self {
            draw_id: Some(draw_id),
            name: None,
            config,
            schedule: Schedule::default(),
            beacon: None,
            instant_wins: Vec::new(),
            by: Operator::local(),
        }
    }
}

/// A draw with its live counts, as it reads at one moment.
#[derive(Debug, Clone)]
pub struct DrawSummary {
    pub draw: Draw,
    pub sold: u64,
    /// Numbers that live holds keep at the moment of the read: neither sold nor free.
    pub held: u64,
    /// Of those sold, tickets entered by post, voided ones included.
    pub postal: u64,
    /// The status at the moment of the read: past `closes_at` a draw reads closed.
    pub status: DrawStatus,
}

impl DrawSummary {
    /// Numbers free at the moment of the read: neither sold nor held.
    pub fn remaining(&self) -> u64 {
        self.draw.config.total_tickets() - self.sold - self.held
    }

    /// Entries by channel: the tickets sold, less those voided before the freeze.
    pub fn entries(&self) -> Entries {
        Entries::count(&self.draw, self.sold, self.postal)
    }
}

/// What a create found: a new draw, or the identical one asked for before.
#[derive(Debug, Clone)]
pub struct CreatedDraw {
    pub summary: DrawSummary,
    /// `false` when an identical draw existed already (a repeated create).
    pub created: bool,
}

impl TicketService {
    /// Creates a draw with a fresh secret key and seed. Repeating a create with the same
    /// settings is safe: it answers the existing draw; other settings under the same id are
    /// a conflict.
    /// A draw whose `closes_at` has passed would never sell: it is refused, unless it repeats
    /// a create that succeeded before then.
    #[instrument(skip_all, fields(draw_id))]
    pub async fn create_draw(&self, new: NewDraw) -> Result<CreatedDraw, TicketError> {
        let seed = DrawSeed::generate();
        let instant_wins = match new.instant_wins {
            prizes if prizes.is_empty() => None,
            prizes => {
                let key = InstantKey::derive(&self.secret, &seed);
                let total = new.config.total_tickets();
                Some(InstantWins::new(prizes, total, &key).map_err(DrawConfigError::from)?)
            }
        };
        let config = new
            .config
            .with_instant_wins(instant_wins.is_some())
            .check_fits(MAX_TRANSACTION_ITEMS)?;
        let named = new.draw_id.is_some();
        let network = new
            .beacon
            .as_deref()
            .map(|name| self.network(name))
            .transpose()?;
        let draw = Draw {
            name: new.name,
            schedule: new.schedule,
            created_beacon: new.beacon,
            beacon: network,
            instant_wins,
            ..Draw::new(
                new.draw_id.unwrap_or_else(DrawId::generate),
                config,
                PermutationKey::generate(),
                seed,
                Timestamp::now(),
            )
        };
        tracing::Span::current().record("draw_id", draw.draw_id.as_str());
        if let Some(closes_at) = draw.schedule.closes_at()
            && closes_at <= draw.created_at
        {
            return self.repeated_create(named, &draw, closes_at).await;
        }
        let entry = created_entry(&draw, &new.by);
        match self.store().insert_draw(&draw, &entry).await? {
            Inserted::New => {
                info!(
                    total_tickets = draw.config.total_tickets(),
                    stripes = draw.config.stripes(),
                    seed_commitment = %draw.seed.commitment(),
                    "draw created"
                );
                let status = draw.status_at(Timestamp::now());
                Ok(CreatedDraw {
                    summary: DrawSummary {
                        draw,
                        sold: 0,
                        held: 0,
                        postal: 0,
                        status,
                    },
                    created: true,
                })
            }
            Inserted::Existing(existing) if existing.same_settings(&draw) => {
                info!("draw exists with the same settings");
                Ok(CreatedDraw {
                    summary: self.get_draw(&existing.draw_id).await?,
                    created: false,
                })
            }
            Inserted::Existing(existing) => Err(TicketError::DrawExists(existing.draw_id)),
        }
    }

    /// The draw that an earlier create with the same settings made; none is a new draw
    /// closed before it opens, refused.
    async fn repeated_create(
        &self,
        named: bool,
        draw: &Draw,
        closes_at: Timestamp,
    ) -> Result<CreatedDraw, TicketError> {
        let existing = if named {
            self.store().get_draw(&draw.draw_id).await?
        } else {
            None
        };
        match existing {
            Some(existing) if existing.same_settings(draw) => Ok(CreatedDraw {
                summary: self.summary(existing).await?,
                created: false,
            }),
            Some(existing) => Err(TicketError::DrawExists(existing.draw_id)),
            None => Err(TicketError::ClosesAtPassed(closes_at)),
        }
    }

    #[instrument(skip(self))]
    pub async fn get_draw(&self, draw_id: &DrawId) -> Result<DrawSummary, TicketError> {
        let draw = self
            .store()
            .get_draw(draw_id)
            .await?
            .ok_or_else(|| TicketError::DrawNotFound(draw_id.clone()))?;
        self.summary(draw).await
    }

    /// A network this deployment trusts.
    fn network(&self, name: &str) -> Result<BeaconNetwork, TicketError> {
        self.networks
            .get(name)
            .cloned()
            .ok_or_else(|| TicketError::UnknownBeaconNetwork {
                name: name.to_owned(),
                known: self
                    .networks
                    .names()
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            })
    }

    /// The draw with the sum of its cursors, and its live holds by this process's clock.
    /// An open draw whose tickets are all sold reads `sold_out`, and its item records it so
    /// for the listings, which read no cursors.
    pub(super) async fn summary(&self, mut draw: Draw) -> Result<DrawSummary, TicketError> {
        let all: Vec<u32> = (0..draw.config.stripes()).collect();
        let stripes = self.store().read_stripes(&draw.draw_id, &all).await?;
        let layout = draw.config.layout();
        let now = self.now();
        let sold = stripes.iter().map(|(i, s)| s.sold(layout.len(*i))).sum();
        let held = stripes
            .iter()
            .map(|(_, s)| s.live_held(now.epoch_millis()))
            .sum();
        let postal = stripes.iter().map(|(_, s)| s.postal).sum();
        if sold >= draw.config.total_tickets() && draw.sold_out_at.is_none() {
            self.record_sold_out(&draw.draw_id).await;
            draw.sold_out_at = Some(now);
        }
        Ok(DrawSummary {
            status: draw.status_at(now),
            draw,
            sold,
            held,
            postal,
        })
    }

    /// Records the draw sold out for the listings. A record that fails to be written is
    /// written by the next read of the counts; the answer in hand does not wait for it.
    /// Whether it was written.
    pub(super) async fn record_sold_out(&self, draw_id: &DrawId) -> bool {
        match self.store().record_sold_out(draw_id).await {
            Ok(()) => info!("draw sold out"),
            Err(err) => {
                warn!(error = %err, "the sold-out time was not written");
                return false;
            }
        }
        true
    }

    /// The postal entries of a closed draw that are eligible: counted on its stripes, less
    /// the voided ones.
    pub async fn eligible_postal(&self, draw: &Draw) -> Result<u64, TicketError> {
        let all: Vec<u32> = (0..draw.config.stripes()).collect();
        let stripes = self.store().read_stripes(&draw.draw_id, &all).await?;
        let postal: u64 = stripes.iter().map(|(_, s)| s.postal).sum();
        Ok(postal.saturating_sub(draw.postal_voided))
    }

    /// Declares (`Some`, a network's name) or withdraws (`None`) the drand network whose
    /// round the winners will hash, while the draw sells; never once it is closing, closed
    /// or past `closes_at`. Once a ticket was sold or held the beacon is fixed: a draw
    /// without one may still declare one, but none is withdrawn or switched. Journalled
    /// under `by`. Setting the beacon it has is a no-op that journals nothing, so a repeat
    /// is safe.
    #[instrument(skip(self, by))]
    pub async fn set_beacon(
        &self,
        draw_id: &DrawId,
        beacon: Option<String>,
        by: &Operator,
    ) -> Result<DrawSummary, TicketError> {
        let network = beacon
            .as_deref()
            .map(|name| self.network(name))
            .transpose()?;
        let draw = self.fix_beacon_if_sold(draw_id).await?;
        let now = Timestamp::now();
        let fix = network.is_some() && fixes_on_declaring(&draw, now);
        let entry = Draft::new(
            now,
            by,
            Action::DrawChanged,
            format!("draw/{draw_id}"),
            &json!({ "beacon": beacon }),
        );
        let name = |b: &Option<BeaconNetwork>| b.as_ref().map(|n| n.name().to_owned());
        match self
            .store()
            .set_beacon(draw_id, network.as_ref(), fix, now, &entry)
            .await?
        {
            None => Err(TicketError::DrawNotFound(draw_id.clone())),
            Some(BeaconChange::Set(draw)) => {
                info!(beacon = ?draw.beacon, "beacon set");
                self.summary(draw).await
            }
            // The beacon it has already, also after the close: a repeat changes nothing.
            Some(BeaconChange::Refused(draw)) if name(&draw.beacon) == beacon => {
                self.summary(draw).await
            }
            Some(BeaconChange::Refused(draw)) if draw.status_at(now).refuses_sales() => {
                Err(TicketError::DrawClosed(draw_id.clone()))
            }
            Some(BeaconChange::Refused(_)) => Err(TicketError::BeaconFixed(draw_id.clone())),
        }
    }

    /// Fixes the beacon of a draw that sold or holds tickets while its item does not say
    /// so: one whose sales began before draws recorded it. Sales never come undone, so
    /// counts that show one settle it.
    async fn fix_beacon_if_sold(&self, draw_id: &DrawId) -> Result<Draw, TicketError> {
        let summary = self.get_draw(draw_id).await?;
        if !summary.draw.beacon_fixed && summary.sold + summary.held > 0 {
            self.store().fix_beacon(draw_id).await?;
        }
        Ok(summary.draw)
    }
}

/// How long before its `opens_at` a draw may still be given a beacon it can change: a
/// process's clock may run ahead of the one that declares it.
const BEFORE_OPENING: SignedDuration = SignedDuration::from_secs(60);

/// Whether a beacon declared now on `draw` is fixed at once: a draw without one that may
/// be selling, or will within a minute. A process that read the draw before the beacon
/// came knows none: one that read it before `opens_at` fixes whatever beacon the draw
/// has before its first sale, but one that read it later would not. The minute covers
/// the two processes' clocks differing by less.
fn fixes_on_declaring(draw: &Draw, now: Timestamp) -> bool {
    draw.beacon.is_none()
        && draw
            .schedule
            .opens_at()
            .is_none_or(|opens_at| now + BEFORE_OPENING >= opens_at)
}

/// The journal's entry of a draw's creation: every setting it was created with, and the
/// commitment to its seed (never the seed, the permutation key or the instant-win numbers).
fn created_entry(draw: &Draw, by: &Operator) -> Draft {
    let config = &draw.config;
    let change = json!({
        "name": draw.name,
        "total_tickets": config.total_tickets(),
        "max_per_purchase": config.max_per_purchase(),
        "stripes": config.stripes(),
        "max_per_payer": config.max_per_payer(),
        "hold_seconds": config.hold_seconds(),
        "max_held_per_payer": config.max_held_per_payer(),
        "max_held_percent": config.max_held_percent(),
        "prizes": config.prizes(),
        "ticket_price": config.price().map(|p| p.minor),
        "currency": config.price().map(|p| p.currency.to_string()),
        "opens_at": draw.schedule.opens_at().map(rfc3339_millis),
        "closes_at": draw.schedule.closes_at().map(rfc3339_millis),
        "beacon": draw.created_beacon,
        "instant_wins": draw.instant_wins.as_ref().map(|i| {
            i.prizes()
                .iter()
                .map(|p| json!({ "prize": p.prize, "count": p.count }))
                .collect::<Vec<_>>()
        }),
        "seed_commitment": draw.seed.commitment(),
    });
    Draft::new(
        draw.created_at,
        by,
        Action::DrawCreated,
        format!("draw/{}", draw.draw_id),
        &change,
    )
}
