//! Numbering items: series, period counters with their leases and turns, blocks of fast
//! series, order transactions (with credit notes, jumps between authorised ranges and
//! range marks), lookups and voids, and the period and number indexes.

mod codec;
mod commit;
mod counter;
mod listing;
mod lookup;
mod reserve;
mod series;
mod turns;

pub(crate) use codec::{decode_move, decode_order, decode_range_low, decode_series};
#[cfg(test)]
pub(crate) use codec::{encode_move, encode_order, encode_range_low, encode_series};
pub use commit::{InvoiceRef, InvoiceRefusal, OrdersCancellation, OrdersCommit, OrdersExtras};
#[cfg(test)]
pub(crate) use counter::decode_counter;
pub use counter::{CounterAdvance, CounterMoved, CounterRight, CounterState, Lease, Pending};
pub use listing::PeriodPage;
pub use lookup::Voided;
pub use reserve::{Bounds, Reservation};
pub use series::{FormatStart, SeriesInsert, SeriesWrite};
pub use turns::{Booking, Turn, TurnPlace};
