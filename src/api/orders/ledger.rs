//! Listing a period and auditing it.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::caller::Caller;
use super::super::extract::{PathParams, QueryParams};
use super::super::page_token::{audit_from, audit_page_token, counter_after, counter_page_token};
use super::super::problem::{Code, Problem};
use super::super::query::MAX_PAGE_BYTES;
use super::super::query::page_limit;
use super::super::timestamp;
use super::series::OverlapResponse;
use super::{OrderResponse, SeriesPath};
use crate::limits::LISTING_PAGE;
use crate::orders::AuditScope;
use tally_domain::audit::{Break, Entry};
use tally_domain::ids::SeriesId;
use tally_domain::order::Move;

/// A page of a period.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(super) struct ListQuery {
    /// A period of the series' reset (`all`, `2026`, `2026-11`, `2026-11-29`, `FY2027`);
    /// the current one by default.
    period: Option<String>,
    /// 1 to 1,000 entries, 100 by default.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1_000)]
    limit: Option<String>,
    /// The `next_cursor` of the previous page of this series and period.
    #[param(pattern = "^[0-9a-f]{16}\\.[0-9a-f]{8}$")]
    cursor: Option<String>,
}

/// The period to audit.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(super) struct AuditQuery {
    /// A period of the series' reset; the current one by default.
    period: Option<String>,
    /// The `next_cursor` of the previous part of this period's audit.
    cursor: Option<String>,
}

/// A declared move of the counter: the numbers `from` to `to` are skipped.
#[derive(Serialize, ToSchema)]
struct MoveResponse {
    from: u64,
    to: u64,
    reason: String,
    #[schema(format = DateTime)]
    moved_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
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

/// A page of a period's orders, in counter order.
#[derive(Serialize, ToSchema)]
pub(super) struct ListResponse {
    series_id: String,
    period: String,
    /// Up to `limit` orders (of the caller's sources, for a caller bound to some).
    orders: Vec<OrderResponse>,
    /// Declared moves of the counter within this page, in counter order.
    moves: Vec<MoveResponse>,
    /// Pass it as `cursor` for the next page; `null` on the last.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

/// The codes of `list_orders`'s own errors (the document adds those of its parameters and body).
pub(super) const LIST_ORDERS_CODES: &[Code] = &[
    Code::InvalidPeriod,
    Code::InvalidLimit,
    Code::InvalidCursor,
    Code::SeriesNotFound,
];

/// List a period
///
/// The period's orders in counter order (void ones included) and the declared moves
/// among them, read from an index that follows writes within about a second. `limit`
/// counts orders; a caller bound to some sources sees their orders only.
#[utoipa::path(
    get,
    path = "/series/{series_id}/orders",
    tag = "series",
    params(SeriesPath, ListQuery),
    responses(
        (status = 200, description = "A page of the period", body = ListResponse),
    )
)]
pub(super) async fn list_orders(
    State(state): State<AppState>,
    Caller(access): Caller,
    PathParams(SeriesPath { series_id }): PathParams<SeriesPath>,
    QueryParams(query): QueryParams<ListQuery>,
) -> Result<Json<ListResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let limit = page_limit(
        query.limit.as_deref(),
        LISTING_PAGE.default,
        LISTING_PAGE.most,
    )? as usize;
    let cursor = query.cursor.as_deref().map(counter_after).transpose()?;
    let (series, period) = state
        .orders
        .period_of(&series_id, query.period.as_deref())
        .await?;
    let after = cursor.map_or(Ok(0), |cursor| cursor.open(&series_id, &period))?;
    let page = state
        .orders
        .list_period((series, period), after, (limit, MAX_PAGE_BYTES), &access)
        .await?;
    let mut orders = Vec::new();
    let mut moves = Vec::new();
    for entry in page.entries {
        match entry {
            Entry::Order(order) => orders.push((*order).into()),
            Entry::Move(moved) => moves.push(moved.into()),
        }
    }
    Ok(Json(ListResponse {
        series_id: series_id.to_string(),
        period: page.period.to_string(),
        orders,
        moves,
        next_cursor: page
            .next_after
            .map(|after| counter_page_token(&series_id, &page.period, after)),
    }))
}

/// Numbers of the period that no order holds, with their cause.
#[derive(Serialize, ToSchema)]
struct GapResponse {
    from: u64,
    to: u64,
    count: u64,
    /// `declared_move`, `reserved_unused` or `missing`.
    cause: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false, format = DateTime)]
    moved_at: Option<String>,
}

/// Where the hash chain stops holding.
#[derive(Serialize, ToSchema)]
struct BreakResponse {
    /// `entry`: the first stored entry whose hash does not hold; `head`: every link holds
    /// but the counter's head is not the last one.
    at: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    counter: Option<u64>,
    /// The entry's order number: left out for a move, and for another source's order
    /// when the caller is bound to some sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    order_number: Option<String>,
}

