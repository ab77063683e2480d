//! The `tally` command against DynamoDB Local (`make test` starts one): imports, audits
//! and exports, the operator's commands, `register-series`, `tally serve` as a process,
//! `verify-draw`, and the API walkthrough of docs/api.md run with curl against `tally
//! serve`.

mod audit;
mod file_import;
mod helpers;
mod journal;
mod operator_tools;
mod register_series;
mod serve;
mod verify_draw;
mod walkthrough;
