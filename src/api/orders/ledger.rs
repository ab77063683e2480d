//! Listing a period and auditing it.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};

use super::super::AppState;
use super::super::extract::{PathParams, QueryParams};
use super::super::problem::Problem;
use super::super::timestamp;
use super::OrderResponse;
use crate::domain::audit::{Break, Entry};
use crate::domain::ids::SeriesId;
use crate::domain::order::Move;

/// The default and the largest page of a listing.
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 1_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListQuery {
    period: Option<String>,
    limit: Option<String>,
    cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AuditQuery {
    period: Option<String>,
}

#[derive(Serialize)]
struct MoveResponse {
    from: u64,
    to: u64,
    reason: String,
    moved_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hash: Option<String>,
}

impl From<Move> for MoveResponse {
    fn from(moved: Move) -> Self {
        Self {
            from: moved.from,
            to: moved.to,
            reason: moved.reason.as_str().to_owned(),
            moved_at: timestamp(moved.at),
            hash: moved.hash,
        }
    }
}

#[derive(Serialize)]
pub(super) struct ListResponse {
    series_id: String,
    period: String,
    orders: Vec<OrderResponse>,
    /// Declared moves of the counter within this page, in counter order.
    moves: Vec<MoveResponse>,
    /// Pass it as `cursor` for the next page; `null` on the last.
    next_cursor: Option<String>,
}

/// A cursor is opaque to clients: the counter a page ends at, in hexadecimal.
fn cursor_after(cursor: Option<&str>) -> Result<u64, Problem> {
    match cursor {
        None => Ok(0),
        Some(text) => u64::from_str_radix(text, 16).map_err(|_| {
            Problem::bad_request("invalid_cursor", "`cursor` is not one this API gave")
        }),
    }
}

pub(super) async fn list_orders(
    State(state): State<AppState>,
    PathParams(series_id): PathParams<String>,
    QueryParams(query): QueryParams<ListQuery>,
) -> Result<Json<ListResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let limit = match query.limit.as_deref() {
        None => DEFAULT_LIMIT,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|l| (1..=MAX_LIMIT).contains(l))
            .ok_or_else(|| {
                Problem::bad_request(
                    "invalid_limit",
                    format!("`limit` must be between 1 and {MAX_LIMIT}"),
                )
            })?,
    };
    let after = cursor_after(query.cursor.as_deref())?;
    let page = state
        .orders
        .list_period(&series_id, query.period.as_deref(), after, limit)
        .await?;
    let mut orders = Vec::new();
    let mut moves = Vec::new();
    for entry in page.entries {
        match entry {
            Entry::Order(order) => orders.push(order.into()),
            Entry::Move(moved) => moves.push(moved.into()),
        }
    }
    Ok(Json(ListResponse {
        series_id: series_id.to_string(),
        period: page.period.to_string(),
        orders,
        moves,
        next_cursor: page.next_after.map(|c| format!("{c:x}")),
    }))
}

#[derive(Serialize)]
struct GapResponse {
    from: u64,
    to: u64,
    count: u64,
    cause: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    moved_at: Option<String>,
}

#[derive(Serialize)]
struct BreakResponse {
    /// `entry`: the first stored entry whose hash does not hold; `head`: every link holds
    /// but the counter's head is not the last one.
    at: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    counter: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    order_number: Option<String>,
}

#[derive(Serialize)]
struct ChainResponse {
    intact: bool,
    links: usize,
    head: Option<String>,
    recomputed_head: String,
    first_break: Option<BreakResponse>,
}

#[derive(Serialize)]
pub(super) struct AuditResponse {
    series_id: String,
    period: String,
    gapless: bool,
    first_counter: u64,
    last_counter: Option<u64>,
    orders: usize,
    voided: usize,
    gaps: Vec<GapResponse>,
    chain: Option<ChainResponse>,
}

pub(super) async fn audit(
    State(state): State<AppState>,
    PathParams(series_id): PathParams<String>,
    QueryParams(query): QueryParams<AuditQuery>,
) -> Result<Json<AuditResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let audit = state
        .orders
        .audit_period(&series_id, query.period.as_deref(), &|_| {})
        .await?;
    let report = audit.report;
    let gaps = report
        .gaps
        .into_iter()
        .map(|gap| GapResponse {
            from: gap.from,
            to: gap.to,
            count: gap.to - gap.from + 1,
            cause: gap.cause.as_str(),
            reason: gap.declared.as_ref().map(|m| m.reason.as_str().to_owned()),
            moved_at: gap.declared.as_ref().map(|m| timestamp(m.at)),
        })
        .collect();
    let chain = report.chain.map(|chain| ChainResponse {
        intact: chain.first_break.is_none(),
        links: chain.links,
        head: chain.stored_head,
        recomputed_head: chain.recomputed_head,
        first_break: chain.first_break.map(|b| match b {
            Break::Entry {
                counter,
                order_number,
            } => BreakResponse {
                at: "entry",
                counter: Some(counter),
                order_number,
            },
            Break::Head => BreakResponse {
                at: "head",
                counter: None,
                order_number: None,
            },
        }),
    });
    Ok(Json(AuditResponse {
        series_id: series_id.to_string(),
        period: audit.period.to_string(),
        gapless: audit.series.definition.gapless,
        first_counter: report.first_counter,
        last_counter: report.last_counter,
        orders: report.orders,
        voided: report.voided,
        gaps,
        chain,
    }))
}
