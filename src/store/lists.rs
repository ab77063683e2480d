//! Lists served by the keys-only global secondary indexes: a payer's purchases, every
//! draw, a draw's purchases by first stripe, a draw's voided tickets. A Query answers keys;
//! the items are then read by key, strongly consistent. An index follows the table within
//! moments: a purchase just made may be missing from a list for that long.

use aws_sdk_dynamodb::types::AttributeValue;

use super::codec::{Item, Reader, key, s};
use super::draws::decode_draw;
use super::error::sdk_error;
use super::instant::decode_award;
use super::purchases::decode_purchase;
use super::{PARTITION_KEY, Store, StoreError, keys};
use tally_domain::draw::Draw;
use tally_domain::ids::{DrawId, PayerId, PaymentId};
use tally_domain::instant::InstantAward;
use tally_domain::purchase::Purchase;

/// Where a page starts: after the entry with this index sort key (a time and an id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct After(pub String);

impl After {
    /// The id the entry ends with (a draw's or a payment's).
    pub fn id(&self) -> &str {
        self.0.rsplit_once('#').map_or("", |(_, id)| id)
    }
}

/// One page of a list and where the next one starts, if there is one.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next: Option<After>,
}

/// One index entry: the table key and the index sort key.
struct Entry {
    pk: String,
    sort: String,
}

/// A Query of one index partition.
struct IndexQuery<'a> {
    index: &'static str,
    pk_name: &'static str,
    sk_name: &'static str,
    partition: String,
    /// The table key of the entry `after` names, with its sort key.
    start: Option<(String, &'a After)>,
    newest_first: bool,
}

