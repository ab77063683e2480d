//! Paginated lists: a payer's purchases, the draws. A page holds at most `limit` entries
//! (default 20, at most 100) and an opaque `cursor` for the next page, `null` at the end.

use axum::Json;
use axum::extract::State;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::super::AppState;
use super::super::extract::{PathParams, QueryParams};
use super::super::problem::Problem;
use super::draws::DrawFields;
use super::purchases::PurchaseResponse;
use crate::domain::draw::DrawStatus;
use crate::domain::ids::{DrawId, PayerId};
use crate::store::lists::After;
use crate::store::parse_timestamp;
use crate::tickets::DrawFilter;

const DEFAULT_LIMIT: u32 = 20;
const MAX_LIMIT: u32 = 100;

#[derive(Deserialize)]
pub(super) struct ListParams {
    limit: Option<String>,
    cursor: Option<String>,
    status: Option<String>,
}

impl ListParams {
    fn limit(&self) -> Result<u32, Problem> {
        match &self.limit {
            None => Ok(DEFAULT_LIMIT),
            Some(raw) => raw
                .parse()
                .ok()
                .filter(|l| (1..=MAX_LIMIT).contains(l))
                .ok_or_else(|| {
                    Problem::bad_request(
                        "invalid_limit",
                        format!("`limit` must be a whole number from 1 to {MAX_LIMIT}"),
                    )
                }),
        }
    }

    /// A cursor is the base64url of the last entry's index sort key (a time and an id);
    /// anything else is refused before it reaches the table.
    fn after(&self) -> Result<Option<After>, Problem> {
        let Some(raw) = &self.cursor else {
            return Ok(None);
        };
        let invalid =
            || Problem::bad_request("invalid_cursor", "`cursor` is not one this API gave");
        let text = URL_SAFE_NO_PAD
            .decode(raw)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(invalid)?;
        let (time, id) = text.rsplit_once('#').ok_or_else(invalid)?;
        if parse_timestamp(time).is_none() || DrawId::parse(id).is_err() {
            return Err(invalid());
        }
        Ok(Some(After(text)))
    }
}

fn cursor(next: Option<After>) -> Option<String> {
    next.map(|after| URL_SAFE_NO_PAD.encode(after.0))
}

#[derive(Serialize)]
pub(super) struct PurchasesBody {
    purchases: Vec<PurchaseResponse>,
    cursor: Option<String>,
}

pub(super) async fn payer_purchases(
    State(state): State<AppState>,
    PathParams((draw_id, payer_id)): PathParams<(String, String)>,
    QueryParams(params): QueryParams<ListParams>,
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

#[derive(Serialize)]
pub(super) struct DrawsBody {
    draws: Vec<DrawFields>,
    cursor: Option<String>,
}

pub(super) async fn list_draws(
    State(state): State<AppState>,
    QueryParams(params): QueryParams<ListParams>,
) -> Result<Json<DrawsBody>, Problem> {
    let filter = match params.status.as_deref() {
        None => DrawFilter::All,
        Some(raw) => DrawFilter::Status(DrawStatus::parse(raw).ok_or_else(|| {
            Problem::bad_request(
                "invalid_status",
                "`status` must be scheduled, open, closing or closed",
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
