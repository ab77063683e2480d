//! Tally hands out numbers that never collide: raffle tickets and order numbers, on AWS
//! Lambda in front of one DynamoDB table.

pub mod api;
pub mod aws;
pub mod bus;
pub mod domain;
pub mod file_import;
pub mod orders;
pub mod queue;
pub mod store;
pub mod stream;
pub mod telemetry;
pub mod tickets;
