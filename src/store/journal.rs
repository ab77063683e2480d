//! The journal of operator actions in the table: its head (`JOURNAL#HEAD`, the last
//! entry's number and hash) and one item per entry (`JOURNAL#<n>`). An entry joins its
//! action's own transaction as two more items: the head moved on condition that it is
//! still where this process saw it, and the entry put where no item is. So an action
//! commits with its entry or not at all, two actions never take one number, and no
//! number is skipped.
//!
//! The head is one item that every operator action writes: a process keeps the head it
//! last saw, and learns the newer one from a cancellation's `ALL_OLD` when another
//! action moved it meanwhile, then tries again at once with the next number. A repeated
//! action (a client's repeat after a lost answer) finds its own change made and writes
//! nothing, so it is journalled once.

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::types::{ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update};

use super::codec::{Item, Reader, key, n, s, timestamp};
use super::error::build_error;
use super::limits::MAX_BATCH_GET_KEYS;
use super::table::{Transaction, Verdict, put_if_absent};
use super::transaction::{Roled, RoledOutcome};
use super::{PARTITION_KEY, Store, StoreError, keys, kind, retry};
use tally_domain::chain;
use tally_domain::journal::{Action, Draft, Entry, Head, Operator};

/// The items an entry adds to its action's transaction: the head and the entry.
pub(crate) const JOURNAL_ITEMS: usize = 2;

const LAST: &str = "last";
const HASH: &str = "hash";
const NUMBER: &str = "number";
const AT: &str = "at";
const CALLER: &str = "caller";
const ACTION: &str = "action";
const TARGET: &str = "target";
const CHANGE: &str = "change";

/// A page of the journal.
#[derive(Debug)]
pub struct JournalPage {
    pub entries: Vec<Entry>,
    /// The head's number when the page was read.
    pub last: u64,
    /// Where the next page starts; `None` once this one reaches `last`.
    pub next_from: Option<u64>,
}

/// The head this process saw last, shared by the clones of one store.
#[derive(Debug, Clone, Default)]
pub(crate) struct KnownHead(Arc<Mutex<Option<Head>>>);

impl KnownHead {
    fn get(&self) -> Option<Head> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `head` unless a later one is known already.
    fn learn(&self, head: Head) {
        let mut known = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if known.is_none_or(|k| k.last < head.last) {
            *known = Some(head);
        }
    }

    fn forget(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

pub(crate) fn encode_entry(entry: &Entry) -> Item {
    let mut item = key(keys::journal_entry(entry.number));
    item.insert(kind::ATTRIBUTE.into(), s(kind::JOURNAL_ENTRY));
    item.insert(NUMBER.into(), n(entry.number));
    item.insert(AT.into(), timestamp(entry.draft.at));
    item.insert(CALLER.into(), s(entry.draft.caller.as_str()));
    item.insert(ACTION.into(), s(entry.draft.action.as_str()));
    item.insert(TARGET.into(), s(&entry.draft.target));
    item.insert(CHANGE.into(), s(&entry.draft.change));
    item.insert(HASH.into(), s(chain::to_hex(&entry.hash)));
    item
}

pub(crate) fn decode_entry(item: &Item) -> Result<Entry, StoreError> {
    let r = Reader::new(item);
    let action = r.str(ACTION)?;
    Ok(Entry {
        number: r.num(NUMBER)?,
        draft: Draft {
            at: r.parsed(AT, super::codec::parse_timestamp)?,
            caller: Operator::named(r.str(CALLER)?),
            action: Action::parse(action)
                .ok_or_else(|| r.corrupt(format!("unknown journal action {action:?}")))?,
            target: r.str(TARGET)?.to_owned(),
            change: r.str(CHANGE)?.to_owned(),
        },
        hash: hash(&r)?,
    })
}

/// Room in a page for an entry's fields besides its target and change: its number,
/// time, caller, action and hash.
const ENTRY_FIELD_BYTES: usize = 1024;

/// At least what `entry` adds to a page's JSON.
fn listed_bytes(entry: &Entry) -> usize {
    ENTRY_FIELD_BYTES + entry.draft.target.len() + entry.draft.change.len()
}

fn hash(r: &Reader<'_>) -> Result<chain::Hash, StoreError> {
    let text = r.str(HASH)?;
    chain::from_hex(text).ok_or_else(|| r.corrupt(format!("{HASH} is not 64 hex digits")))
}

fn decode_head(item: &Item) -> Result<Head, StoreError> {
    let r = Reader::new(item);
    Ok(Head {
        last: r.num(LAST)?,
        hash: hash(&r)?,
    })
}

/// The head moved from `read` to `next`, on condition that it is still `read` (absent
/// before the first entry), returning it as it is when not.
fn head_update(table: &str, read: &Head, next: &Head) -> Result<TransactWriteItem, StoreError> {
    let mut update = Update::builder()
        .table_name(table)
        .set_key(Some(key(keys::journal_head())))
        .update_expression("SET #last = :next, #hash = :hash")
        .expression_attribute_names("#last", LAST)
        .expression_attribute_names("#hash", HASH)
        .expression_attribute_values(":next", n(next.last))
        .expression_attribute_values(":hash", s(chain::to_hex(&next.hash)))
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
    update = if read.last == 0 {
        update
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PARTITION_KEY)
    } else {
        update
            .condition_expression("#last = :read")
            .expression_attribute_values(":read", n(read.last))
    };
    Ok(TransactWriteItem::builder()
        .update(update.build().map_err(build_error)?)
        .build())
}

impl Store {
    /// The journal's head as stored (strongly consistent): [`Head::EMPTY`] before the first
    /// entry.
    pub async fn journal_head(&self) -> Result<Head, StoreError> {
        let head = match self.get_consistent(keys::journal_head()).await? {
            Some(item) => decode_head(&item)?,
            None => Head::EMPTY,
        };
        self.known_head().learn(head);
        Ok(head)
    }

