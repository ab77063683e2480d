//! Which orders of a queue go into one transaction: as many as the transaction's items
//! allow (two per order, one more for a credit note's invoice, besides the `fixed` items
//! of the counter, a jump or a low notice), no more than the counters the series has room
//! for, and each invoice at most once (a transaction writes an item once).

use std::collections::{HashSet, VecDeque};

use super::batch::Batch;
use super::{OrderError, OrderService};
use crate::store::limits::MAX_TRANSACTION_ITEMS;
use tally_domain::series::{NumberFormat, Room, Stop};

pub(super) fn chunk_of(
    batch: &Batch,
    queue: &VecDeque<usize>,
    counters: u64,
    fixed: usize,
) -> Vec<usize> {
    let mut items = fixed;
    let mut invoices = HashSet::new();
    let mut chunk = Vec::new();
    for &index in queue {
        if chunk.len() as u64 >= counters {
            break;
        }
        let invoice = batch.invoices[index].as_ref();
        let cost = 2 + usize::from(invoice.is_some());
        if items + cost > MAX_TRANSACTION_ITEMS {
            break;
        }
        if let Some(invoice) = invoice
            && !invoices.insert((invoice.period.clone(), invoice.order.counter))
        {
            break;
        }
        items += cost;
        chunk.push(index);
    }
    chunk
}

impl OrderService {
    /// Where numbering in `format` goes on after `last`. Ranges only grow once a series
    /// numbers, so a process that finds none left reads the series again, once per
    /// request, for a range added since it read it.
    pub(super) async fn room(
        &self,
        batch: &mut Batch,
        format: &NumberFormat,
        last: Option<u64>,
    ) -> Result<Result<Room, Stop>, OrderError> {
        match batch.series.room(format, last, batch.now) {
            Err(Stop::RangeExhausted | Stop::RangeExpired) if !batch.ranges_reread => {
                batch.ranges_reread = true;
                self.refresh_numbering(&mut batch.series).await?;
                Ok(batch.series.room(format, last, batch.now))
            }
            room => Ok(room),
        }
    }
}
