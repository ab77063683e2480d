//! The split of a draw's permutation into stripes, what the table holds of each, and the
//! choice of stripes for one purchase: by lucky dip (`StripeView::plan`) or by the
//! numbers a buyer chose (`StripeView::choose`). Pure logic: no I/O.

mod caps;
mod choose;
mod layout;
mod pick;
mod standing;
mod view;

use std::collections::{BTreeMap, BTreeSet};

pub use caps::held_caps;
pub use choose::{Choice, ChosenTake};
pub use layout::StripeLayout;
pub use pick::Shortfall;
pub use standing::{Standing, standings};
pub use view::{Plan, StripeView};

/// The most offsets' attributes one write of a stripe may name. DynamoDB caps a condition
/// expression at 4 KB, and each named offset costs at most 32 bytes of it (a free number:
/// ` AND attribute_not_exists(#x12) AND attribute_not_exists(#x13)` names two); 88 names
/// leave room for the cursor's own conditions and a hold's sweep (`STRIPE_SWEEP_MARKS`).
/// A lucky dip's take names two per free ticket and per held offset it passes (held, or
/// chosen since), and one per ticket whose hold ended, chosen offset passed or offset
/// taken back, so one stripe end gives at most 44 tickets per write.
pub const STRIPE_WRITE_NAMES: usize = 88;

/// The most tickets one write of a stripe takes (each names two attributes at most).
pub const STRIPE_WRITE_TICKETS: u64 = (STRIPE_WRITE_NAMES / 2) as u64;

/// The most ended hold marks one hold's write of a stripe removes besides its own
/// numbers: each names one attribute more, at most 18 bytes of the condition
/// (` AND #x123 <= :now`), so a write of 88 names and 44 sweeps stays under 4 KB.
pub const STRIPE_SWEEP_MARKS: usize = 44;

/// Chosen numbers that one purchase or hold can always write, wherever they lie: each
/// takes a ticket item and at most a stripe, two names of that stripe's write, and the
/// record and an allowance take two items of the transaction.
pub const CHOSEN_ALWAYS_FIT: usize = 44;

/// The most stripes a purchase too large for one transaction (a bundle) may touch. Its
/// commit transaction holds the record, every stripe it touches and as many ticket items
/// as fit; the ticket items that do not fit follow it (`store::bundles`).
pub const BUNDLE_STRIPES: usize = 32;

/// Stripes a purchase of `quantity` tickets may touch when `items` items of its commit
/// transaction are left for tickets and stripes: all the room its tickets leave, and
/// never fewer than `BUNDLE_STRIPES` (then some tickets follow the commit).
pub fn stripe_budget(items: usize, quantity: usize) -> usize {
    items
        .saturating_sub(quantity)
        .max(BUNDLE_STRIPES.min(items))
        .max(1)
}

/// Offsets of a stripe that holds cover, each with the end of its hold (Unix
/// milliseconds; 0 once released). A hold lives while its end is after the writer's
/// clock. A cursor passes a held offset without taking it, so an offset behind a cursor
/// may still be held; once its hold ends it is free again, and a purchase takes it back.
pub type Held = BTreeMap<u64, i64>;

/// Which end of a stripe a purchase sells from. The buyer that opened a stripe sells
/// upwards from its start; once every stripe is open, other buyers sell downwards from its
/// end. Each end has its own counter, so the two never invalidate each other's view; they
/// only meet when the stripe runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Bottom,
    Top,
}

/// Tickets taken from one end of one stripe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StripeTake {
    pub stripe: u32,
    pub side: Side,
    /// That end's counter before this purchase (the value the write is conditioned on).
    pub cursor: u64,
    /// The offsets in the stripe (from its first index) this purchase takes, in the order
    /// the cursor meets them.
    pub taken: Vec<u64>,
    /// Offsets the cursor passes over because buyers chose their numbers: sold already.
    pub skipped: Vec<u64>,
    /// Held offsets the cursor passes over: they stay held behind it.
    pub passed: Vec<u64>,
    /// Offsets behind a cursor whose hold ended: this purchase takes them back.
    pub returned: Vec<u64>,
    /// Offsets among `taken` whose hold ended (their hold mark is dropped).
    pub ended: Vec<u64>,
    /// The largest value the other end's counter may have for these tickets to be free.
    pub other_at_most: u64,
}

impl StripeTake {
    /// Tickets this take sells: ahead of the cursor and taken back behind it.
    pub fn count(&self) -> u64 {
        (self.taken.len() + self.returned.len()) as u64
    }

    /// The end's counter once this purchase commits: past what it takes ahead of it and
    /// every chosen or held offset on the way.
    pub fn next_cursor(&self) -> u64 {
        self.cursor + (self.taken.len() + self.skipped.len() + self.passed.len()) as u64
    }
}

/// What the table holds for one stripe: tickets sold from each end by lucky dip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StripeCounters {
    pub bottom: u64,
    pub top: u64,
}

/// Offsets of a stripe that buyers chose while no cursor had reached them. Once a cursor
/// passes one, the cursor's count says it is sold, and it leaves the set.
pub type Chosen = BTreeSet<u64>;
