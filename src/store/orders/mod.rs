//! Numbering items: series and their registry, period counters with their claims, order
//! transactions, lookups and voids, and the period index.

mod codec;
mod commit;
mod counter;
mod listing;
mod lookup;
mod series;

pub(crate) use codec::{decode_move, decode_order};
pub use commit::{OrdersCancellation, OrdersCommit};
pub use counter::{Claim, CounterAdvance, CounterMoved, CounterState, Pending};
pub use listing::PeriodPage;
pub use lookup::Voided;
pub use series::FormatChange;
