//! DynamoDB's limits that shape Tally's requests, defined once. The domain receives them
//! as parameters; services split their work by them.

/// Items in one `TransactWriteItems` or `TransactGetItems`.
pub const MAX_TRANSACTION_ITEMS: usize = 100;
/// Keys in one `BatchGetItem`.
pub const MAX_BATCH_GET_KEYS: usize = 100;
