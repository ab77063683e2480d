//! A payer's item across every draw (`PAYER#<SHA-256 of the payer id>`): the limits and
//! the exclusion the payer set, under a version that every change of them moves, and the
//! spend counted per currency and span (`spend_<currency>_<span>`: the window and
//! the amount, so that each item keeps one count per span, whatever windows passed).
//!
//! A sale touches this item in the transaction that commits it, as one more item: an
//! update that counts the amount on the conditions that no exclusion runs, that the
//! limits are the version the sale planned with and that each window has room; or, for a
//! sale that counts nothing, a check that no exclusion runs.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};
use jiff::Timestamp;
use tally_domain::time::{Epoch, from_epoch_millis};

use super::codec::{Item, Reader, derived, key, n, s};
use super::error::build_error;
use super::transaction::{Roled, RoledOutcome};
use super::{Store, StoreError, keys, kind};
use tally_domain::ids::PayerId;
use tally_domain::journal::Draft;
use tally_domain::spend::{Currency, Exclusion, Limits, Money, Span, Spent, Window};

const VERSION: &str = "terms_version";
const LIMITS: &str = "limits";
/// Unix ms; an exclusion without end is stored as the largest time.
const EXCLUDED_UNTIL: &str = "excluded_until";
const OPEN_ENDED: i64 = i64::MAX;
const SPEND_PREFIX: &str = "spend_";
const WINDOW: &str = "window";
const AMOUNT: &str = "amount";

/// A payer's item as read: terms and counted spend. `version` 0: never set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PayerRecord {
    pub version: u64,
    pub limits: Limits,
    pub exclusion: Option<Exclusion>,
    pub spent: BTreeMap<(Currency, Span), Spent>,
}

fn spend_attribute(currency: Currency, span: Span) -> String {
    format!("{SPEND_PREFIX}{currency}_{}", span.as_str())
}

impl PayerRecord {
    pub(crate) fn decode(item: &Item) -> Result<Self, StoreError> {
        let r = Reader::new(item);
        // An end stored past the last time kept (late on 30 December 9999) reads as that
        // time: the exclusion still ends, later than anyone will see.
        let exclusion = r.opt_num::<i64>(EXCLUDED_UNTIL)?.map(|ms| Exclusion {
            until: (ms != OPEN_ENDED).then(|| {
                from_epoch_millis(ms).unwrap_or(if ms < 0 {
                    Timestamp::MIN
                } else {
                    Timestamp::MAX
                })
            }),
        });
        let mut spent = BTreeMap::new();
        for (name, value) in item {
            let Some(rest) = name.strip_prefix(SPEND_PREFIX) else {
                continue;
            };
            let (code, span) = rest.split_once('_').unwrap_or((rest, ""));
            let span = Span::ALL.into_iter().find(|p| p.as_str() == span);
            let (Ok(currency), Some(span), Ok(map)) = (Currency::parse(code), span, value.as_m())
            else {
                return Err(r.corrupt(format!("`{name}` is not a spend count")));
            };
            let slot = Reader::new(map);
            spent.insert(
                (currency, span),
                Spent {
                    window: Window::new(slot.str(WINDOW)?.to_owned()),
                    amount: slot.num(AMOUNT)?,
                },
            );
        }
        Ok(Self {
            version: r.opt_num(VERSION)?.unwrap_or(0),
            limits: r.opt_derived(LIMITS)?.unwrap_or_default(),
            exclusion,
            spent,
        })
    }
}

/// What a sale counts on the payer's item: `amount` in each window it falls in, checked
/// against the room each window's limit leaves (`None`: no limit).
#[derive(Debug, Clone)]
pub struct SpendCount {
    pub amount: Money,
    pub windows: Vec<(Span, Window, Option<u64>)>,
    /// Count the amount (a purchase, a hold's payment), or only check for room (a hold).
    pub count: bool,
}

/// What a sale's transaction asks of the payer's item.
#[derive(Debug, Clone)]
pub struct PayerGate {
    pub payer: PayerId,
    /// The writer's clock, Unix ms: an exclusion ending by then no longer refuses.
    pub now: i64,
    pub spend: Option<SpendCount>,
}

impl PayerGate {
    /// The payer's item once this gate committed on `known`: what the next sale plans from.
    pub fn applied(&self, known: &PayerRecord) -> PayerRecord {
        let mut after = known.clone();
        let Some(spend) = self.spend.as_ref().filter(|s| s.count) else {
            return after;
        };
        for (span, window, _) in &spend.windows {
            let counted = after
                .spent
                .entry((spend.amount.currency, *span))
                .or_insert_with(|| Spent {
                    window: window.clone(),
                    amount: 0,
                });
            if &counted.window != window {
                *counted = Spent {
                    window: window.clone(),
                    amount: 0,
                };
            }
            counted.amount += spend.amount.minor;
        }
        after
    }
}

