//! DynamoDB's limits that shape Tally's requests, defined once. The domain receives them
//! as parameters; services split their work by them.

/// Items in one `TransactWriteItems` or `TransactGetItems`.
pub const MAX_TRANSACTION_ITEMS: usize = 100;
/// Keys in one `BatchGetItem`.
pub const MAX_BATCH_GET_KEYS: usize = 100;
/// Hold marks one stripe item may carry (`h<offset>`, at most 16 bytes each: about 4 KB).
/// Every write of a stripe pays one write unit per started kilobyte of its item, so the
/// item's size is bounded whatever number of holds came and went.
pub const STRIPE_HOLD_MARKS: u64 = 256;