    /// Up to `limit` entries from number `from`, with the head's number as read first
    /// (every entry up to it is written), ending with the entry that takes the page to
    /// `max_bytes` as [`listed_bytes`] counts. Entries are read 100 a request.
    pub async fn journal_page(
        &self,
        from: u64,
        (limit, max_bytes): (u32, usize),
    ) -> Result<JournalPage, StoreError> {
        let last = self.journal_head().await?.last;
        let mut page = JournalPage {
            entries: Vec::new(),
            last,
            next_from: None,
        };
        if from > last || limit == 0 {
            return Ok(page);
        }
        let to = last.min(from.saturating_add(u64::from(limit) - 1));
        let mut bytes = 0;
        let mut start = from;
        while start <= to {
            if bytes >= max_bytes {
                page.next_from = Some(start);
                return Ok(page);
            }
            let end = to.min(start + MAX_BATCH_GET_KEYS as u64 - 1);
            for entry in self.journal_entries(start, end).await? {
                if bytes >= max_bytes {
                    page.next_from = Some(entry.number);
                    return Ok(page);
                }
                bytes += listed_bytes(&entry);
                page.entries.push(entry);
            }
            start = end + 1;
        }
        page.next_from = (to < last).then_some(to + 1);
        Ok(page)
    }

    /// Entries `from` to `to` (inclusive) as stored, in number order; a missing number is
    /// simply absent.
    pub async fn journal_entries(&self, from: u64, to: u64) -> Result<Vec<Entry>, StoreError> {
        let keys = (from..=to).map(|n| key(keys::journal_entry(n))).collect();
        let mut entries = self
            .batch_get(keys)
            .await?
            .iter()
            .map(decode_entry)
            .collect::<Result<Vec<_>, _>>()?;
        entries.sort_by_key(|entry| entry.number);
        Ok(entries)
    }

    /// Sends the action's items `tx` with the journal entry of `draft`, as one
    /// transaction. When only the journal's head stopped it (another action took the
    /// number), the head is learnt and the transaction sent again with the next number;
    /// when an item of the action stopped it, the cancellation comes back with the
    /// action's roles alone, for the action to read as it did before it was journalled.
    pub(crate) async fn transact_journaled<R>(
        &self,
        tx: Roled<R>,
        draft: &Draft,
    ) -> Result<RoledOutcome<R>, StoreError> {
        let (items, roles, index_updates) = tx.into_parts();
        for attempt in retry::JOURNAL.each() {
            let head = match self.known_head().get() {
                Some(head) => head,
                None => self.journal_head().await?,
            };
            let (entry, next) = head.next(draft.clone());
            let mut all = items.clone();
            all.push(head_update(self.table(), &head, &next)?);
            all.push(put_if_absent(self.table(), encode_entry(&entry), false)?);
            let mut verdicts = match self.transact(all, index_updates).await? {
                Transaction::Committed => {
                    self.known_head().learn(next);
                    return Ok(RoledOutcome::Committed);
                }
                Transaction::Busy => return Ok(RoledOutcome::Busy),
                Transaction::Cancelled(verdicts)
                    if verdicts.len() == items.len() + JOURNAL_ITEMS =>
                {
                    verdicts
                }
                Transaction::Cancelled(verdicts) => {
                    return Err(StoreError::Invariant(format!(
                        "a cancelled transaction of {} items gave {} reasons",
                        items.len() + JOURNAL_ITEMS,
                        verdicts.len()
                    )));
                }
            };
            let entry_verdict = verdicts.pop();
            let head_verdict = verdicts.pop();
            let head_passed = matches!(head_verdict, Some(Verdict::Passed));
            match head_verdict {
                Some(Verdict::ConditionFailed(Some(item))) => {
                    self.known_head().learn(decode_head(&item)?);
                }
                // The head is gone or behind what this process saw: read it again.
                Some(Verdict::ConditionFailed(None)) => self.known_head().forget(),
                _ => {}
            }
            if verdicts.iter().any(|v| !matches!(v, Verdict::Passed)) {
                return Ok(RoledOutcome::Cancelled(
                    roles.into_iter().zip(verdicts).collect(),
                ));
            }
            // The entry's number is taken while the head said it was free.
            if head_passed && matches!(entry_verdict, Some(Verdict::ConditionFailed(_))) {
                return Err(StoreError::Invariant(format!(
                    "journal entry {} exists beyond the journal's head",
                    entry.number
                )));
            }
            retry::JOURNAL.pause(attempt).await;
        }
        Err(retry::JOURNAL.exhausted())
    }

    fn known_head(&self) -> &KnownHead {
        &self.journal
    }
}