/// A give-back of a voided purchase's amount to the windows it was counted in that still
/// run, each on the condition that its count is still for that window.
#[derive(Debug, Clone)]
pub struct SpendReturn {
    pub payer: PayerId,
    pub amount: Money,
    pub windows: Vec<(Span, Window)>,
}

/// Whether `expression` uses `placeholder` (`#s1` is not used by `#s10`).
fn uses(expression: &str, placeholder: &str) -> bool {
    expression.match_indices(placeholder).any(|(at, _)| {
        !expression[at + placeholder.len()..]
            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })
}

impl Store {
    /// The payer's item as it is now; a payer never seen has the default record.
    pub async fn get_payer(&self, payer: &PayerId) -> Result<PayerRecord, StoreError> {
        self.get_consistent(keys::payer_terms(payer))
            .await?
            .as_ref()
            .map(PayerRecord::decode)
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// Writes new limits or exclusion on the condition that the terms are still those of
    /// `known` (its version), with the operator's journal `entry` in the same transaction;
    /// `false` when they moved meanwhile (or the write met contention): read and decide
    /// again.
    pub async fn set_payer_terms(
        &self,
        payer: &PayerId,
        known: &PayerRecord,
        (limits, exclusion): (&Limits, Option<Exclusion>),
        entry: &Draft,
    ) -> Result<bool, StoreError> {
        let mut update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::payer_terms(payer))))
            .expression_attribute_names("#kind", kind::ATTRIBUTE)
            .expression_attribute_names("#payer", "payer_id")
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#limits", LIMITS)
            .expression_attribute_values(":kind", s(kind::PAYER))
            .expression_attribute_values(":payer", s(payer.as_str()))
            .expression_attribute_values(":next", n(known.version + 1))
            .expression_attribute_values(":limits", derived(limits)?);
        let mut sets = "#kind = :kind, #payer = :payer, #version = :next, #limits = :limits";
        if let Some(exclusion) = exclusion {
            let until = exclusion.until.map_or(OPEN_ENDED, |u| u.epoch_millis());
            update = update
                .expression_attribute_names("#excluded", EXCLUDED_UNTIL)
                .expression_attribute_values(":excluded", n(until));
            sets = "#kind = :kind, #payer = :payer, #version = :next, #limits = :limits, \
                    #excluded = :excluded";
        }
        update = match known.version {
            0 => update.condition_expression("attribute_not_exists(#version)"),
            version => update
                .condition_expression("#version = :version")
                .expression_attribute_values(":version", n(version)),
        };
        let update = update
            .update_expression(format!("SET {sets}"))
            .build()
            .map_err(build_error)?;
        let mut tx = Roled::with_capacity(1);
        tx.push((), TransactWriteItem::builder().update(update).build());
        Ok(matches!(
            self.transact_journaled(tx, entry).await?,
            RoledOutcome::Committed
        ))
    }

    /// The payer's item in a sale's transaction (see the module's header); `known`: the
    /// item as the sale planned from it. A failed condition returns the item.
    pub(crate) fn payer_gate(
        &self,
        gate: &PayerGate,
        known: &PayerRecord,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut names = BTreeMap::from([("#excluded".to_owned(), EXCLUDED_UNTIL.to_owned())]);
        let mut values = BTreeMap::from([(":now".to_owned(), n(gate.now))]);
        let mut conditions =
            vec!["(attribute_not_exists(#excluded) OR #excluded <= :now)".to_owned()];
        let mut sets = Vec::new();
        if let Some(spend) = &gate.spend {
            names.insert("#version".into(), VERSION.into());
            match known.version {
                0 => conditions.push("attribute_not_exists(#version)".into()),
                version => {
                    conditions.push("#version = :version".into());
                    values.insert(":version".into(), n(version));
                }
            }
            names.insert("#w".into(), WINDOW.into());
            names.insert("#a".into(), AMOUNT.into());
            values.insert(":amount".into(), n(spend.amount.minor));
            for (i, (span, window, limit)) in spend.windows.iter().enumerate() {
                let (slot, w) = (format!("#s{i}"), format!(":w{i}"));
                names.insert(slot.clone(), spend_attribute(spend.amount.currency, *span));
                values.insert(w.clone(), s(window.as_str()));
                if let Some(limit) = limit {
                    let left = format!(":left{i}");
                    values.insert(left.clone(), n(limit.saturating_sub(spend.amount.minor)));
                    conditions.push(format!(
                        "(attribute_not_exists({slot}) OR {slot}.#w <> {w} OR {slot}.#a <= {left})"
                    ));
                }
                if !spend.count {
                    continue;
                }
                let counted = known
                    .spent
                    .get(&(spend.amount.currency, *span))
                    .is_some_and(|c| &c.window == window);
                if counted {
                    conditions.push(format!("{slot}.#w = {w}"));
                    sets.push(format!("{slot}.#a = {slot}.#a + :amount"));
                } else {
                    // A count of an earlier window starts over; a later one is never
                    // overwritten (the sale plans again at a later moment).
                    let fresh = format!(":fresh{i}");
                    values.insert(
                        fresh.clone(),
                        AttributeValue::M(
                            [
                                (WINDOW.to_owned(), s(window.as_str())),
                                (AMOUNT.to_owned(), n(spend.amount.minor)),
                            ]
                            .into(),
                        ),
                    );
                    conditions.push(format!("(attribute_not_exists({slot}) OR {slot}.#w < {w})"));
                    sets.push(format!("{slot} = {fresh}"));
                }
            }
        }
        let condition = conditions.join(" AND ");
        // DynamoDB refuses a placeholder that no expression uses.
        let expressions = format!("{condition} {}", sets.join(" "));
        names.retain(|name, _| uses(&expressions, name));
        values.retain(|value, _| uses(&expressions, value));
        let item = if sets.is_empty() {
            let check = ConditionCheck::builder()
                .table_name(self.table())
                .set_key(Some(key(keys::payer_terms(&gate.payer))))
                .condition_expression(condition)
                .set_expression_attribute_names(Some(names.into_iter().collect()))
                .set_expression_attribute_values(Some(values.into_iter().collect()))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .build()
                .map_err(build_error)?;
            TransactWriteItem::builder().condition_check(check).build()
        } else {
            names.insert("#kind".into(), kind::ATTRIBUTE.into());
            names.insert("#payer".into(), "payer_id".into());
            values.insert(":kind".into(), s(kind::PAYER));
            values.insert(":payer".into(), s(gate.payer.as_str()));
            sets.push("#kind = :kind".into());
            sets.push("#payer = :payer".into());

            let update = Update::builder()
                .table_name(self.table())
                .set_key(Some(key(keys::payer_terms(&gate.payer))))
                .update_expression(format!("SET {}", sets.join(", ")))
                .condition_expression(condition)
                .set_expression_attribute_names(Some(names.into_iter().collect()))
                .set_expression_attribute_values(Some(values.into_iter().collect()))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .build()
                .map_err(build_error)?;
            TransactWriteItem::builder().update(update).build()
        };
        Ok(item)
    }

    /// The payer's item in a void's transaction: the amount leaves each window's count,
    /// on the condition that the count is still that window's.
    pub(crate) fn spend_return(&self, back: &SpendReturn) -> Result<TransactWriteItem, StoreError> {
        let mut update = Update::builder()
            .table_name(self.table())
            .set_key(Some(key(keys::payer_terms(&back.payer))))
            .expression_attribute_names("#w", WINDOW)
            .expression_attribute_names("#a", AMOUNT)
            .expression_attribute_values(":amount", n(back.amount.minor))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let (mut sets, mut conditions) = (Vec::new(), Vec::new());
        for (i, (span, window)) in back.windows.iter().enumerate() {
            let (slot, w) = (format!("#s{i}"), format!(":w{i}"));
            update = update
                .expression_attribute_names(&slot, spend_attribute(back.amount.currency, *span))
                .expression_attribute_values(&w, s(window.as_str()));
            conditions.push(format!("{slot}.#w = {w}"));
            sets.push(format!("{slot}.#a = {slot}.#a - :amount"));
        }
        let update = update
            .update_expression(format!("SET {}", sets.join(", ")))
            .condition_expression(conditions.join(" AND "))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().update(update).build())
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use jiff::SignedDuration;
    use tally_domain::spend::LimitChange;

    #[test]
    fn limits_are_stored_as_serde_derives_them_and_read_back() {
        let gbp = Currency::parse("GBP").unwrap();
        let wanted = LimitChange::from([(gbp, [(Span::Day, 500)].into())]);
        let none = Limits::default();
        let now = Timestamp::now();
        let limits = none
            .change(&none, &wanted, now, SignedDuration::from_hours(24))
            .unwrap();
        let raised = limits
            .change(
                &none,
                &LimitChange::from([(gbp, [(Span::Day, 900)].into())]),
                now,
                SignedDuration::from_hours(24),
            )
            .unwrap();
        let mut item = key("PAYER#x".into());
        item.insert(LIMITS.into(), derived(&raised).unwrap());
        item.insert(VERSION.into(), n(2));
        item.insert(EXCLUDED_UNTIL.into(), n(OPEN_ENDED));
        let read = PayerRecord::decode(&item).unwrap();
        assert_eq!(read.limits.limit(&none, gbp, Span::Day, now), Some(500));
        assert_eq!(read.limits, raised);
        assert_eq!(read.exclusion, Some(Exclusion { until: None }));
    }
}
