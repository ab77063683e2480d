//! What the DynamoDB endpoint itself can write on this machine: new items under
//! `attribute_not_exists`, no two writers on the same key, in the shapes Tally's writes
//! take. The ticket and order figures are read against these write rates: no way of
//! allocating numbers that writes the same items can go faster.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use tally::store::{COUNTER, PERIOD_KEY, Store};

/// One shape of write: `items` new items per request (1 = a single `PutItem`), sent by
/// `writers` concurrent writers.
#[derive(Clone, Copy)]
struct Shape {
    label: &'static str,
    writers: usize,
    items: usize,
    /// Every other item carries the period index's keys, as an order's number item does,
    /// so that the endpoint maintains the index as it does for orders.
    indexed: bool,
}

pub struct WriteRate {
    shape: Shape,
    requests: u64,
    elapsed: Duration,
}

impl WriteRate {
    pub fn requests_per_s(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }

    pub fn items_per_s(&self) -> f64 {
        self.requests_per_s() * self.shape.items as f64
    }
}

/// A conditional `PutItem` per write, as the naive ticket seller sends them.
const SINGLE_PUTS: Shape = Shape {
    label: "PutItem, 64 writers",
    writers: 64,
    items: 1,
    indexed: false,
};
/// A purchase of six tickets: the purchase record, one cursor and six tickets.
const PURCHASES: Shape = Shape {
    label: "TransactWriteItems of 8 items, 64 writers",
    writers: 64,
    items: 8,
    indexed: false,
};
/// A chunk of 50 orders: two items per order.
const ORDER_CHUNKS: Shape = Shape {
    label: "TransactWriteItems of 100 items, 4 writers",
    writers: 4,
    items: 100,
    indexed: true,
};

/// The same chunks from one writer at a time: what a series whose writers take turns on
/// one counter (gapless) can reach at most, where four writers use every core.
const SERIAL_ORDER_CHUNKS: Shape = Shape {
    label: "TransactWriteItems of 100 items, 1 writer",
    writers: 1,
    items: 100,
    indexed: true,
};

/// The write rate of each shape the ticket figures are read against (the order shapes are
/// measured around the order imports).
pub struct TicketWriteRates {
    pub single_puts: WriteRate,
    pub purchases: WriteRate,
}

/// Measures the ticket shapes for `duration` each, one after the other, and prints the
/// figures.
pub async fn measure_ticket_shapes(
    store: &Store,
    duration: Duration,
) -> Result<TicketWriteRates, String> {
    println!(
        "\nWrite write rate of the endpoint ({} s per shape: new items, attribute_not_exists, no contention)",
        duration.as_secs()
    );
    Ok(TicketWriteRates {
        single_puts: measure(store, SINGLE_PUTS, duration).await?,
        purchases: measure(store, PURCHASES, duration).await?,
    })
}

/// The 100-item shape alone, measured right before the order imports (the first of the
/// write rates around them, see `order_chunks_now`). It is measured once the endpoint writes
/// at a steady rate: a JVM that the tickets part did not warm up writes at about half its
/// speed at first, which would inflate the orders' share.
pub async fn measure_order_chunks(store: &Store, duration: Duration) -> Result<WriteRate, String> {
    println!(
        "\nWrite write rate before the orders ({} s: new items, attribute_not_exists, no contention)",
        duration.as_secs()
    );
    let warm_up = warm_up(store, ORDER_CHUNKS).await?;
    println!(
        "  (after {:.0} s of unmeasured writing, until the rate was steady)",
        warm_up.as_secs_f64()
    );
    measure(store, ORDER_CHUNKS, duration).await
}

/// The 100-item shape again from 4 writers, with no warm-up (the endpoint has just been
/// writing): measured between the order imports, so that each one is read against the
/// write rate on either side of it.
pub async fn order_chunks_now(store: &Store, duration: Duration) -> Result<WriteRate, String> {
    measure(store, ORDER_CHUNKS, duration).await
}

