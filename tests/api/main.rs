//! Integration tests against DynamoDB Local (`make test` starts one).

mod changes;
mod concurrency;
mod cost;
mod events;
mod fault_proxy;
mod faults;
mod file_import;
mod hardening;
mod helpers;
mod invariants;
mod ledger;
mod numbering;
mod order_races;
mod orders;
mod queue;
mod tickets;
