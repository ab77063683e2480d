//! Winners that anyone can check (`tally-draw-v2`, specified in docs/winners.md): the
//! eligible list and its public form, the beacon rounds and their signatures, the picks,
//! and the check of a published draw.
//!
//! The browser verifier (web/verifier) calls [`check_answers`] in WebAssembly, as `tally
//! verify-draw` does natively, so the two cannot disagree.

mod beacon;
mod check;
mod eligible;
mod instant;
mod pick;
mod public;
mod sold;

pub use beacon::{
    BeaconError, BeaconNetwork, BeaconNetworks, MAX_NETWORK_NAME_LEN, NetworkError, NetworkFields,
    QUICKNET, ROUND_MARGIN_MS, Scheme,
};
pub use check::{
    KeptDraw, Outcome, PendingPick, PickRecord, ProofPick, PublicList, PublicProof, Report,
    RoundSignature, Step, check, current_winners,
};
pub use eligible::{EligibleError, EligibleSet};
pub use instant::{INSTANT_ALGORITHM, InstantMap, InstantProof, PublishedAward};
pub use pick::{ALGORITHM, DrawInputs, Picks};
pub use public::check_answers;

/// The most prizes a draw may have: the winners, their draw record and the journal's head
/// and entry are written in one transaction of at most 100 items.
pub const MAX_PRIZES: u32 = 97;
