//! Finding an order by its text: within a series, by reading the text against each of
//! the series' formats (one reading each at most) and reading the numbers that gives by
//! key; across series, through the index of number texts. Never a scan. A caller bound to
//! some sources finds only their orders.

use std::collections::HashMap;

use super::{OrderError, OrderService};
use tally_domain::access::SourceAccess;
use tally_domain::audit::Entry;
use tally_domain::ids::SeriesId;
use tally_domain::order::Order;
use tally_domain::series::{Period, Series};

impl OrderService {
    /// The order of `series_id` whose number is `text`.
    pub async fn find_in_series(
        &self,
        series_id: &SeriesId,
        text: &str,
        access: &SourceAccess,
    ) -> Result<Order, OrderError> {
        self.find_with_period(series_id, text, access)
            .await
            .map(|(_, order)| order)
    }

    /// The order whose number is `text`, in whichever series has it; several series (or
    /// format versions) with that text are a conflict naming every candidate. The index
    /// of texts follows the table within about a second.
    pub async fn find_anywhere(
        &self,
        text: &str,
        access: &SourceAccess,
    ) -> Result<Order, OrderError> {
        let found = self
            .store
            .orders_by_text(text)
            .await?
            .into_iter()
            .filter(|order| access.allows(&order.source))
            .collect();
        single(found, |order| order)
    }

    /// The order of a series whose number is `text`, with its period.
    pub(super) async fn find_with_period(
        &self,
        series_id: &SeriesId,
        text: &str,
        access: &SourceAccess,
    ) -> Result<(Period, Order), OrderError> {
        let mut series = self.load_series(series_id, self.now()).await?;
        let mut found = self.find(&series, &[text]).await?;
        if found.is_empty() {
            let versions = series.formats.len();
            self.refresh_series(&mut series).await?;
            if series.formats.len() != versions {
                found = self.find(&series, &[text]).await?;
            }
        }
        let found = found
            .remove(text)
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, order)| access.allows(&order.source))
            .collect();
        single(found, |(_, order)| order)
    }

    /// The orders of `series` whose stored number is one of `texts`, by text: every
    /// reading of every text is read in one batch.
    pub(super) async fn find(
        &self,
        series: &Series,
        texts: &[&str],
    ) -> Result<HashMap<String, Vec<(Period, Order)>>, OrderError> {
        let now = self.now();
        let numbers: Vec<(SeriesId, Period, u64)> = texts
            .iter()
            .flat_map(|text| series.readings(text, now))
            .map(|(period, counter)| (series.series_id.clone(), period, counter))
            .collect();
        let mut found: HashMap<String, Vec<(Period, Order)>> = HashMap::new();
        if numbers.is_empty() {
            return Ok(found);
        }
        for entry in self.store.get_numbers(&numbers).await? {
            let Entry::Order(order) = entry else { continue };
            if !texts.contains(&order.order_number.as_str()) {
                continue;
            }
            let period = numbers
                .iter()
                .find(|(_, p, c)| p.as_str() == order.period && *c == order.counter)
                .map(|(_, p, _)| p.clone());
            if let Some(period) = period {
                found
                    .entry(order.order_number.clone())
                    .or_default()
                    .push((period, *order));
            }
        }
        Ok(found)
    }
}

/// The one order found; none is not found, several are ambiguous.
fn single<T>(mut found: Vec<T>, order: impl Fn(T) -> Order) -> Result<T, OrderError> {
    match found.len() {
        0 => Err(OrderError::OrderNotFound),
        1 => Ok(found.remove(0)),
        _ => Err(OrderError::AmbiguousNumber(
            found.into_iter().map(order).collect(),
        )),
    }
}