/// The period's hash chain, recomputed from the stored orders.
#[derive(Serialize, ToSchema)]
struct ChainResponse {
    /// So far, when the audit is not `complete`.
    intact: bool,
    links: u64,
    #[schema(required = true)]
    head: Option<String>,
    recomputed_head: String,
    #[schema(required = true)]
    first_break: Option<BreakResponse>,
}

/// An invoice of the period and the credit notes that correct it.
#[derive(Serialize, ToSchema)]
struct CreditedResponse {
    order_number: String,
    credit_notes: Vec<String>,
}

/// What one part of an audit lists at most, give or take a page read: gaps (a declared one
/// with its reason), credited invoices and their notes. Past it the part ends with a
/// cursor, so that its answer stays within Lambda's response payload.
pub const AUDIT_PART_LISTED: usize = 5_000;

/// Every number of a period accounted for, and its chain checked (gapless series).
#[derive(Serialize, ToSchema)]
pub(super) struct AuditResponse {
    series_id: String,
    period: String,
    gapless: bool,
    /// `false`: the period is larger than one request audits (in its time, or in the
    /// gaps and credit notes it lists); this part's gaps and credit notes are listed,
    /// counts and the chain run from the period's start, and `next_cursor` goes on.
    complete: bool,
    first_counter: u64,
    #[schema(required = true)]
    last_counter: Option<u64>,
    orders: u64,
    voided: u64,
    gaps: Vec<GapResponse>,
    /// `null` for a fast series.
    #[schema(required = true)]
    chain: Option<ChainResponse>,
    /// Invoices with credit notes, in this part (of the caller's sources, for a caller
    /// bound to some).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    credited: Vec<CreditedResponse>,
    /// Pass it as `cursor` for the next part; `null` when `complete`.
    #[schema(required = true)]
    next_cursor: Option<String>,
    /// Other series of the issuer that could render a text this one could (series
    /// defined before the rule that refuses it); left out when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    overlaps: Vec<OverlapResponse>,
}

/// The codes of `audit`'s own errors (the document adds those of its parameters and body).
pub(super) const AUDIT_CODES: &[Code] = &[
    Code::InvalidPeriod,
    Code::InvalidCursor,
    Code::SeriesNotFound,
];

/// Audit a period
///
/// A period larger than one request audits within its time is audited in parts: follow
/// `next_cursor` until `complete`. Memory stays bounded whatever the period's size. A
/// caller bound to some sources gets the counts, gaps and chain of every number, but the
/// order numbers of its sources' orders only (in `credited` and `first_break`).
#[utoipa::path(
    get,
    path = "/series/{series_id}/audit",
    tag = "series",
    params(SeriesPath, AuditQuery),
    responses(
        (status = 200, description = "The period's audit, or its next part", body = AuditResponse),
    )
)]
pub(super) async fn audit(
    State(state): State<AppState>,
    Caller(access): Caller,
    PathParams(SeriesPath { series_id }): PathParams<SeriesPath>,
    QueryParams(query): QueryParams<AuditQuery>,
) -> Result<Json<AuditResponse>, Problem> {
    let series_id = SeriesId::parse(&series_id)?;
    let cursor = query.cursor.as_deref().map(audit_from).transpose()?;
    let (series, period) = state
        .orders
        .period_of(&series_id, query.period.as_deref())
        .await?;
    let from = cursor
        .map(|cursor| cursor.open(&series_id, &period))
        .transpose()?;
    // Half the request's time: the rest is for the answer and a slow last page.
    let scope = AuditScope {
        from,
        until: Some(std::time::Instant::now() + state.request_timeout / 2),
        most_listed: Some(AUDIT_PART_LISTED),
    };
    let audit = state
        .orders
        .audit_period((series, period), scope, &|_| {})
        .await?;
    let overlaps = state.orders.overlaps(&audit.series).await?;
    let report = audit.report.shown_to(&access);
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
                ..
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
    let credited = report
        .credited
        .into_iter()
        .map(|invoice| CreditedResponse {
            order_number: invoice.order_number,
            credit_notes: invoice.credit_notes,
        })
        .collect();
    Ok(Json(AuditResponse {
        series_id: series_id.to_string(),
        period: audit.period.to_string(),
        gapless: audit.series.definition.gapless,
        complete: audit.resume.is_none(),
        first_counter: report.first_counter,
        last_counter: report.last_counter,
        orders: report.orders,
        voided: report.voided,
        gaps,
        chain,
        credited,
        next_cursor: audit
            .resume
            .map(|state| audit_page_token(&series_id, &audit.period, &state)),
        overlaps: OverlapResponse::list(overlaps),
    }))
}
