//! Every key of the table, in one place. Built only from validated ids and periods, which
//! cannot contain the `#` separator.

use tally_domain::ids::{
    DrawId, ExternalRef, HoldId, IssuerId, PayerId, PaymentId, SeriesId, SourceId,
};
use tally_domain::series::Period;

/// The global secondary index of a payer's purchases: `payer_pk` = [`payer`], `payer_sk` =
/// [`newest_first`].
pub(crate) const PAYER_INDEX: &str = "payer";
pub(crate) const PAYER_PK: &str = "payer_pk";
pub(crate) const PAYER_SK: &str = "payer_sk";
/// The global secondary index of lists: every draw ([`draw_list`]), a draw's purchases
/// ([`draw_purchases`]), its voided tickets ([`draw_voids`]), its unfinished bundles
/// ([`draw_unfinished`]), its instant-win awards
/// ([`draw_instant_awards`]), and the numbers of every
/// series that render as one text ([`number_text`]).
pub(crate) const LIST_INDEX: &str = "list";
pub(crate) const LIST_PK: &str = "list_pk";
pub(crate) const LIST_SK: &str = "list_sk";
/// The global secondary index that lists a period's numbers in counter order.
pub(crate) const PERIOD_INDEX: &str = "period";
/// Its partition key: the period's counter key, on number and move items only.
pub const PERIOD_KEY: &str = "period_key";
/// Its sort key.
pub const COUNTER: &str = "counter";

pub(crate) fn draw(draw: &DrawId) -> String {
    format!("DRAW#{draw}")
}

pub(crate) fn stripe(draw: &DrawId, stripe: u32) -> String {
    format!("DRAW#{draw}#STRIPE#{stripe}")
}

pub(crate) fn purchase(draw: &DrawId, payment: &PaymentId) -> String {
    format!("DRAW#{draw}#PURCHASE#{payment}")
}

pub(crate) fn hold(draw: &DrawId, hold: &HoldId) -> String {
    format!("DRAW#{draw}#HOLD#{hold}")
}

pub(crate) fn ticket(draw: &DrawId, number: u64) -> String {
    format!("DRAW#{draw}#TICKET#{number}")
}

/// A payer's allowance item in a capped draw, and the index partition of the payer's
/// purchases.
pub(crate) fn payer(draw: &DrawId, payer: &PayerId) -> String {
    format!("DRAW#{draw}#PAYER#{}", payer.key_part())
}

/// A payer's item across every draw: the limits and exclusion the payer set, and the
/// spend counted toward them.
pub(crate) fn payer_terms(payer: &PayerId) -> String {
    format!("PAYER#{}", payer.key_part())
}

/// A draw's published facts: its public counts as last read, for polls.
pub(crate) fn draw_facts(draw: &DrawId) -> String {
    format!("DRAW#{draw}#FACTS")
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

/// The instant-win award of one transaction, by the smallest winning number it records.
pub(crate) fn instant_award(draw: &DrawId, first: u64) -> String {
    format!("DRAW#{draw}#INSTANT#{first}")
}

/// The index partition of a draw's instant-win awards.
pub(crate) fn draw_instant_awards(draw: &DrawId) -> String {
    format!("DRAW#{draw}#INSTANT_WINS")
}

/// The item that lists a bundle under its draw while its ticket items are not all written.
pub(crate) fn unfinished(draw: &DrawId, payment: &PaymentId) -> String {
    format!("DRAW#{draw}#UNFINISHED#{payment}")
}

/// The index partition of a draw's unfinished bundles.
pub(crate) fn draw_unfinished(draw: &DrawId) -> String {
    format!("DRAW#{draw}#UNFINISHED")
}

/// The index partition of a draw's tickets voided after its freeze.
pub(crate) fn draw_late_voids(draw: &DrawId) -> String {
    format!("DRAW#{draw}#LATE_VOIDS")
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

/// The index partition of every number, of any series, whose text is `text` (checked to
/// hold letters, digits and `-_/.` only): a number is found by its text alone without a
/// scan and without a registry of series. `@` never appears in a series id.
pub(crate) fn number_text(text: &str) -> String {
    format!("SERIES#@number#{text}")
}

/// The item of an issuer: every series that names it, with what decides their texts.
/// `@` never appears in a series id.
pub(crate) fn issuer(issuer: &IssuerId) -> String {
    format!("SERIES#@issuer#{issuer}")
}

/// The mark that an authorised range of a series passed its low share, written once.
pub(crate) fn range_low(series: &SeriesId, from: u64) -> String {
    format!("SERIES#{series}#RANGE#{from}")
}

/// The counter of a period; also the index partition of the period's numbers.
pub(crate) fn series_counter(series: &SeriesId, period: &Period) -> String {
    format!("SERIES#{series}#PERIOD#{period}")
}

/// A number of a series: its series, period and counter. The rendered text is not part
/// of it, so no series can take, block or shadow another's numbers.
/// `period` is a validated [`Period`], or the text of one read back from a stored order.
pub(crate) fn order_number(
    series: &SeriesId,
    period: &impl std::fmt::Display,
    counter: u64,
) -> String {
    format!("ORDER#{series}#{period}#{counter}")
}

pub(crate) fn order_ref(source: &SourceId, external_ref: &ExternalRef) -> String {
    format!("SOURCE#{source}#REF#{external_ref}")
}

/// The journal's head: its last entry's number and hash.
pub(crate) fn journal_head() -> String {
    "JOURNAL#HEAD".to_owned()
}

/// Entry `number` of the journal.
pub(crate) fn journal_entry(number: u64) -> String {
    format!("JOURNAL#{number}")
}
