//! Ticket routes: draws, purchases and voids, lists, the grid of free numbers, a draw's
//! public facts, winners.

mod availability;
mod draws;
mod facts;
mod holds;
mod instant;
mod lists;
mod payers;
mod purchases;
mod winners;

use axum::Extension;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use serde::Deserialize;
use utoipa::IntoParams;

use super::AppState;
use super::extract::{BodyLimit, MAX_BODY_BYTES};
use super::journal;
use super::problem::{Code, Problem};
use tally_domain::text::{FREE_TEXT_RULE, is_blank, refused_in_text};
use tally_domain::winners::MAX_PRIZES;

super::routes::route_table!(
    Tickets:
        draws::create_draw,
        lists::list_draws,
        draws::get_draw,
        draws::patch_draw,
        purchases::purchase,
        purchases::get_purchase,
        purchases::void_purchase,
        lists::payer_purchases,
        lists::draw_purchases,
        purchases::get_ticket,
        holds::create_hold,
        holds::get_hold,
        holds::release_hold,
        availability::get_availability,
        facts::get_facts,
        winners::get_winners,
        instant::get_instant_wins,
        payers::set_limits,
        payers::get_limits,
        payers::set_exclusion,
        // The operator journal, of tickets and orders alike.
        journal::get_journal;
    // Whole-draw computations: the close freezes the eligible list.
    Drawing:
        draws::close_draw,
        winners::draw_winners,
        winners::redraw,
        winners::get_eligible;
);

pub(super) fn routes() -> Router<AppState> {
    served()
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(Extension(BodyLimit(MAX_BODY_BYTES)))
}

/// The draw of a route.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(super) struct DrawPath {
    /// The draw's id.
    #[param(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    draw_id: String,
}

/// Free text that is stored and echoed: bounded, and without the characters no free
/// text may hold ([`refused_in_text`]).
pub(super) fn free_text(
    field: &'static str,
    value: Option<String>,
    max_len: usize,
) -> Result<Option<String>, Problem> {
    let Some(text) = value else { return Ok(None) };
    let rule = || format!("`{field}` must be 1 to {max_len} characters {FREE_TEXT_RULE}");
    if text.is_empty() || text.chars().count() > max_len {
        return Err(Problem::new(Code::invalid(field), rule()));
    }
    if let Some(refused) = refused_in_text(&text) {
        return Err(Problem::new(
            Code::invalid(field),
            format!("{}, not {refused}", rule()),
        ));
    }
    Ok(Some(text))
}

/// A name: free text ([`free_text`]) that is not blank, as an instant prize is not.
pub(super) fn name_text(
    field: &'static str,
    value: Option<String>,
    max_len: usize,
) -> Result<Option<String>, Problem> {
    let name = free_text(field, value, max_len)?;
    if name.as_deref().is_some_and(is_blank) {
        return Err(Problem::new(
            Code::invalid(field),
            format!("`{field}` must hold more than white space"),
        ));
    }
    Ok(name)
}

/// A number of prizes a draw may award: 1 to [`MAX_PRIZES`].
pub(super) fn valid_prizes(prizes: u32) -> Result<u32, Problem> {
    if !(1..=MAX_PRIZES).contains(&prizes) {
        return Err(Problem::new(
            Code::InvalidPrizes,
            format!("`prizes` must be between 1 and {MAX_PRIZES}, not {prizes}"),
        ));
    }
    Ok(prizes)
}

/// Free text that must be given.
pub(super) fn required_text(
    field: &'static str,
    value: Option<String>,
    max_len: usize,
) -> Result<String, Problem> {
    free_text(field, value, max_len)?.ok_or_else(|| {
        Problem::new(
            Code::invalid(field),
            format!("`{field}` is required: 1 to {max_len} characters"),
        )
    })
}
