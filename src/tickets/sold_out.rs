//! Noticing a sell-out where it happens. Listings read the draw items alone, so a draw
//! reads `sold_out` there once its item records the sell-out, which a read of its counts does
//! (`summary`). A purchase that leaves this process's view with no ticket to sell records
//! the sell-out: at once where the view proves every ticket sold (no room, no hold mark),
//! else after a read of the counts; in one process the last buyer records it.
//! Processes that sold the last tickets each without seeing the other's leave it to the
//! next refused buyer (at most one read a second per draw and process, as refusals after
//! a sell-out come in rushes) or the next read of the draw. A claim that finds it
//! recorded tells its process that every stripe is sold out.

use jiff::Timestamp;
use tally_domain::time::Epoch;
use tracing::warn;

use super::cache::DrawCache;
use super::{PurchaseReceipt, TicketError, TicketService};

/// The least time between two reads of one draw's counts after refusals, in ms.
const SELL_OUT_READ_EVERY_MS: i64 = 1_000;

impl TicketService {
    /// After a purchase: reads the counts of a draw that may have sold out, which records
    /// it if it has.
    pub(super) async fn notice_sell_out(
        &self,
        cache: &DrawCache,
        outcome: &Result<PurchaseReceipt, TicketError>,
    ) {
        if cache.seen_sold_out() {
            return;
        }
        let (remaining, all_sold) = {
            let view = cache.view();
            (view.stripes.remaining(), view.stripes.all_sold())
        };
        let read = match outcome {
            // What the view knows proves it: the sell-out is recorded without a read of the counts.
            Ok(_) | Err(TicketError::SoldOut { remaining: 0, .. }) if all_sold => {
                if self.record_sold_out(&cache.draw.draw_id).await {
                    cache.set_seen_sold_out();
                }
                return;
            }
            Ok(_) => remaining == 0,
            Err(TicketError::SoldOut { remaining: 0, .. }) => {
                cache.sell_out_read_turn(Timestamp::now().epoch_millis(), SELL_OUT_READ_EVERY_MS)
            }
            Err(_) => false,
        };
        if !read {
            return;
        }
        match self.summary(cache.draw.clone()).await {
            Ok(summary) if summary.draw.sold_out_at.is_some() => cache.set_seen_sold_out(),
            Ok(_) => {}
            Err(err) => {
                warn!(error = %err, "the counts of a draw that may have sold out were not read")
            }
        }
    }
}
