//! The item operations every entity shares: consistent reads, batch reads, conditional
//! puts, transactions with their cancellation reasons read item by item.

use std::collections::HashSet;
use std::fmt;

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    KeysAndAttributes, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
};

use super::codec::Item;
use super::error::{build_error, conditional, is_throttling_code, sdk_error};
use super::keys::PERIOD_KEY;
use super::limits::MAX_BATCH_GET_KEYS;
use super::metrics::item_units;
use super::{PARTITION_KEY, Store, StoreError, retry};

/// Runs a single-item write again, after a jittered wait, while a transaction holds its
/// item (DynamoDB refuses the write with `TransactionConflictException`, writing nothing),
/// as [`retry::HELD_ITEM`] allows; then the contention is the answer.
pub(crate) async fn unless_held<T, F, Fut>(mut write: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    let mut attempt = 1;
    loop {
        match write().await {
            Err(StoreError::Contention { .. }) if retry::HELD_ITEM.allows_after(attempt) => {
                retry::HELD_ITEM.pause(attempt).await;
                attempt += 1;
            }
            Err(StoreError::Contention { .. }) => {
                return Err(StoreError::Contention { attempts: attempt });
            }
            other => return other,
        }
    }
}

/// What a conditional put found.
pub(crate) enum PutNew {
    Written,
    /// The key exists: the item as it is.
    Exists(Item),
}

/// Whether a create wrote a new item or found one with the same id.
#[derive(Debug)]
pub enum Inserted<T> {
    New,
    Existing(T),
}

/// 128 random bits, hex-encoded.
pub(crate) fn random_token() -> String {
    let bytes: [u8; 16] = rand::random();
    tally_domain::hex::encode(&bytes)
}

/// What one item of a cancelled transaction says, in item order.
pub(crate) enum Verdict {
    /// Not the cause of the cancellation.
    Passed,
    /// Its condition failed: the item as it was, when the write asked for it.
    ConditionFailed(Option<Item>),
    /// Another transaction or write held the item.
    Conflict,
    Throttled,
}

impl fmt::Debug for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Passed => f.write_str("Passed"),
            Self::ConditionFailed(old) => f
                .debug_tuple("ConditionFailed")
                .field(&ItemNames(old.as_ref()))
                .finish(),
            Self::Conflict => f.write_str("Conflict"),
            Self::Throttled => f.write_str("Throttled"),
        }
    }
}

/// An item in `Debug`: its attribute names, never their values (a draw item holds its
/// seed and permutation key).
pub(crate) struct ItemNames<'a>(pub(crate) Option<&'a Item>);

impl fmt::Debug for ItemNames<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(item) = self.0 else {
            return f.write_str("None");
        };
        let mut names: Vec<&str> = item.keys().map(String::as_str).collect();
        names.sort_unstable();
        write!(f, "Some(<item: {}>)", names.join(", "))
    }
}

/// How a transaction ended.
pub(crate) enum Transaction {
    Committed,
    /// A transaction with the same token is still in flight: nothing was written by this
    /// call; try again.
    Busy,
    Cancelled(Vec<Verdict>),
}

/// A new-item put for a transaction: `attribute_not_exists` on the key, returning the
/// item that blocks it when `return_old`.
pub(crate) fn put_if_absent(
    table: &str,
    item: Item,
    return_old: bool,
) -> Result<TransactWriteItem, StoreError> {
    let mut put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression("attribute_not_exists(#pk)")
        .expression_attribute_names("#pk", PARTITION_KEY);
    if return_old {
        put = put
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
    }
    Ok(TransactWriteItem::builder()
        .put(put.build().map_err(build_error)?)
        .build())
}

impl Store {
    pub(crate) async fn get_consistent(&self, pk: String) -> Result<Option<Item>, StoreError> {
        self.get(pk, true).await
    }

    /// One item; read eventually consistent, it costs half a read unit.
    pub(crate) async fn get(
        &self,
        pk: String,
        consistent: bool,
    ) -> Result<Option<Item>, StoreError> {
        let output = self
            .client()
            .get_item()
            .table_name(self.table())
            .set_key(Some(super::codec::key(pk)))
            .consistent_read(consistent)
            .send()
            .await
            .map_err(|e| sdk_error("GetItem", e))?;
        Ok(output.item)
    }

    /// Strongly consistent reads of any number of keys, in batches, following unprocessed
    /// keys. Missing items are simply absent from the answer. A key asked for twice is
    /// read once: DynamoDB refuses a batch that repeats one.
    pub(crate) async fn batch_get(&self, mut keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
        let mut asked = HashSet::new();
        keys.retain(
            |key| match key.get(PARTITION_KEY).and_then(|v| v.as_s().ok()) {
                Some(pk) => asked.insert(pk.clone()),
                None => true,
            },
        );
        let mut items = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(MAX_BATCH_GET_KEYS) {
            items.extend(self.batch_get_chunk(chunk.to_vec()).await?);
        }
        Ok(items)
    }

