//! Voiding an order: it keeps its number (a gapless series stays gapless) and its link in
//! the chain, and is recorded void with a reason and a time, on its number item and its
//! reference item together. Voiding again with the same reason changes nothing.

use tracing::{info, instrument};

use super::{OrderError, OrderService};
use crate::store::orders::Voided;
use crate::store::retry;
use tally_domain::access::SourceAccess;
use tally_domain::ids::SeriesId;
use tally_domain::journal::{Action, Draft, Operator};
use tally_domain::order::{Order, Reason, Void};

impl OrderService {
    /// Voids the order of `series_id` numbered `text`, journalled under `by`; returns it
    /// as voided. An invoice with credit notes stays live: they correct it.
    #[instrument(skip(self, reason, access, by))]
    pub async fn void_order(
        &self,
        series_id: &SeriesId,
        text: &str,
        reason: Reason,
        access: &SourceAccess,
        by: &Operator,
    ) -> Result<Order, OrderError> {
        let (period, order) = self.find_with_period(series_id, text, access).await?;
        if let Some(void) = &order.void {
            return already(order.clone(), void, &reason);
        }
        if !order.credit_notes.is_empty() {
            return Err(OrderError::InvoiceCredited {
                number: order.order_number,
            });
        }
        let void = Void {
            reason,
            at: self.now(),
        };
        let entry = Draft::new(
            void.at,
            by,
            Action::OrderVoided,
            format!("series/{series_id}/order/{}", order.order_number),
            &serde_json::json!({
                "status": "void",
                "reason": void.reason.as_str(),
                "period": period.to_string(),
                "counter": order.counter,
            }),
        );
        for attempt in retry::ORDER_WRITE.each() {
            match self
                .store
                .void_order(series_id, &period, &order, &void, &entry)
                .await?
            {
                Voided::Voided => {
                    info!(number = %order.order_number, "order voided");
                    return Ok(Order {
                        void: Some(void),
                        ..order
                    });
                }
                Voided::Already(stored) => {
                    let earlier = stored.void.clone().expect("a void order");
                    return already(*stored, &earlier, &void.reason);
                }
                Voided::Credited(stored) => {
                    return Err(OrderError::InvoiceCredited {
                        number: stored.order_number,
                    });
                }
                Voided::Conflict => retry::ORDER_WRITE.pause(attempt).await,
            }
        }
        Err(retry::ORDER_WRITE.exhausted().into())
    }
}

/// A void repeated with its reason answers the voided order; another reason is refused.
fn already(order: Order, void: &Void, reason: &Reason) -> Result<Order, OrderError> {
    if void.reason == *reason {
        Ok(order)
    } else {
        Err(OrderError::AlreadyVoided {
            number: order.order_number,
            reason: void.reason.as_str().to_owned(),
        })
    }
}
