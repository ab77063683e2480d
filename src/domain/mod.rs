//! The rules of Tally, free of AWS types.

pub mod access;
pub mod audit;
pub mod availability;
pub mod chain;
pub mod draw;
pub mod events;
pub mod hold;
pub mod ids;
pub mod instant;
pub mod order;
pub mod permutation;
pub mod purchase;
pub mod schedule;
pub mod secret;
pub mod seed;
pub mod series;
pub mod stripes;
pub mod text;
pub mod time;
pub mod winners;

/// Lowercase hex, as every digest, seed, key and signature is written. It lives among
/// the winners' files, which the browser verifier compiles too.
pub use winners::hex;
