//! Finding an order by its text: within a series, by reading the text against each of
//! the series' formats (one reading each at most) and reading the numbers that gives by
//! key; across series, the same for every series of the registry (one item). Never a
//! scan.

use super::{OrderError, OrderService};
use crate::domain::audit::Entry;
use crate::domain::ids::SeriesId;
use crate::domain::order::Order;
use crate::domain::series::{Period, Series};

impl OrderService {
    /// The order of `series_id` whose number is `text`.
    pub async fn find_in_series(
        &self,
        series_id: &SeriesId,
        text: &str,
    ) -> Result<Order, OrderError> {
        self.find_with_period(series_id, text)
            .await
            .map(|(_, order)| order)
    }

    /// The order whose number is `text`, in whichever series has it; several series (or
    /// format versions) with that text are a conflict naming every candidate. The
    /// registry is read each time, so a series defined a moment ago is a candidate too.
    pub async fn find_anywhere(&self, text: &str) -> Result<Order, OrderError> {
        let registry = self.store.series_registry().await?;
        single(self.find(&registry, text).await?).map(|(_, order)| order)
    }

    /// The order of a series whose number is `text`, with its period.
    pub(super) async fn find_with_period(
        &self,
        series_id: &SeriesId,
        text: &str,
    ) -> Result<(Period, Order), OrderError> {
        let mut series = self.load_series(series_id, self.now()).await?;
        let mut found = self.find(std::slice::from_ref(&series), text).await?;
        if found.is_empty() {
            let versions = series.formats.len();
            self.refresh_series(&mut series).await?;
            if series.formats.len() != versions {
                found = self.find(std::slice::from_ref(&series), text).await?;
            }
        }
        single(found)
    }

    /// Every order of `series` whose stored number is `text`.
    async fn find(
        &self,
        series: &[Series],
        text: &str,
    ) -> Result<Vec<(Period, Order)>, OrderError> {
        let now = self.now();
        let numbers: Vec<(SeriesId, Period, u64)> = series
            .iter()
            .flat_map(|s| {
                s.readings(text, now)
                    .into_iter()
                    .map(|(period, counter)| (s.series_id.clone(), period, counter))
            })
            .collect();
        if numbers.is_empty() {
            return Ok(Vec::new());
        }
        let entries = self.store.get_numbers(&numbers).await?;
        Ok(entries
            .into_iter()
            .filter_map(|entry| match entry {
                Entry::Order(order) if order.order_number == text => {
                    let period = numbers
                        .iter()
                        .find(|(s, p, c)| {
                            *s == order.series && p.as_str() == order.period && *c == order.counter
                        })
                        .map(|(_, p, _)| p.clone())?;
                    Some((period, order))
                }
                _ => None,
            })
            .collect())
    }
}

fn single(mut found: Vec<(Period, Order)>) -> Result<(Period, Order), OrderError> {
    match found.len() {
        0 => Err(OrderError::OrderNotFound),
        1 => Ok(found.remove(0)),
        _ => Err(OrderError::AmbiguousNumber(
            found.into_iter().map(|(_, order)| order).collect(),
        )),
    }
}
