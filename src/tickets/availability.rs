//! The grid of a number picker: which numbers are free right now, read from every stripe
//! with strongly consistent reads, so a number shown sold is sold; a number shown free may
//! be sold a moment later, and a purchase of it then answers `numbers_taken`.

use std::num::NonZeroUsize;

use jiff::Timestamp;
use tally_domain::time::Epoch;
use tracing::{info, instrument};

use super::{TicketError, TicketService};
use crate::store::StoreError;
use tally_domain::availability::{Availability, StripeMarks, availability};
use tally_domain::ids::DrawId;

/// A draw's free numbers at one moment.
#[derive(Debug, Clone)]
pub struct Grid {
    pub draw_id: DrawId,
    pub availability: Availability,
    /// When the stripes were read.
    pub read_at: Timestamp,
}

impl TicketService {
    #[instrument(skip(self))]
    pub async fn availability(&self, draw_id: &DrawId) -> Result<Grid, TicketError> {
        let cache = self.draw_cache(draw_id).await?;
        let draw = &cache.draw;
        let all: Vec<u32> = (0..draw.config.stripes()).collect();
        let read_at = self.now();
        let now = read_at.epoch_millis();
        let stripes: Vec<StripeMarks> = self
            .store()
            .read_stripes(draw_id, &all)
            .await?
            .into_iter()
            .map(|(_, state)| state.into_marks())
            .collect();
        let permutation = cache.permutation().clone();
        let layout = draw.config.layout();
        let threads = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
        let started = std::time::Instant::now();
        let availability = tokio::task::spawn_blocking(move || {
            availability(&permutation, layout, &stripes, now, threads)
        })
        .await
        .map_err(|e| StoreError::Invariant(format!("the grid was not computed: {e}")))?;
        info!(
            free = availability.free,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "availability computed"
        );
        Ok(Grid {
            draw_id: draw_id.clone(),
            availability,
            read_at,
        })
    }
}
