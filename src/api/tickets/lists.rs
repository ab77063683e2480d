//! Paginated lists: a payer's purchases, a draw's purchases, the draws. A page holds at
//! most `limit` entries (default 20, at most 100) and an opaque `cursor` for the next
//! page, `null` at the end.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::extract::{PathParams, QueryParams};
use super::super::page_token::{list_after, list_page_token, purchases_from, purchases_page_token};
use super::super::problem::{Code, Problem};
use super::DrawPath;
use super::draws::DrawFields;
use super::purchases::PurchaseResponse;
use crate::limits::TICKET_PAGE;
use crate::store::lists::After;
use crate::tickets::{DrawFilter, PurchaseFilter};
use tally_domain::draw::DrawStatus;
use tally_domain::ids::{DrawId, PayerId};
use tally_domain::purchase::{Channel, PurchaseStatus};

/// A page of a list.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct PageParams {
    /// 1 to 100 entries, 20 by default.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    limit: Option<String>,
    /// The `cursor` of the previous page.
    #[param(pattern = "^[A-Za-z0-9_-]{1,120}$")]
    cursor: Option<String>,
}

/// A page of the draws, of one status or all.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct DrawListParams {
    /// Only the draws with this status as they read now.
    #[param(value_type = Option<DrawStatus>)]
    status: Option<String>,
    /// 1 to 100 entries, 20 by default.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    limit: Option<String>,
    /// The `cursor` of the previous page.
    #[param(pattern = "^[A-Za-z0-9_-]{1,120}$")]
    cursor: Option<String>,
}

/// A page of a draw's purchases, of one status and channel or all.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct DrawPurchasesParams {
    /// Only the purchases with this status (`void`: refunded or charged back).
    #[param(value_type = Option<PurchaseStatus>)]
    status: Option<String>,
    /// Only the purchases of this channel.
    #[param(value_type = Option<Channel>)]
    channel: Option<String>,
    /// 1 to 100 entries, 20 by default.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    limit: Option<String>,
    /// The `cursor` of the previous page.
    #[param(pattern = "^[A-Za-z0-9_-]{1,128}$")]
    cursor: Option<String>,
}

/// The page size a listing asks for: `limit`, or the default.
fn page_limit(limit: Option<&str>) -> Result<u32, Problem> {
    super::super::query::page_limit(limit, TICKET_PAGE.default, TICKET_PAGE.most)
}

impl PageParams {
    fn limit(&self) -> Result<u32, Problem> {
        page_limit(self.limit.as_deref())
    }

    fn after(&self) -> Result<Option<After>, Problem> {
        self.cursor.as_deref().map(list_after).transpose()
    }
}

fn cursor(next: Option<After>) -> Option<String> {
    next.map(list_page_token)
}

/// A page of purchases.
#[derive(Serialize, ToSchema)]
pub(super) struct PurchasesBody {
    purchases: Vec<PurchaseResponse>,
    /// For the next page; `null` at the end.
    #[schema(required = true)]
    cursor: Option<String>,
}

/// A payer of a draw.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct PayerPath {
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    draw_id: String,
    /// As the purchases gave it (compared in Unicode NFC), URL-encoded.
    #[param(
        pattern = "^[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0](?:[^\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0]{0,254}[^\\s\\x00-\\x1f\\x7f-\\x9f\\u00a0\\u00ad\\u034f\\u061c\\u1680\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0])?$"
    )]
    payer_id: String,
}

/// The codes of `payer_purchases`'s own errors (the document adds those of its parameters and body).
pub(super) const PAYER_PURCHASES_CODES: &[Code] =
    &[Code::InvalidLimit, Code::InvalidCursor, Code::DrawNotFound];

/// A buyer's purchases
///
/// Served by an index that follows the table within moments.
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/payers/{payer_id}/purchases",
    tag = "purchases",
    params(PayerPath, PageParams),
    responses(
        (status = 200, description = "A page of the payer's purchases", body = PurchasesBody),
    )
)]
pub(super) async fn payer_purchases(
    State(state): State<AppState>,
    PathParams(PayerPath { draw_id, payer_id }): PathParams<PayerPath>,
    QueryParams(params): QueryParams<PageParams>,
) -> Result<Json<PurchasesBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let payer = PayerId::parse(&payer_id)?;
    let page = state
        .tickets
        .payer_purchases(&draw_id, &payer, params.after()?.as_ref(), params.limit()?)
        .await?;
    Ok(Json(PurchasesBody {
        purchases: page.items.into_iter().map(Into::into).collect(),
        cursor: cursor(page.next),
    }))
}

