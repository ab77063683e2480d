//! The operator journal, read in number order from any number: the entries' numbers are
//! consecutive, so a page starts `from` a number and the answer names the number the next
//! page starts from. It is an operator's record, read whole: where callers are bound to
//! sources, only a caller bound to every source reads it (never a page with entries left
//! out, which would read like a gap).

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::AppState;
use super::caller::Caller;
use super::extract::QueryParams;
use super::problem::{Code, Problem};
use super::query::MAX_PAGE_BYTES;
use super::query::page_limit;
use super::timestamp;
use crate::limits::JOURNAL_PAGE;
use tally_domain::chain;
use tally_domain::journal::{Action, Entry};

/// A page of the journal.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(super) struct JournalQuery {
    /// The number of the first entry to answer, from 1; 1 by default.
    #[param(value_type = Option<u64>, minimum = 1)]
    from: Option<String>,
    /// 1 to 1,000 entries, 100 by default.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1_000)]
    limit: Option<String>,
}

/// One operator action as the journal records it.
#[derive(Serialize, ToSchema)]
pub(super) struct JournalEntryResponse {
    /// Consecutive from 1 across the deployment; never reset, never skipped.
    number: u64,
    #[schema(format = DateTime)]
    at: String,
    /// The IAM principal's ARN, `jwt:<token issuer>#<claim value>`, or `local`.
    caller: String,
    action: Action,
    /// What the action was on, e.g. `draw/summer-2026/purchase/pi_1`.
    target: String,
    /// What changed, as the JSON text the hash covers.
    change: String,
    /// SHA-256 of the entry before's hash and this entry (docs/journal.md), hex.
    hash: String,
}

impl From<Entry> for JournalEntryResponse {
    fn from(entry: Entry) -> Self {
        Self {
            number: entry.number,
            at: timestamp(entry.draft.at),
            caller: entry.draft.caller.as_str().to_owned(),
            action: entry.draft.action,
            target: entry.draft.target,
            change: entry.draft.change,
            hash: chain::to_hex(&entry.hash),
        }
    }
}

/// A page of the journal.
#[derive(Serialize, ToSchema)]
pub(super) struct JournalPageResponse {
    /// Up to `limit` entries in number order, from `from`.
    entries: Vec<JournalEntryResponse>,
    /// The number of the last entry so far (0 before the first).
    last: u64,
    /// Pass it as `from` for the next page; `null` once the page reaches `last`.
    #[schema(required = true)]
    next_from: Option<u64>,
}

/// The codes of `get_journal`'s own errors (the document adds those of its parameters).
pub(super) const GET_JOURNAL_CODES: &[Code] = &[
    Code::InvalidLimit,
    Code::member("from"),
    Code::IdentityRequired,
    Code::JournalNotAllowed,
];

/// Read the operator journal
///
/// Operator actions (draws created, changed, closed and drawn, redraws, purchases and
/// orders voided, series defined and changed, counters moved, ranges changed, payers'
/// limits and exclusions set), one entry each, written in the action's own transaction and
/// numbered from 1 without a gap; buyers' purchases and holds are not in it. Where the
/// deployment binds callers to sources, only a caller bound to every source (`*`) reads
/// it: every page is whole, never filtered. `tally journal verify` checks the numbers and
/// the hash chain.
#[utoipa::path(
    get,
    path = "/journal",
    tag = "journal",
    params(JournalQuery),
    responses(
        (status = 200, description = "A page of the journal", body = JournalPageResponse),
    )
)]
pub(super) async fn get_journal(
    State(state): State<AppState>,
    Caller(access): Caller,
    QueryParams(query): QueryParams<JournalQuery>,
) -> Result<Json<JournalPageResponse>, Problem> {
    // The journal names every draw, series, order and payer key acted on: a caller bound
    // to some sources would read other sources' orders in it, so it reads none of it.
    if access.is_bound() {
        return Err(Problem::new(
            Code::JournalNotAllowed,
            "the operator journal is read by callers bound to every source (`*`) only",
        ));
    }
    let limit = page_limit(
        query.limit.as_deref(),
        JOURNAL_PAGE.default,
        JOURNAL_PAGE.most,
    )?;
    let from = match query.from.as_deref() {
        None => 1,
        Some(raw) => raw.parse().ok().filter(|&n: &u64| n >= 1).ok_or_else(|| {
            Problem::new(
                Code::invalid("from"),
                "`from` must be an entry's number: a whole number from 1",
            )
        })?,
    };
    let page = state
        .tickets
        .store()
        .journal_page(from, (limit, MAX_PAGE_BYTES))
        .await?;
    Ok(Json(JournalPageResponse {
        entries: page.entries.into_iter().map(Into::into).collect(),
        last: page.last,
        next_from: page.next_from,
    }))
}
