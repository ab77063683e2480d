//! Credit notes: each order of a series that credits another names the invoice it
//! corrects. The invoice is found here by its number in the credited series, among the
//! orders the caller may read: another source's invoice is not found, void or not, so a
//! caller bound to its sources can neither block another's void nor learn which of its
//! invoices exist. The transaction that numbers the credit note adds it to the invoice on
//! condition that the invoice is still there and live, so a credit note never points at
//! a void invoice and an invoice with credit notes is never voided.

use std::collections::{BTreeSet, VecDeque};

use super::batch::Batch;
use super::outcome::RejectionCode;
use super::{OrderError, OrderService};
use crate::store::orders::{InvoiceRef, InvoiceRefusal};
use tally_domain::access::SourceAccess;
use tally_domain::order::MAX_CREDIT_NOTES;

impl OrderService {
    /// Finds the invoice of every credit note of `queue` among those `access` may read;
    /// those whose invoice is missing (or not the caller's to read) or void are refused.
    /// Returns the credit notes left to number.
    pub(super) async fn find_invoices(
        &self,
        batch: &mut Batch,
        queue: VecDeque<usize>,
        access: &SourceAccess,
    ) -> Result<VecDeque<usize>, OrderError> {
        let Some(credited) = batch.series.definition.credits.clone() else {
            return Ok(queue);
        };
        let mut credited = self.load_series(&credited, batch.now).await?;
        let texts: BTreeSet<String> = queue
            .iter()
            .filter_map(|&index| batch.new_order(index).corrects.clone())
            .collect();
        let wanted: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut found = self.find(&credited, &wanted).await?;
        if found.len() < texts.len() {
            // A format of the credited series this process has not read yet.
            self.refresh_series(&mut credited).await?;
            found = self.find(&credited, &wanted).await?;
        }
        for invoices in found.values_mut() {
            invoices.retain(|(_, invoice)| access.allows(&invoice.source));
        }
        let mut kept = VecDeque::new();
        for index in queue {
            let text = batch
                .new_order(index)
                .corrects
                .clone()
                .expect("a credit note names its invoice");
            match found.get(&text).map(Vec::as_slice) {
                Some([(_, invoice)]) if let Some(refusal) = InvoiceRefusal::of_read(invoice) => {
                    refuse(batch, index, refusal)
                }
                Some([(period, invoice)]) => {
                    batch.invoices[index] = Some(InvoiceRef {
                        series: credited.series_id.clone(),
                        period: period.clone(),
                        order: invoice.clone(),
                    });
                    kept.push_back(index);
                }
                Some([_, _, ..]) => batch.reject(
                    index,
                    RejectionCode::InvoiceNotFound,
                    format!(
                        "{text} is the number of several invoices of series {}",
                        credited.series_id
                    ),
                ),
                _ => refuse(batch, index, InvoiceRefusal::Gone),
            }
        }
        Ok(kept)
    }
}

/// Refuses the credit note at `index` for what its invoice is.
pub(super) fn refuse(batch: &mut Batch, index: usize, refusal: InvoiceRefusal) {
    let credited = batch
        .series
        .definition
        .credits
        .as_ref()
        .map_or_else(String::new, ToString::to_string);
    let invoice = batch.new_order(index).corrects.clone().unwrap_or_default();
    let (code, detail) = match refusal {
        InvoiceRefusal::Gone => (
            RejectionCode::InvoiceNotFound,
            format!("series {credited} has no invoice {invoice}"),
        ),
        InvoiceRefusal::Void => (
            RejectionCode::InvoiceVoid,
            format!(
                "invoice {invoice} of series {credited} is void: a credit note corrects a live invoice"
            ),
        ),
        InvoiceRefusal::Full => (
            RejectionCode::CreditNotesFull,
            format!(
                "invoice {invoice} of series {credited} has {MAX_CREDIT_NOTES} credit notes, as many as one invoice takes"
            ),
        ),
    };
    batch.invoices[index] = None;
    batch.reject(index, code, detail);
}
