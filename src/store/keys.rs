//! Every key of the table, in one place. Built only from validated ids, which cannot
//! contain the `#` separator.

use crate::domain::ids::{DrawId, ExternalRef, PayerId, PaymentId, SeriesId, SourceId};

/// The global secondary index of a payer's purchases: `payer_pk` = [`payer`], `payer_sk` =
/// [`newest_first`].
pub(crate) const PAYER_INDEX: &str = "payer";
pub(crate) const PAYER_PK: &str = "payer_pk";
pub(crate) const PAYER_SK: &str = "payer_sk";
/// The global secondary index of lists: every draw ([`draw_list`]), a draw's purchases
/// ([`draw_purchases`]) and its voided tickets ([`draw_voids`]).
pub(crate) const LIST_INDEX: &str = "list";
pub(crate) const LIST_PK: &str = "list_pk";
pub(crate) const LIST_SK: &str = "list_sk";

pub(crate) fn draw(draw: &DrawId) -> String {
    format!("DRAW#{draw}")
}

pub(crate) fn stripe(draw: &DrawId, stripe: u32) -> String {
    format!("DRAW#{draw}#STRIPE#{stripe}")
}

pub(crate) fn purchase(draw: &DrawId, payment: &PaymentId) -> String {
    format!("DRAW#{draw}#PURCHASE#{payment}")
}

pub(crate) fn ticket(draw: &DrawId, number: u64) -> String {
    format!("DRAW#{draw}#TICKET#{number}")
}

/// A payer's allowance item in a capped draw, and the index partition of the payer's
/// purchases.
pub(crate) fn payer(draw: &DrawId, payer: &PayerId) -> String {
    format!("DRAW#{draw}#PAYER#{}", payer.key_part())
}

/// Pick `pick` (1-based) of a draw's winners.
pub(crate) fn pick(draw: &DrawId, pick: u64) -> String {
    format!("DRAW#{draw}#PICK#{pick}")
}

/// The index partition of every draw. No draw's key starts like it: a draw id is never
/// empty.
pub(crate) fn draw_list() -> String {
    "DRAW##LIST".to_owned()
}

/// The index partition of a draw's purchases whose first stripe is `stripe`: spread like
/// the sales, so that no index partition takes a whole draw's writes.
pub(crate) fn draw_purchases(draw: &DrawId, stripe: u32) -> String {
    format!("DRAW#{draw}#PURCHASES#{stripe}")
}

/// The index partition of a draw's voided tickets.
pub(crate) fn draw_voids(draw: &DrawId) -> String {
    format!("DRAW#{draw}#VOIDS")
}

/// An index sort key that orders by time, then id: RFC 3339 UTC times of one width sort
/// as text.
pub(crate) fn newest_first(at: &str, id: &str) -> String {
    format!("{at}#{id}")
}

/// A ticket number as an index sort key: zero-padded, so text order is number order.
pub(crate) fn ticket_sort(number: u64) -> String {
    format!("{number:08}")
}

pub(crate) fn series(series: &SeriesId) -> String {
    format!("SERIES#{series}")
}

pub(crate) fn series_counter(series: &SeriesId, period: &str) -> String {
    format!("SERIES#{series}#PERIOD#{period}")
}

/// Order numbers hold only letters, digits and `-_/.`: never the separator.
pub(crate) fn order_number(number: &str) -> String {
    format!("ORDER#{number}")
}

pub(crate) fn order_ref(source: &SourceId, external_ref: &ExternalRef) -> String {
    format!("SOURCE#{source}#REF#{external_ref}")
}