/// The codes of `draw_purchases`'s own errors (the document adds those of its parameters and body).
pub(super) const DRAW_PURCHASES_CODES: &[Code] = &[
    Code::InvalidStatus,
    Code::InvalidChannel,
    Code::InvalidLimit,
    Code::InvalidCursor,
    Code::InvalidQuery,
    Code::DrawNotFound,
];

/// A draw's purchases
///
/// For reconciliation: every purchase of the draw, page by page, with its tickets and
/// status (voided ones included with their status, unless `status` filters them). In the order
/// of the draw's stripes (by the first stripe each purchase took), oldest first within a
/// stripe. Entries come from an index that follows the table within moments; each
/// purchase on a page is then read strongly consistent. A page may hold fewer than
/// `limit` purchases (a filter, empty stripes) while `cursor` says more follow.
#[utoipa::path(
    get,
    path = "/draws/{draw_id}/purchases",
    tag = "purchases",
    params(DrawPath, DrawPurchasesParams),
    responses(
        (status = 200, description = "A page of the draw's purchases", body = PurchasesBody),
    )
)]
pub(super) async fn draw_purchases(
    State(state): State<AppState>,
    PathParams(DrawPath { draw_id }): PathParams<DrawPath>,
    QueryParams(query): QueryParams<DrawPurchasesParams>,
) -> Result<Json<PurchasesBody>, Problem> {
    let draw_id = DrawId::parse(&draw_id)?;
    let filter = PurchaseFilter {
        status: query
            .status
            .as_deref()
            .map(|raw| {
                PurchaseStatus::parse(raw).ok_or_else(|| {
                    Problem::new(Code::InvalidStatus, "`status` must be active or void")
                })
            })
            .transpose()?,
        channel: query
            .channel
            .as_deref()
            .map(|raw| {
                Channel::parse(raw).ok_or_else(|| {
                    Problem::new(Code::InvalidChannel, "`channel` must be online or postal")
                })
            })
            .transpose()?,
    };
    let limit = page_limit(query.limit.as_deref())?;
    let from = query.cursor.as_deref().map(purchases_from).transpose()?;
    let page = state
        .tickets
        .draw_purchases(&draw_id, filter, from, limit)
        .await?;
    Ok(Json(PurchasesBody {
        purchases: page.items.into_iter().map(Into::into).collect(),
        cursor: page.next.map(purchases_page_token),
    }))
}

/// A page of the draws, newest first.
#[derive(Serialize, ToSchema)]
pub(super) struct DrawsBody {
    draws: Vec<DrawFields>,
    /// For the next page; `null` at the end.
    #[schema(required = true)]
    cursor: Option<String>,
}

/// The codes of `list_draws`'s own errors (the document adds those of its parameters and body).
pub(super) const LIST_DRAWS_CODES: &[Code] =
    &[Code::InvalidStatus, Code::InvalidLimit, Code::InvalidCursor];

/// List the draws
///
/// With a status filter a page may hold fewer than `limit` draws while `cursor` still
/// says more follow.
#[utoipa::path(
    get,
    path = "/draws",
    tag = "draws",
    params(DrawListParams),
    responses(
        (status = 200, description = "A page of draws", body = DrawsBody),
    )
)]
pub(super) async fn list_draws(
    State(state): State<AppState>,
    QueryParams(query): QueryParams<DrawListParams>,
) -> Result<Json<DrawsBody>, Problem> {
    let params = PageParams {
        limit: query.limit,
        cursor: query.cursor,
    };
    let filter = match query.status.as_deref() {
        None => DrawFilter::All,
        Some(raw) => DrawFilter::Status(DrawStatus::parse(raw).ok_or_else(|| {
            Problem::new(
                Code::InvalidStatus,
                "`status` must be scheduled, open, sold_out, closing or closed",
            )
        })?),
    };
    let page = state
        .tickets
        .list_draws(filter, params.after()?.as_ref(), params.limit()?)
        .await?;
    Ok(Json(DrawsBody {
        draws: page
            .items
            .into_iter()
            .map(|(draw, status)| DrawFields::new(draw, status))
            .collect(),
        cursor: cursor(page.next),
    }))
}
