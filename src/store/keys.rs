//! Every key of the table, in one place. Built only from validated ids and periods, which
//! cannot contain the `#` separator.

use crate::domain::ids::{DrawId, ExternalRef, PaymentId, SeriesId, SourceId};
use crate::domain::series::Period;

/// The global secondary index that lists a period's numbers in counter order.
pub(crate) const PERIOD_INDEX: &str = "ByPeriod";
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

pub(crate) fn ticket(draw: &DrawId, number: u64) -> String {
    format!("DRAW#{draw}#TICKET#{number}")
}

pub(crate) fn series(series: &SeriesId) -> String {
    format!("SERIES#{series}")
}

/// The registry of every series and its formats, read to find a number across series
/// without a scan. `@` never appears in a series id.
pub(crate) fn series_registry() -> String {
    "SERIES#@registry".to_owned()
}

/// The counter of a period; also the index partition of the period's numbers.
pub(crate) fn series_counter(series: &SeriesId, period: &Period) -> String {
    format!("SERIES#{series}#PERIOD#{period}")
}

/// A number of a series: its series, period and counter. The rendered text is not part
/// of it, so no series can take, block or shadow another's numbers.
pub(crate) fn order_number(series: &SeriesId, period: &Period, counter: u64) -> String {
    format!("ORDER#{series}#{period}#{counter}")
}

pub(crate) fn order_ref(source: &SourceId, external_ref: &ExternalRef) -> String {
    format!("SOURCE#{source}#REF#{external_ref}")
}
