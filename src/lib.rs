//! Tally hands out numbers that never collide: raffle tickets and order numbers, on AWS
//! Lambda in front of one DynamoDB table.
//!
//! # A tour
//!
//! The crate is layered, and imports run one way only:
//!
//! - [`domain`]: the rules, free of AWS types. Ids (parsed once, valid everywhere) and
//!   the characters free text may hold, draws, schedules, stripes and the keyed
//!   permutation that picks ticket numbers, seeds, winners and instant wins, series
//!   formats and periods, the issuers whose series may not render one text, orders, the
//!   hash chain, the audit, and the domain events.
//! - [`store`]: the one DynamoDB table. Key formats live in `store::keys`, one codec per
//!   item type, shared item operations in `store::table`; every race is decided here, by
//!   conditional writes and transactions.
//! - [`tickets`] and [`orders`]: the services. Each operation is a small state type whose
//!   methods are its named steps (`tickets::purchase`, `orders::gapless`).
//! - [`api`]: one axum router for Lambda and the local server, with the problem details
//!   (RFC 9457) every error becomes; [`queue`] (SQS imports), [`stream`] (DynamoDB
//!   stream to domain events) and [`bus`] (EventBridge) are the other ways in and out;
//!   [`secrets`] reads the deployment secret once at start; [`settings`] reads the
//!   environment, once, in each binary's `main`.
//! - `src/bin/`: one small `main` per Lambda function, and the `tally` command line;
//!   [`lambda_harness`] runs those functions' binaries here as Lambda runs them, for the
//!   cold-start bench and the log tests.
//!
//! Where to change what is listed in the README's map of the code.

pub mod api;
pub mod aws;
pub mod bus;
pub mod domain;
pub mod json_input;
pub mod lambda_harness;
pub mod limits;
pub mod orders;
pub mod queue;
pub mod secrets;
pub mod settings;
pub mod store;
pub mod stream;
pub mod telemetry;
pub mod tickets;
