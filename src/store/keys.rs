//! Every key of the table, in one place. Built only from validated ids, which cannot
//! contain the `#` separator.

use crate::domain::ids::{DrawId, PaymentId};

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

pub(crate) fn stripe_claims(draw: &DrawId) -> String {
    format!("DRAW#{draw}#CLAIMS")
}
