//! `tally register-series`: enters every series of the table on its issuer, as it is.
//! Run it once on a table whose series were defined before issuers existed: until a
//! series is entered, a new definition is not checked against it. Series that already
//! overlap keep numbering; each pair is printed once (and `GET /series/{id}` and the
//! audit flag them). It scans the whole table, so it reads every item once.

use tally::orders::{Entered, OrderService};
use tally::store::{Store, StoreConfig};
use tally_domain::series::Series;

use crate::outcome::{Failure, say};

pub async fn run(config: StoreConfig) -> Result<(), Failure> {
    let store = Store::connect(&config, None).await;
    let service = OrderService::new(store.clone());
    let mut entered: Vec<Series> = Vec::new();
    let mut before = 0;
    let mut from = None;
    loop {
        let page = store.scan_series(from).await.map_err(|e| e.to_string())?;
        for series in page.series {
            match service
                .enter_series(&series)
                .await
                .map_err(|e| format!("series {}: {e}", series.series_id))?
            {
                Entered::Now => entered.push(series),
                Entered::Already => before += 1,
            }
        }
        match page.next {
            Some(next) => from = Some(next),
            None => break,
        }
    }
    let mut overlapping = 0;
    for series in &entered {
        let overlaps = service.overlaps(series).await.map_err(|e| e.to_string())?;
        overlapping += usize::from(!overlaps.is_empty());
        // Each pair once, from the series whose id sorts first.
        for overlap in overlaps.iter().filter(|o| series.series_id < o.series) {
            say!(
                "series {} and {} of issuer {} could both render {} ({} and {})",
                series.series_id,
                overlap.series,
                overlap.issuer,
                overlap.example,
                overlap.format,
                overlap.other_format
            )?;
        }
    }
    say!(
        "{} series entered on their issuers ({overlapping} overlapping another), {before} entered before",
        entered.len()
    )?;
    Ok(())
}
