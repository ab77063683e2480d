//! Request and capacity counters for benchmarks, tests and logs.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;

/// An SDK interceptor that counts requests sent to DynamoDB. Clones share the count.
#[derive(Clone, Debug, Default)]
pub struct RequestCounter(Arc<AtomicU64>);

impl RequestCounter {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl Intercept for RequestCounter {
    fn name(&self) -> &'static str {
        "RequestCounter"
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// Write capacity units spent, by DynamoDB's pricing rules for items up to 1 KB: 1 per
/// single-item write (failed conditions included), 2 per item of a transaction (cancelled
/// ones included). DynamoDB Local reports its own figure, which undercounts transactions.
#[derive(Clone, Debug, Default)]
pub struct WriteMeter(Arc<AtomicU64>);

impl WriteMeter {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    pub(crate) fn single_write(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn transaction(&self, items: usize) {
        self.0.fetch_add(2 * items as u64, Ordering::Relaxed);
    }
}
