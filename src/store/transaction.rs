//! A transaction whose items each carry their role, recorded when the item is added, so
//! that a cancellation is read by what each item stands for, never by its position.

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::table::{Transaction, Verdict};
use super::{Store, StoreError};

/// The items of one transaction, each beside its role `R`.
pub(crate) struct Roled<R> {
    items: Vec<TransactWriteItem>,
    roles: Vec<R>,
    /// Index units of updates to indexed items (see [`Store::transact`]).
    index_updates: u64,
}

impl<R> Roled<R> {
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            items: Vec::with_capacity(capacity),
            roles: Vec::with_capacity(capacity),
            index_updates: 0,
        }
    }

    pub fn push(&mut self, role: R, item: TransactWriteItem) {
        self.items.push(item);
        self.roles.push(role);
    }

    /// The items, their roles and the index units, for a sender that adds items of its own.
    pub fn into_parts(self) -> (Vec<TransactWriteItem>, Vec<R>, u64) {
        (self.items, self.roles, self.index_updates)
    }

    /// Counts the index units of an update that changes an indexed item.
    pub fn add_index_updates(&mut self, units: u64) {
        self.index_updates += units;
    }
}

/// How a transaction of roled items ended.
pub(crate) enum RoledOutcome<R> {
    Committed,
    /// A transaction with the same token is still in flight: nothing was written.
    Busy,
    /// Each item's role with its verdict.
    Cancelled(Vec<(R, Verdict)>),
}

impl Store {
    /// Sends the items as one transaction (see [`Store::transact`]); a cancellation comes
    /// back with each verdict beside the role of its item.
    pub(crate) async fn transact_roled<R>(
        &self,
        tx: Roled<R>,
    ) -> Result<RoledOutcome<R>, StoreError> {
        let count = tx.roles.len();
        Ok(match self.transact(tx.items, tx.index_updates).await? {
            Transaction::Committed => RoledOutcome::Committed,
            Transaction::Busy => RoledOutcome::Busy,
            Transaction::Cancelled(verdicts) if verdicts.len() != count => {
                return Err(StoreError::Invariant(format!(
                    "a cancelled transaction of {count} items gave {} reasons",
                    verdicts.len()
                )));
            }
            Transaction::Cancelled(verdicts) => {
                RoledOutcome::Cancelled(tx.roles.into_iter().zip(verdicts).collect())
            }
        })
    }
}
