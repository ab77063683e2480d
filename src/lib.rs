//! Tally hands out numbers that never collide: raffle tickets and order numbers, on AWS
//! Lambda in front of one DynamoDB table.
//!
//! # A tour
//!
//! The workspace's crates are the layers, so an import that runs upward does not
//! compile. Imports run one way: the mains (`src/bin/`) → [`api`], [`queue`], [`stream`]
//! → [`settings`] → the services ([`tickets`], [`orders`]) → [`store`] → the rules, in
//! the crate `tally_domain` (crates/domain: ids, draws, stripes and the permutation,
//! winners, series and the issuers whose series may not render one text, orders, the
//! chain, the audit, events; no AWS, no tokio, no HTTP).
//!
//! - [`store`]: the one DynamoDB table. Key formats live in `store::keys`, one codec per
//!   item type, shared item operations in `store::table`; every race is decided here, by
//!   conditional writes and transactions.
//! - [`tickets`] and [`orders`]: the services. Each operation is a small state type whose
//!   methods are its named steps (`tickets::purchase`, `orders::gapless`). They read the
//!   time from a `tally_domain::time::Clock`.
//! - [`api`]: one axum router for Lambda and the local server, with the problem details
//!   (RFC 9457) every error becomes; [`queue`] (SQS imports), [`stream`] (DynamoDB
//!   stream to domain events) and [`bus`] (EventBridge) are the other ways in and out.
//! - [`settings`] reads the environment, once, in each binary's `main`, with its defaults
//!   and the source bindings; [`secrets`] reads the deployment secret once at start;
//!   [`aws`] configures the SDK's clients; [`telemetry`] writes logs and metrics.
//! - `src/bin/`: one small `main` per Lambda function. The `tally` command line and the
//!   bench are the crate `tally-cli` (crates/cli), so that their dependencies stay out of
//!   the functions; what tests and bench share is `tally-testkit` (crates/testkit).
//!
//! Where to change what is listed in the README's map of the code.

pub mod api;
pub mod aws;
pub mod bus;
pub mod json_input;
pub mod limits;
pub mod orders;
pub mod queue;
pub mod secrets;
pub mod settings;
pub mod store;
pub mod stream;
pub mod telemetry;
pub mod tickets;
