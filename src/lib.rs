//! Tally hands out numbers that never collide: raffle tickets and order numbers, on AWS
//! Lambda in front of one DynamoDB table.
//!
//! # A tour
//!
//! Imports run one way: the mains (`src/bin/`) → [`api`], [`queue`], [`stream`] →
//! [`settings`] → the services ([`tickets`], [`orders`]) → [`store`] → the rules, in the
//! crate `tally_domain` (crates/domain: ids, draws, stripes and the permutation, winners,
//! series and the issuers whose series may not render one text, orders, the chain, the
//! audit, events; no AWS, no tokio, no HTTP). The compiler holds the crates' borders
//! only: the rules cannot import this crate, but the layers of this crate are modules,
//! which it lets import one another either way.
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
//! A file of code that passes about 400 lines becomes a folder whose file names read like
//! its steps, its unit tests in `tests.rs`; `make lint` refuses one past 450
//! (`scripts/check-file-sizes.py`).
//!
//! # Where to change what
//!
//! - a format token (`{yy}`, `{seq:N}`, ...): `crates/domain/src/series/format/` (its width
//!   and alphabet in `texts.rs`, which decides whether two formats overlap).
//! - which series may not share a text (S2): `crates/domain/src/series/issuer.rs`, the
//!   issuer item in `src/store/issuers.rs`, `src/orders/issuers.rs`.
//! - how a purchase picks its stripe: `crates/domain/src/stripes/view/plan.rs`
//!   (`StripeView::plan`).
//! - how many counters a fast series' block has: `crates/domain/src/series/blocks.rs`
//!   (`BlockSize`).
//! - what a draw's public facts count (entries, odds, instant prizes' unsold numbers):
//!   `crates/domain/src/draw/facts.rs`, `src/tickets/facts.rs` (the count and when polls
//!   count again), `src/store/draws/facts.rs` (the published facts),
//!   `src/api/tickets/facts.rs` (the answer).
//! - what counts toward a payer's spend limits, and an exclusion:
//!   `crates/domain/src/spend/` (spans, windows, limits, cooling-off), the payer item in
//!   `src/store/payers.rs` (one item a sale), `src/tickets/spend.rs`.
//! - what an operator action journals: its `Draft` where the action is (e.g.
//!   `src/tickets/void.rs`), `crates/domain/src/journal.rs` (entries, chain, verification),
//!   `src/store/journal.rs` (`transact_journaled`), docs/journal.md.
//! - when gapless single posts take turns, and how long: `src/orders/gapless/footing.rs`.
//! - a route: its handler and `<HANDLER>_CODES` in `src/api/tickets/` or `src/api/orders/`,
//!   the route table of that folder's `mod.rs` (with its function), `Events` in
//!   `template.yaml`.
//! - a domain event: one line of `domain_events!` in `crates/domain/src/events/` and the
//!   fact's type; `src/store/stream.rs` (which items make it).
//! - an environment variable: `src/settings/` (read once, in each `main`) and
//!   docs/operations.md, "Configuration".
//! - an error code or its status: `src/api/problem/code/` (each code with its status and
//!   its sentence for callers), `mapping.rs`.
//! - a timeout: `src/aws.rs` (`Timeouts`, DynamoDB calls), `src/settings/mod.rs` (request
//!   deadlines).
//! - a limit: `src/limits.rs` (every public limit, checked against docs/limits.md).
//! - the characters free text and payer ids take: `crates/domain/src/text.rs` (one rule for
//!   every free-text field), `PayerId` in `crates/domain/src/ids.rs`.
//! - who may act as which order source: `src/settings/sources.rs` (bindings),
//!   `src/api/caller.rs` (the caller's identity), `crates/domain/src/access.rs`.
//! - a metric, an alarm: `src/telemetry/metrics.rs`, the alarms of `template.yaml`.

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