impl Store {
    /// Keys of up to `limit` entries of one index partition from `query.start` on, and
    /// whether more follow.
    async fn query_keys(
        &self,
        query: &IndexQuery<'_>,
        limit: i32,
    ) -> Result<(Vec<Entry>, bool), StoreError> {
        let start = query.start.as_ref().map(|(pk, after)| {
            let mut start = key(pk.clone());
            start.insert(query.pk_name.to_owned(), s(&query.partition));
            start.insert(query.sk_name.to_owned(), s(&after.0));
            start
        });
        let output = self
            .client()
            .query()
            .table_name(self.table())
            .index_name(query.index)
            .key_condition_expression("#pk = :pk")
            .expression_attribute_names("#pk", query.pk_name)
            .expression_attribute_values(":pk", s(&query.partition))
            .scan_index_forward(!query.newest_first)
            .limit(limit)
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| sdk_error("Query", e))?;
        let entries = output
            .items()
            .iter()
            .map(|item| {
                let r = Reader::new(item);
                Ok(Entry {
                    pk: r.str(PARTITION_KEY)?.to_owned(),
                    sort: r.str(query.sk_name)?.to_owned(),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let more = output.last_evaluated_key().is_some_and(|k| !k.is_empty());
        Ok((entries, more))
    }

    /// A page of entries read back by key, in index order. An entry whose item no longer
    /// matches the index is skipped.
    async fn page<T>(
        &self,
        query: IndexQuery<'_>,
        limit: u32,
        decode: impl Fn(&Item) -> Result<T, StoreError>,
    ) -> Result<Page<T>, StoreError> {
        let (entries, more) = self.query_keys(&query, limit as i32).await?;
        let mut found: std::collections::HashMap<String, Item> = self
            .batch_get(entries.iter().map(|e| key(e.pk.clone())).collect())
            .await?
            .into_iter()
            .filter_map(|item| match item.get(PARTITION_KEY) {
                Some(AttributeValue::S(pk)) => Some((pk.clone(), item)),
                _ => None,
            })
            .collect();
        let next = more
            .then(|| entries.last().map(|e| After(e.sort.clone())))
            .flatten();
        let items = entries
            .iter()
            .filter_map(|e| found.remove(&e.pk))
            .map(|item| decode(&item))
            .collect::<Result<_, _>>()?;
        Ok(Page { items, next })
    }

    /// A payer's purchases in a draw, newest first.
    pub async fn payer_purchases(
        &self,
        draw_id: &DrawId,
        payer: &PayerId,
        after: Option<&After>,
        limit: u32,
    ) -> Result<Page<Purchase>, StoreError> {
        let start = after
            .map(|a| payment_of(a).map(|p| (keys::purchase(draw_id, &p), a)))
            .transpose()?;
        let query = IndexQuery {
            index: keys::PAYER_INDEX,
            pk_name: keys::PAYER_PK,
            sk_name: keys::PAYER_SK,
            partition: keys::payer(draw_id, payer),
            start,
            newest_first: true,
        };
        self.page(query, limit, decode_purchase).await
    }

    /// A draw's purchases whose first stripe is `stripe`, oldest first.
    pub async fn stripe_purchases(
        &self,
        draw_id: &DrawId,
        stripe: u32,
        after: Option<&After>,
        limit: u32,
    ) -> Result<Page<Purchase>, StoreError> {
        let start = after
            .map(|a| payment_of(a).map(|p| (keys::purchase(draw_id, &p), a)))
            .transpose()?;
        let query = IndexQuery {
            index: keys::LIST_INDEX,
            pk_name: keys::LIST_PK,
            sk_name: keys::LIST_SK,
            partition: keys::draw_purchases(draw_id, stripe),
            start,
            newest_first: false,
        };
        self.page(query, limit, decode_purchase).await
    }

    /// Every draw, newest first.
    pub async fn draws(&self, after: Option<&After>, limit: u32) -> Result<Page<Draw>, StoreError> {
        let start = after
            .map(|a| {
                DrawId::parse(a.id())
                    .map(|d| (keys::draw(&d), a))
                    .map_err(|_| bad_cursor())
            })
            .transpose()?;
        let query = IndexQuery {
            index: keys::LIST_INDEX,
            pk_name: keys::LIST_PK,
            sk_name: keys::LIST_SK,
            partition: keys::draw_list(),
            start,
            newest_first: true,
        };
        self.page(query, limit, decode_draw).await
    }

    /// A page of a draw's instant-win awards, by smallest winning number.
    pub(crate) async fn instant_award_page(
        &self,
        draw_id: &DrawId,
        after: Option<&After>,
    ) -> Result<Page<InstantAward>, StoreError> {
        let start = match after {
            Some(after) => {
                let first: u64 = after.0.parse().map_err(|_| bad_cursor())?;
                Some((keys::instant_award(draw_id, first), after))
            }
            None => None,
        };
        let query = IndexQuery {
            index: keys::LIST_INDEX,
            pk_name: keys::LIST_PK,
            sk_name: keys::LIST_SK,
            partition: keys::draw_instant_awards(draw_id),
            start,
            newest_first: false,
        };
        self.page(query, 100, |item| {
            decode_award(item).map(|(_, award)| award)
        })
        .await
    }

    /// Every ticket of a draw voided before its freeze, in ascending order, as the index
    /// has them.
    pub async fn voided_tickets(&self, draw_id: &DrawId) -> Result<Vec<u64>, StoreError> {
        self.indexed_tickets(keys::draw_voids(draw_id)).await
    }

    /// The bundles of a draw listed as unfinished, as the index has them.
    pub async fn unfinished_bundles(&self, draw_id: &DrawId) -> Result<Vec<PaymentId>, StoreError> {
        let entries = self
            .partition_entries(keys::draw_unfinished(draw_id))
            .await?;
        entries
            .into_iter()
            .map(|entry| {
                PaymentId::parse(&entry.sort).map_err(|_| StoreError::Corrupt {
                    key: entry.pk,
                    reason: "an unfinished bundle's index key is not a payment id".into(),
                })
            })
            .collect()
    }

    async fn indexed_tickets(&self, partition: String) -> Result<Vec<u64>, StoreError> {
        let entries = self.partition_entries(partition).await?;
        entries
            .into_iter()
            .map(|entry| {
                entry.sort.parse().map_err(|_| StoreError::Corrupt {
                    key: entry.pk,
                    reason: "a voided ticket's index key is not a number".into(),
                })
            })
            .collect()
    }

    /// Every entry of one partition of the `list` index, in sort key order.
    async fn partition_entries(&self, partition: String) -> Result<Vec<Entry>, StoreError> {
        let mut all = Vec::new();
        let mut after: Option<(String, After)> = None;
        loop {
            let query = IndexQuery {
                index: keys::LIST_INDEX,
                pk_name: keys::LIST_PK,
                sk_name: keys::LIST_SK,
                partition: partition.clone(),
                start: after.as_ref().map(|(pk, a)| (pk.clone(), a)),
                newest_first: false,
            };
            let (entries, more) = self.query_keys(&query, 10_000).await?;
            after = entries
                .last()
                .filter(|_| more)
                .map(|last| (last.pk.clone(), After(last.sort.clone())));
            all.extend(entries);
            if after.is_none() {
                return Ok(all);
            }
        }
    }
}

/// The id after the last `#` of an index sort key.
fn payment_of(after: &After) -> Result<PaymentId, StoreError> {
    PaymentId::parse(after.id()).map_err(|_| bad_cursor())
}

fn bad_cursor() -> StoreError {
    StoreError::Invariant("a list cursor names no valid id".into())
}
