//! Integration tests against DynamoDB Local (`make test` starts one).

mod changes;
mod chosen;
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
mod lifecycle;
mod lifecycle_races;
mod numbering;
mod operator_tools;
mod order_races;
mod orders;
mod queue;
mod stale_counter;
mod stream;
mod tickets;
mod winners;
