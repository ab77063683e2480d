//! Every key of the table, in one place. Built only from validated ids, which cannot
//! contain the `#` separator.

use crate::domain::ids::{DrawId, ExternalRef, PaymentId, SeriesId, SourceId};

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
