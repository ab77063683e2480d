//! What a careful user or an attacker tries: a process that serves many draws, creates re-sent after a lost answer, a close cut short, purchases no transaction
//! can hold, requests the HTTP layer refuses, and order data that JSON would round.

mod draws;
mod echoes;
mod requests;
mod shapes;

use std::num::NonZeroUsize;

use aws_sdk_dynamodb::types::AttributeValue;
use axum::http::StatusCode;
use jiff::Timestamp;
use serde_json::{Value, json};
use tally::store::orders::SeriesInsert;
use tally::store::{Inserted, RequestCounter, Store};
use tally::tickets::{NewDraw, TicketError, TicketService};
use tally_domain::draw::{Draw, DrawConfig};
use tally_domain::ids::{DrawId, IssuerId, PaymentId, SeriesId};
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::permutation::PermutationKey;
use tally_domain::purchase::PurchaseRequest;
use tally_domain::seed::DrawSeed;
use tally_domain::series::issuer::Issuer;
use tally_domain::series::{Reset, Series, SeriesDefinition};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::helpers::{
    Item, fresh_store, of_kind, post_json, post_raw, router, spawn_app, store_on,
};