    async fn batch_get_chunk(&self, keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
        let mut items = Vec::new();
        let mut pending = Some(
            KeysAndAttributes::builder()
                .set_keys(Some(keys))
                .consistent_read(true)
                .build()
                .map_err(build_error)?,
        );
        let mut round = 0;
        while let Some(request) = pending.take() {
            if round > 0 {
                retry::BATCH_READ.pause(round).await;
            }
            round += 1;
            if round > retry::BATCH_READ.budget() {
                return Err(StoreError::Throttled);
            }
            let output = self
                .client()
                .batch_get_item()
                .request_items(self.table(), request)
                .send()
                .await
                .map_err(|e| sdk_error("BatchGetItem", e))?;
            if let Some(found) = output.responses().and_then(|r| r.get(self.table())) {
                items.extend(found.iter().cloned());
            }
            pending = output
                .unprocessed_keys()
                .and_then(|u| u.get(self.table()))
                .filter(|k| !k.keys().is_empty())
                .cloned();
        }
        Ok(items)
    }

    /// Writes an item unless its key exists; when it does, returns the item as it is (one
    /// request either way). A caller recognises its own earlier write, re-sent by the SDK
    /// after a lost response, by comparing what it wrote.
    pub(crate) async fn put_new(&self, item: Item) -> Result<PutNew, StoreError> {
        self.write_meter().single_write(item_units(&item));
        let result = self
            .client()
            .put_item()
            .table_name(self.table())
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PARTITION_KEY)
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match conditional(result)? {
            Ok(_) => Ok(PutNew::Written),
            Err(old) => old
                .map(PutNew::Exists)
                .ok_or_else(|| StoreError::Invariant("the existing item was not returned".into())),
        }
    }

    /// Sends one `TransactWriteItems`; a cancellation comes back with one verdict per item,
    /// in item order. The call carries a fresh `ClientRequestToken`: when the SDK re-sends
    /// it after a lost response, DynamoDB acknowledges a transaction that committed without
    /// writing it twice. A token is never reused for another call, so no call can be
    /// answered with an earlier call's outcome.
    ///
    /// `index_updates` are the index units of the updates that change an indexed item;
    /// new items entering the index are counted from the items themselves.
    pub(crate) async fn transact(
        &self,
        items: Vec<TransactWriteItem>,
        index_updates: u64,
    ) -> Result<Transaction, StoreError> {
        let (units, indexed) = transaction_units(&items);
        self.write_meter().transaction(units);
        let result = self
            .client()
            .transact_write_items()
            .set_transact_items(Some(items))
            .client_request_token(random_token())
            .send()
            .await;
        let err = match result {
            Ok(_) => {
                self.write_meter().index_write(indexed + index_updates);
                return Ok(Transaction::Committed);
            }
            Err(err) => err,
        };
        match err.as_service_error() {
            Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) => {
                let verdicts = cancelled
                    .cancellation_reasons()
                    .iter()
                    .enumerate()
                    .map(|(position, reason)| verdict(position, reason))
                    .collect::<Result<_, _>>()?;
                Ok(Transaction::Cancelled(verdicts))
            }
            Some(TransactWriteItemsError::TransactionInProgressException(_)) => {
                Ok(Transaction::Busy)
            }
            _ => Err(sdk_error("TransactWriteItems", err)),
        }
    }
}

/// The kilobyte-units of a transaction's items, and those of its new items that enter the
/// period index. A put is sized from its item; an update or check counts one unit (Tally
/// updates small items: counters, cursors, draws, void marks).
fn transaction_units(items: &[TransactWriteItem]) -> (u64, u64) {
    let mut units = 0;
    let mut indexed = 0;
    for item in items {
        match item.put() {
            Some(put) => {
                let size = item_units(put.item());
                units += size;
                if put.item().contains_key(PERIOD_KEY) {
                    indexed += size;
                }
            }
            None => units += 1,
        }
    }
    (units, indexed)
}

fn verdict(
    position: usize,
    reason: &aws_sdk_dynamodb::types::CancellationReason,
) -> Result<Verdict, StoreError> {
    match reason.code().unwrap_or("None") {
        "None" => Ok(Verdict::Passed),
        "ConditionalCheckFailed" => Ok(Verdict::ConditionFailed(reason.item().cloned())),
        "TransactionConflict" => Ok(Verdict::Conflict),
        code if is_throttling_code(code) => Ok(Verdict::Throttled),
        other => Err(StoreError::Service {
            operation: "TransactWriteItems",
            message: format!(
                "item {position} cancelled: {other}: {}",
                reason.message().unwrap_or("")
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::{AttributeValue, CancellationReason};

    fn reason(code: &str, item: Option<Item>) -> CancellationReason {
        CancellationReason::builder()
            .code(code)
            .set_item(item)
            .build()
    }

    #[test]
    fn a_throttled_item_is_told_apart_from_a_refused_one() {
        for code in [
            "ProvisionedThroughputExceeded",
            "ThrottlingError",
            "RequestLimitExceeded",
        ] {
            let told = verdict(0, &reason(code, None));
            assert!(matches!(told, Ok(Verdict::Throttled)), "{code}: {told:?}");
        }
        let refused = verdict(2, &reason("ValidationError", None)).unwrap_err();
        assert!(!refused.is_transient(), "{refused}");
        assert!(
            refused
                .to_string()
                .contains("item 2 cancelled: ValidationError")
        );
    }

    #[test]
    fn debug_shows_an_item_by_its_attribute_names_alone() {
        let item = Item::from([
            ("kind".to_owned(), AttributeValue::S("draw".into())),
            ("seed".to_owned(), AttributeValue::S("SEEDSEEDSEED".into())),
        ]);
        let told = verdict(0, &reason("ConditionalCheckFailed", Some(item))).unwrap();
        assert_eq!(
            format!("{told:?}"),
            "ConditionFailed(Some(<item: kind, seed>))"
        );
    }
}
