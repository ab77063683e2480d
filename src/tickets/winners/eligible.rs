//! The eligible list of a closed draw, from the table: the sold permutation indices that
//! the stripe cursors name and the chosen ones ahead of them, their images under the
//! draw's permutation, less the tickets voided before the freeze. This is the one function
//! that says which tickets may win: the freeze and every later read of the list call it.

use std::num::NonZeroUsize;
use std::ops::Range;
use std::time::Duration;

use tracing::{info, warn};

use super::super::{TicketError, TicketService};
use crate::store::{StoreError, retry};
use tally_domain::draw::{Draw, DrawStatus};
use tally_domain::permutation::Permutation;
use tally_domain::stripes::{Standing, standings};
use tally_domain::winners::EligibleSet;

/// Reads of the voided tickets' index before it is taken to lag for good.
const INDEX_READS: u32 = 5;
const INDEX_WAIT: Duration = Duration::from_millis(200);

/// An eligible list and the voided count it was computed with.
pub(crate) struct Eligible {
    pub(crate) set: EligibleSet,
    pub(crate) draw: Draw,
}

impl TicketService {
    /// The eligible list of `draw`, which must be closed (every stripe closed, so the
    /// cursors are final). The voided tickets come from an index that follows the table
    /// within moments; their number must match the draw's `voided` count, read strongly
    /// consistent, so a lagging index is waited for, never trusted.
    pub(crate) async fn eligible(&self, mut draw: Draw) -> Result<Eligible, TicketError> {
        if draw.status != DrawStatus::Closed {
            return Err(TicketError::DrawOpen(draw.draw_id));
        }
        // A bundle whose ticket items were cut short gets them before any may win.
        self.store().finish_unfinished(&draw.draw_id).await?;
        let layout = draw.config.layout();
        let all: Vec<u32> = (0..draw.config.stripes()).collect();
        let mut sold: Vec<Range<u64>> = Vec::new();
        for (stripe, state) in self.store().read_stripes(&draw.draw_id, &all).await? {
            let indices = layout.indices(stripe);
            let len = indices.end - indices.start;
            if state.sold(len) > len {
                return Err(StoreError::Invariant(format!("stripe {stripe} is oversold")).into());
            }
            // Sold offsets: behind the cursors and chosen ahead of them; held ones (never
            // bought, whether or not their hold lives) are not.
            let runs = standings(len, state.cursors, &state.chosen, &state.held, i64::MAX);
            sold.extend(
                runs.into_iter()
                    .filter(|(_, standing)| *standing == Standing::Sold)
                    .map(|(run, _)| indices.start + run.start..indices.start + run.end),
            );
        }
        let voided = self.voided_before_freeze(&mut draw).await?;
        let permutation = Permutation::new(draw.config.total_tickets(), &draw.key);
        let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
        let started = std::time::Instant::now();
        let mut set =
            tokio::task::spawn_blocking(move || EligibleSet::sold(&permutation, &sold, threads))
                .await
                .map_err(|e| {
                    StoreError::Invariant(format!("the eligible list was not computed: {e}"))
                })?;
        set.remove_voided(&voided)
            .map_err(|e| StoreError::Invariant(e.to_string()))?;
        info!(
            eligible = set.count(),
            voided = voided.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "eligible list computed"
        );
        Ok(Eligible { set, draw })
    }

    /// The tickets voided before the freeze, as many as `draw` counts. The index lists
    /// more than a draw read before it when a void commits in between: the draw is read
    /// again, a few times while voids go on committing (then `503 contention`). A draw
    /// read after the index that counts no more than the first read did counts fewer than
    /// the index lists: the table is at odds with itself, and no try mends that.
    async fn voided_before_freeze(&self, draw: &mut Draw) -> Result<Vec<u64>, TicketError> {
        let policy = retry::DRAW_RECORD;
        for attempt in policy.each() {
            self.finish_voids(draw).await?;
            let voided = self.indexed_voids(draw).await?;
            let (listed, counted) = (voided.len() as u64, draw.voided);
            if listed == counted {
                return Ok(voided);
            }
            *draw = self
                .store()
                .get_draw(&draw.draw_id)
                .await?
                .ok_or_else(|| TicketError::DrawNotFound(draw.draw_id.clone()))?;
            if draw.voided <= counted {
                return Err(StoreError::Invariant(format!(
                    "the index lists {listed} tickets of draw {} voided before its freeze, \
                     the draw counts {counted}",
                    draw.draw_id
                ))
                .into());
            }
            if policy.allows_after(attempt) {
                policy.pause(attempt).await;
            }
        }
        Err(policy.exhausted().into())
    }

    /// Finishes the voids of bundles that the draw still names: their tickets are counted
    /// as voided but some may not carry their mark yet.
    pub(super) async fn finish_voids(&self, draw: &Draw) -> Result<(), TicketError> {
        for payment_id in &draw.voiding {
            if let Some(purchase) = self.store().get_purchase(&draw.draw_id, payment_id).await? {
                self.store().finish(purchase).await?;
            }
        }
        Ok(())
    }

    /// The tickets of `draw` voided before the freeze, from the index: at least as many as
    /// the draw counts, read strongly consistent, so a lagging index is waited for, never
    /// trusted.
    async fn indexed_voids(&self, draw: &Draw) -> Result<Vec<u64>, TicketError> {
        let expected = draw.voided;
        for read in 1..=INDEX_READS {
            let listed = self.store().voided_tickets(&draw.draw_id).await?;
            if listed.len() as u64 >= expected {
                return Ok(listed);
            }
            if read < INDEX_READS {
                tokio::time::sleep(INDEX_WAIT).await;
            } else {
                warn!(
                    listed = listed.len(),
                    voided = expected,
                    "the index of voided tickets lags"
                );
            }
        }
        Err(StoreError::Unavailable {
            operation: "Query",
            reason: "the index of voided tickets lags behind the draw".into(),
        }
        .into())
    }
}
