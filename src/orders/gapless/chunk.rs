//! The next chunk of a gapless request, after the counter as known: where the counter
//! goes on (inside the series' room: its format's width and length, its live authorised
//! ranges) and on what footing, a declared jump to the next range when the counter must
//! skip, each order's number and link of the hash chain, and the range's low notice when
//! the chunk takes it past its low threshold.

use jiff::Timestamp;
use tally_domain::time::Epoch;

use super::super::chunk::chunk_of;
use super::super::{OrderError, OrderService};
use super::{Footing, Run};
use crate::orders::batch::Batch;
use crate::store::StoreError;
use crate::store::orders::{CounterAdvance, CounterRight, CounterState};
use tally_domain::chain::{GENESIS, Hash, from_hex, move_link, order_link, to_hex};
use tally_domain::order::{Move, Order, Reason};
use tally_domain::series::{RangeLow, Room, Series, Stop};

/// What one gapless transaction writes.
pub(super) struct Chunk {
    /// The items numbered, in request order.
    pub(super) indexes: Vec<usize>,
    pub(super) orders: Vec<Order>,
    pub(super) jump: Option<Move>,
    pub(super) advance: CounterAdvance,
    pub(super) low: Option<RangeLow>,
}

impl OrderService {
    /// The counter as this process knows it. A format version the series no longer has
    /// was pending for the period, and was replaced before the period's first number
    /// since the process read the counter: what the view knows is forgotten and the
    /// counter read again.
    pub(super) async fn known_counter(
        &self,
        batch: &mut Batch,
        run: &mut Run,
    ) -> Result<CounterState, OrderError> {
        let state = run.view.state.clone().unwrap_or_default();
        let Some(version) = state.format_version else {
            return Ok(state);
        };
        if self
            .stored_format(&mut batch.series, version)
            .await?
            .is_some()
        {
            return Ok(state);
        }
        self.read_counter(batch, run).await
    }

    /// The period's counter as stored, now what the view knows.
    pub(super) async fn read_counter(
        &self,
        batch: &Batch,
        run: &mut Run,
    ) -> Result<CounterState, OrderError> {
        let counter = self
            .store
            .get_counter(&batch.series.series_id, &batch.period)
            .await?
            .unwrap_or_default();
        run.view.state = Some(counter.clone());
        Ok(counter)
    }

    /// The next chunk after the counter `state`, moved on `footing`, or why the series
    /// numbers no more.
    pub(super) async fn chunk(
        &self,
        batch: &mut Batch,
        run: &Run,
        state: &CounterState,
        footing: Footing,
    ) -> Result<Result<Chunk, Stop>, OrderError> {
        let version = state
            .format_version
            .unwrap_or_else(|| batch.series.latest_version());
        let format = self.format_version(&mut batch.series, version).await?;
        let room = match self.room(batch, &format, state.last).await? {
            Ok(room) => room,
            Err(stop) => return Ok(Err(stop)),
        };
        let mut head = chain_head(state)?;
        let jump = jump_of(&batch.series, &room, batch.now, &mut head)?;
        let fixed = 1 + usize::from(jump.is_some()) + usize::from(room.range.is_some());
        let indexes = chunk_of(batch, &run.queue, room.counters(), fixed);
        let orders: Vec<Order> = indexes
            .iter()
            .enumerate()
            .map(|(j, &index)| {
                let mut order = batch.numbered(index, room.first + j as u64, &format);
                head = order_link(&head, &order);
                order.hash = Some(to_hex(&head));
                order
            })
            .collect();
        let new = room.first + orders.len() as u64 - 1;
        let more = run.queue.len() > indexes.len();
        let low = batch
            .series
            .low_passed(state.last, new, Timestamp::now())
            .filter(|low| !run.noticed.contains(&low.range.from));
        let now = Timestamp::now().epoch_millis();
        let holding = match footing {
            Footing::Leased => CounterRight::Lease {
                until: more.then(|| now + self.lease_duration()),
            },
            Footing::Turn => CounterRight::Turn { now },
            Footing::Free => CounterRight::Free { now },
        };
        let advance = CounterAdvance {
            owner: run.lease.owner.clone(),
            format_version: version,
            expected: state.last,
            new,
            head: to_hex(&head),
            holding,
        };
        Ok(Ok(Chunk {
            indexes,
            orders,
            jump,
            advance,
            low,
        }))
    }
}

/// The declared gap on the way to the next live range, as a link of the chain.
fn jump_of(
    series: &Series,
    room: &Room,
    at: Timestamp,
    head: &mut Hash,
) -> Result<Option<Move>, StoreError> {
    let Some(jump) = &room.jump else {
        return Ok(None);
    };
    let reason = Reason::parse(&jump.reason).map_err(|_| {
        StoreError::Invariant(format!("a jump's reason is too long: {}", jump.reason))
    })?;
    let mut moved = Move {
        series: series.series_id.clone(),
        from: jump.from,
        to: jump.to,
        reason,
        at,
        hash: None,
    };
    *head = move_link(head, &moved);
    moved.hash = Some(to_hex(head));
    Ok(Some(moved))
}

/// The head of the chain a leased counter carries: the genesis before the first entry.
fn chain_head(state: &CounterState) -> Result<Hash, StoreError> {
    match (&state.head, state.last) {
        (None, None) => Ok(GENESIS),
        (Some(head), _) => from_hex(head)
            .ok_or_else(|| StoreError::Invariant(format!("the chain head {head} is not a hash"))),
        (None, Some(last)) => Err(StoreError::Invariant(format!(
            "a gapless counter at {last} carries no chain head"
        ))),
    }
}
