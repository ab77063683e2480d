//! What the tests and the bench share, apart from the service: they depend on this crate
//! and on `tally`, and this crate never depends on `tally` (a test of `tally` would then
//! link a second copy of it, whose types differ from the first's).
//!
//! # A tour
//!
//! - [`dynamodb`]: DynamoDB Local as the tests reach it: its endpoint (without one, the
//!   test process stops with one line saying how to run it), tables of a test's own that
//!   are deleted when their guard drops, and the items read back.
//! - [`http`] and [`app`]: requests through the router, their answers, problems checked
//!   against openapi.json, and [`TestApp`](app::TestApp), a router on a table of its own.
//! - [`fault_proxy`]: a proxy between the SDK and DynamoDB Local that throttles, fails,
//!   loses answers and freezes on demand.
//! - [`lambda_harness`]: a Lambda function's binary run here as Lambda runs it, for the
//!   log tests and the cold-start bench.
//! - [`logs`]: log lines kept in memory, and the forms a secret takes in one.
//! - [`verifiers`] and [`beacon`]: the two verifiers of a drawn draw, and a drand network
//!   whose keys the tests hold.

pub mod app;
pub mod beacon;
pub mod dynamodb;
pub mod fault_proxy;
pub mod http;
pub mod lambda_harness;
pub mod logs;
pub mod verifiers;
