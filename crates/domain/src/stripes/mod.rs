//! The split of a draw's permutation into stripes, what the table holds of each, and the
//! choice of stripes for one purchase: by lucky dip (`StripeView::plan`) or by the
//! numbers a buyer chose (`StripeView::choose`). Pure logic: no I/O.

mod caps;
mod choose;
mod layout;
mod standing;
mod view;

use std::collections::{BTreeMap, BTreeSet};

pub use caps::held_caps;
pub use choose::{Choice, ChosenTake};
pub use layout::StripeLayout;
pub use standing::{Standing, standings};
pub use view::{Plan, StripeView};

/// The most offsets' attributes one write of a stripe may name: a condition has at most
/// 4 KB, a name costs up to 32 bytes (` AND attribute_not_exists(#x12)`), and the
/// cursor's conditions and a hold's sweep need the rest. A lucky dip names two per free
/// ticket and held offset it passes, one per ended hold, chosen or returned offset.
pub const STRIPE_WRITE_NAMES: usize = 88;

/// The most tickets one write of a stripe takes (each names two attributes at most).
pub const STRIPE_WRITE_TICKETS: u64 = (STRIPE_WRITE_NAMES / 2) as u64;

/// The most ended hold marks a hold's write sweeps besides its own numbers: each costs up
/// to 18 bytes (` AND #x123 <= :now`), so 88 names and 44 sweeps stay under 4 KB.
pub const STRIPE_SWEEP_MARKS: usize = 44;

/// Chosen numbers that one purchase or hold can always write, wherever they lie: each
/// takes a ticket item and at most a stripe item, and the record and an allowance two more.
pub const CHOSEN_ALWAYS_FIT: usize = 44;

/// The most stripes a purchase too large for one transaction (a bundle) may touch: its
/// commit holds the record, those stripes and the tickets that fit; the rest follow it.
pub const BUNDLE_STRIPES: usize = 32;

/// Stripes a purchase of `quantity` tickets may touch with `items` items of its commit
/// left for tickets and stripes: what its tickets leave, never fewer than `BUNDLE_STRIPES`.
pub fn stripe_budget(items: usize, quantity: usize) -> usize {
    items
        .saturating_sub(quantity)
        .max(BUNDLE_STRIPES.min(items))
        .max(1)
}

/// Why a hold's lucky dip found too few numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortfall {
    /// The view knows of fewer free numbers than asked for.
    Free,
    /// Enough are free, but the stripes' caps on hold marks leave too few of them.
    HoldRoom,
    /// Enough are free, but too few in what one write of each stripe may take.
    Spread,
}

/// Held offsets of a stripe and the end of each hold (Unix ms; 0 once released). A cursor
/// passes a held offset without taking it; once its hold ends a purchase takes it back.
pub type Held = BTreeMap<u64, i64>;

/// The end of a stripe a purchase sells from: the opener's bottom up, then, once every
/// stripe is open, the top down. Each end has its own cursor: the two meet only at the
/// stripe's last ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Side {
    #[default]
    Bottom,
    Top,
}

/// Tickets taken from one end of one stripe.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StripeTake {
    pub stripe: u32,
    pub side: Side,
    /// That end's cursor before this purchase, which the write is conditioned on.
    pub cursor: u64,
    /// Offsets taken ahead of the cursor, in the order the cursor meets them.
    pub taken: Vec<u64>,
    /// Chosen offsets the cursor passes: sold already.
    pub skipped: Vec<u64>,
    /// Held offsets the cursor passes: they stay held behind it.
    pub passed: Vec<u64>,
    /// Offsets behind a cursor whose hold ended, taken back.
    pub returned: Vec<u64>,
    /// Those of `taken` whose hold ended (their mark goes).
    pub ended: Vec<u64>,
    /// The largest value of the other end's cursor that leaves these tickets free.
    pub other_at_most: u64,
}

impl StripeTake {
    pub fn count(&self) -> u64 {
        (self.taken.len() + self.returned.len()) as u64
    }

    pub fn next_cursor(&self) -> u64 {
        self.cursor + (self.taken.len() + self.skipped.len() + self.passed.len()) as u64
    }
}

/// What the table holds for one stripe: tickets sold from each end by lucky dip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StripeCursors {
    pub bottom: u64,
    pub top: u64,
}

/// Offsets of a stripe chosen ahead of both cursors; one leaves the set once a cursor
/// passes it (the cursor's count covers it then).
pub type Chosen = BTreeSet<u64>;