/// See `order_chunks_now`: one writer at a time, the bound of a gapless series.
pub async fn serial_order_chunks_now(
    store: &Store,
    duration: Duration,
) -> Result<WriteRate, String> {
    measure(store, SERIAL_ORDER_CHUNKS, duration).await
}

/// Longest unmeasured writing before a measurement.
const WARM_UP_LIMIT: Duration = Duration::from_secs(40);

/// Writes in `shape`, unmeasured, until two windows of 2 seconds in a row write within 10%
/// of each other (or for at most `WARM_UP_LIMIT`); returns how long that took.
async fn warm_up(store: &Store, shape: Shape) -> Result<Duration, String> {
    let started = Instant::now();
    let mut last: Option<f64> = None;
    while started.elapsed() < WARM_UP_LIMIT {
        let rate = write_for(store, shape, Duration::from_secs(2))
            .await?
            .items_per_s();
        if last.is_some_and(|last| (rate - last).abs() <= 0.1 * last) {
            break;
        }
        last = Some(rate);
    }
    Ok(started.elapsed())
}

/// Numbers the measurements of a run, so that a shape measured twice writes new keys.
static MEASUREMENTS: AtomicU64 = AtomicU64::new(0);

async fn measure(store: &Store, shape: Shape, duration: Duration) -> Result<WriteRate, String> {
    let rate = write_for(store, shape, duration).await?;
    println!(
        "  {:<44} {:>8.1} requests/s {:>9.0} items/s",
        shape.label,
        rate.requests_per_s(),
        rate.items_per_s()
    );
    Ok(rate)
}

/// Writes in `shape` for `duration`.
async fn write_for(store: &Store, shape: Shape, duration: Duration) -> Result<WriteRate, String> {
    let measurement = MEASUREMENTS.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    let deadline = started + duration;
    let mut writers = Vec::new();
    for writer in 0..shape.writers {
        let store = store.clone();
        writers.push(tokio::spawn(async move {
            let mut requests = 0u64;
            while Instant::now() < deadline {
                let keys: Vec<String> = (0..shape.items)
                    .map(|i| format!("CEILING#{measurement}#{writer}#{requests}#{i}"))
                    .collect();
                write(&store, keys, shape.indexed).await?;
                requests += 1;
            }
            Ok::<_, String>(requests)
        }));
    }
    let mut requests = 0;
    for writer in writers {
        requests += writer.await.map_err(|e| e.to_string())??;
    }
    Ok(WriteRate {
        shape,
        requests,
        elapsed: started.elapsed(),
    })
}

async fn write(store: &Store, keys: Vec<String>, indexed: bool) -> Result<(), String> {
    let item = |position: usize, key: String| {
        let mut item: HashMap<String, AttributeValue> = [
            ("kind".to_owned(), AttributeValue::S("write_rate".into())),
            ("pk".to_owned(), AttributeValue::S(key.clone())),
        ]
        .into_iter()
        .collect();
        if indexed && position.is_multiple_of(2) {
            item.insert(PERIOD_KEY.to_owned(), AttributeValue::S(key));
            item.insert(COUNTER.to_owned(), AttributeValue::N(position.to_string()));
        }
        item
    };
    if let [key] = keys.as_slice() {
        store
            .client()
            .put_item()
            .table_name(store.table())
            .set_item(Some(item(0, key.clone())))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await
            .map_err(|e| format!("PutItem failed: {e}"))?;
        return Ok(());
    }
    let items = keys
        .into_iter()
        .enumerate()
        .map(|(position, key)| {
            let put = Put::builder()
                .table_name(store.table())
                .set_item(Some(item(position, key)))
                .condition_expression("attribute_not_exists(pk)")
                .build()
                .map_err(|e| e.to_string())?;
            Ok(TransactWriteItem::builder().put(put).build())
        })
        .collect::<Result<Vec<_>, String>>()?;
    store
        .client()
        .transact_write_items()
        .set_transact_items(Some(items))
        .send()
        .await
        .map_err(|e| format!("TransactWriteItems failed: {e}"))?;
    Ok(())
}
