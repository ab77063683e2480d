//! The audit of one period, computed from what is stored: its entries (orders and
//! declared moves) in counter order, and its counter. Every number from the period's
//! first counter to its last is an order, part of a declared move, or a gap with a cause;
//! in a gapless series the hash chain is recomputed and its first broken link named.
//!
//! Entries are folded one at a time ([`AuditRun`]): an audit keeps counts, the last hash
//! and what it reports, never the entries, so its memory does not grow with the period.
//! A run can stop after any entry and go on later from a small [`AuditState`].

mod run;

use super::access::SourceAccess;
use super::ids::SourceId;
use super::order::{Move, Order};

pub use run::{AuditRun, AuditState};

/// One stored entry of a period.
#[derive(Debug, Clone)]
pub enum Entry {
    /// Boxed: an order (with its data) is several times the size of a move.
    Order(Box<Order>),
    Move(Move),
}

impl Entry {
    /// The first counter the entry covers.
    pub fn counter(&self) -> u64 {
        match self {
            Self::Order(order) => order.counter,
            Self::Move(moved) => moved.from,
        }
    }
}

/// Why numbers of a period hold no order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapCause {
    /// The counter was moved forward on purpose, with a reason.
    DeclaredMove,
    /// Fast series: the numbers were reserved by a process that did not write them (it
    /// stopped or failed, or holds them in its block for its next orders).
    ReservedUnused,
    /// Gapless series: a number below the counter has no order and no move. Tally never
    /// leaves one; it means an order was deleted from the table.
    Missing,
}

impl GapCause {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DeclaredMove => "declared_move",
            Self::ReservedUnused => "reserved_unused",
            Self::Missing => "missing",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub from: u64,
    pub to: u64,
    pub cause: GapCause,
    /// The move that declared it.
    pub declared: Option<Move>,
}

/// Where the chain of a period breaks first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Break {
    /// The stored hash of this entry is not the hash of its stored content and its
    /// predecessor's stored hash: the entry (or, if only its hash was rewritten to match,
    /// the one before it) was changed.
    Entry {
        counter: u64,
        /// The order's number and source, when the entry is an order.
        order_number: Option<String>,
        source: Option<SourceId>,
    },
    /// Every link holds, but the counter's head is not the last link: entries at the end
    /// were removed or the head was changed.
    Head,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainCheck {
    /// The head as recomputed from the stored entries.
    pub recomputed_head: String,
    /// The head the counter carries.
    pub stored_head: Option<String>,
    pub links: u64,
    pub first_break: Option<Break>,
}

/// An invoice of the audited period and the credit notes that correct it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditedInvoice {
    pub order_number: String,
    pub source: SourceId,
    pub credit_notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditReport {
    pub first_counter: u64,
    /// `None` before the period's first number.
    pub last_counter: Option<u64>,
    pub orders: u64,
    pub voided: u64,
    pub gaps: Vec<Gap>,
    /// Gapless series only.
    pub chain: Option<ChainCheck>,
    /// Invoices with credit notes (a series that other series credit).
    pub credited: Vec<CreditedInvoice>,
}

impl AuditReport {
    /// The report as `access` may see it. Counts, gaps and the chain account for every
    /// number and name no order: they stay. A caller bound to some sources is shown the
    /// numbers of their orders only: the credited invoices of other sources are left out,
    /// and so is the number of a broken entry of another source (its counter stays).
    pub fn shown_to(mut self, access: &SourceAccess) -> Self {
        self.credited
            .retain(|invoice| access.allows(&invoice.source));
        if let Some(ChainCheck {
            first_break:
                Some(Break::Entry {
                    order_number,
                    source,
                    ..
                }),
            ..
        }) = &mut self.chain
            && !source.as_ref().is_some_and(|source| access.allows(source))
        {
            *order_number = None;
            *source = None;
        }
        self
    }
}

/// What the counter item of a period says.
#[derive(Debug, Clone, Default)]
pub struct CounterState {
    pub last: Option<u64>,
    pub head: Option<String>,
}

/// Audits a whole period at once. `entries` must be in counter order.
pub fn audit(gapless: bool, first: u64, counter: &CounterState, entries: &[Entry]) -> AuditReport {
    let mut run = AuditRun::start(gapless, first);
    for entry in entries {
        run.feed(entry);
    }
    run.finish(counter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::{GENESIS, from_hex, move_link, order_link, to_hex};
    use crate::ids::{ExternalRef, SeriesId, SourceId};
    use crate::order::{OrderData, Reason, Void};

    fn order(counter: u64) -> Order {
        Order {
            order_number: format!("A{counter}"),
            series: SeriesId::parse("A").unwrap(),
            source: SourceId::parse("s").unwrap(),
            external_ref: ExternalRef::parse(&format!("r{counter}")).unwrap(),
            data: OrderData::parse(Some(r#"{"n": 1}"#)).unwrap(),
            fingerprint: String::new(),
            period: "all".into(),
            counter,
            created_at: jiff::tz::Offset::UTC
                .to_timestamp(jiff::civil::date(2026, 1, 1).at(0, 0, 0, 0))
                .unwrap(),
            hash: None,
            void: None,
            corrects: None,
            credit_notes: Vec::new(),
        }
    }

    fn moved(from: u64, to: u64) -> Move {
        Move {
            series: SeriesId::parse("A").unwrap(),
            from,
            to,
            reason: Reason::parse("legacy numbers").unwrap(),
            at: jiff::tz::Offset::UTC
                .to_timestamp(jiff::civil::date(2026, 1, 1).at(0, 0, 0, 0))
                .unwrap(),
            hash: None,
        }
    }

    /// A chained period as Tally writes it: orders 1-3, a move over 4-9, orders 10-11.
    fn chained() -> (CounterState, Vec<Entry>) {
        let mut entries = vec![
            Entry::Order(Box::new(order(1))),
            Entry::Order(Box::new(order(2))),
            Entry::Order(Box::new(order(3))),
            Entry::Move(moved(4, 9)),
            Entry::Order(Box::new(order(10))),
            Entry::Order(Box::new(order(11))),
        ];
        let mut previous = GENESIS;
        for entry in &mut entries {
            match entry {
                Entry::Order(o) => {
                    previous = order_link(&previous, o);
                    o.hash = Some(to_hex(&previous));
                }
                Entry::Move(m) => {
                    previous = move_link(&previous, m);
                    m.hash = Some(to_hex(&previous));
                }
            }
        }
        let counter = CounterState {
            last: Some(11),
            head: Some(to_hex(&previous)),
        };
        (counter, entries)
    }

    #[test]
    fn an_intact_gapless_period_has_only_its_declared_gap() {
        let (counter, mut entries) = chained();
        if let Entry::Order(o) = &mut entries[1] {
            o.void = Some(Void {
                reason: Reason::parse("cancelled").unwrap(),
                at: jiff::Timestamp::now(),
            });
        }
        let report = audit(true, 1, &counter, &entries);
        assert_eq!((report.orders, report.voided), (5, 1));
        assert_eq!(report.gaps.len(), 1);
        assert_eq!(
            (report.gaps[0].from, report.gaps[0].to, report.gaps[0].cause),
            (4, 9, GapCause::DeclaredMove)
        );
        let chain = report.chain.unwrap();
        assert_eq!((chain.links, chain.first_break), (6, None));
    }

    #[test]
    fn a_changed_order_is_named_and_a_rewritten_hash_names_its_successor() {
        let (counter, mut entries) = chained();
        if let Entry::Order(o) = &mut entries[2] {
            o.data = OrderData::parse(Some(r#"{"n": 2}"#)).unwrap();
        }
        let report = audit(true, 1, &counter, &entries);
        assert_eq!(
            report.chain.unwrap().first_break,
            Some(Break::Entry {
                counter: 3,
                order_number: Some("A3".into()),
                source: Some(SourceId::parse("s").unwrap()),
            })
        );
        // The forger also rewrites the changed order's hash: the next link breaks.
        let Entry::Order(second) = &entries[1] else {
            unreachable!()
        };
        let previous = from_hex(second.hash.as_deref().unwrap()).unwrap();
        if let Entry::Order(o) = &mut entries[2] {
            o.hash = Some(to_hex(&order_link(&previous, o)));
        }
        let report = audit(true, 1, &counter, &entries);
        assert_eq!(
            report.chain.unwrap().first_break,
            Some(Break::Entry {
                counter: 4,
                order_number: None,
                source: None,
            })
        );
    }

    #[test]
    fn a_removed_last_order_breaks_the_head_and_leaves_an_undeclared_gap() {
        let (counter, mut entries) = chained();
        entries.pop();
        let report = audit(true, 1, &counter, &entries);
        assert_eq!(report.chain.unwrap().first_break, Some(Break::Head));
        let last = report.gaps.last().unwrap();
        assert_eq!(
            (last.from, last.to, last.cause),
            (11, 11, GapCause::Missing)
        );
    }

    #[test]
    fn a_fast_period_lists_reserved_numbers_without_orders() {
        let entries = vec![
            Entry::Order(Box::new(order(1))),
            Entry::Order(Box::new(order(4))),
        ];
        let counter = CounterState {
            last: Some(6),
            head: None,
        };
        let report = audit(false, 1, &counter, &entries);
        let gaps: Vec<(u64, u64, GapCause)> = report
            .gaps
            .iter()
            .map(|g| (g.from, g.to, g.cause))
            .collect();
        assert_eq!(
            gaps,
            [
                (2, 3, GapCause::ReservedUnused),
                (5, 6, GapCause::ReservedUnused)
            ]
        );
        assert!(report.chain.is_none());
    }

    #[test]
    fn a_caller_bound_to_some_sources_sees_the_numbers_of_its_orders_only() {
        let (counter, mut entries) = chained();
        let shop = SourceId::parse("shop").unwrap();
        for (index, entry) in entries.iter_mut().enumerate() {
            if let Entry::Order(o) = entry {
                o.credit_notes = vec![format!("NC{index}")];
                if index == 1 {
                    o.source = shop.clone();
                    o.data = OrderData::parse(Some(r#"{"n": 2}"#)).unwrap();
                }
            }
        }
        let whole = audit(true, 1, &counter, &entries);
        assert_eq!(whole.credited.len(), 5);
        let bound = SourceAccess::Only(std::collections::BTreeSet::from([shop.clone()]));
        let shop_view = whole.clone().shown_to(&bound);
        let credited: Vec<&str> = shop_view
            .credited
            .iter()
            .map(|i| i.order_number.as_str())
            .collect();
        assert_eq!(credited, ["A2"]);
        assert_eq!(
            (shop_view.orders, &shop_view.gaps),
            (whole.orders, &whole.gaps)
        );
        let other = SourceAccess::Only(std::collections::BTreeSet::from([
            SourceId::parse("erp").unwrap()
        ]));
        let other_view = whole.clone().shown_to(&other);
        assert!(other_view.credited.is_empty());
        assert_eq!(
            other_view.chain.unwrap().first_break,
            Some(Break::Entry {
                counter: 2,
                order_number: None,
                source: None
            })
        );
        assert_eq!(whole.clone().shown_to(&SourceAccess::All), whole);
        assert_eq!(
            whole.chain.unwrap().first_break,
            shop_view.chain.unwrap().first_break
        );
    }

    #[test]
    fn an_audit_paused_and_resumed_reports_what_a_whole_one_does() {
        let (counter, entries) = chained();
        let whole = audit(true, 1, &counter, &entries);
        let mut run = AuditRun::start(true, 1);
        for entry in &entries[..3] {
            run.feed(entry);
        }
        let (first, state) = run.pause(&counter);
        assert_eq!(first.orders, 3);
        let state = AuditState::decode(&state.encode()).unwrap();
        let mut run = AuditRun::resume(true, 1, state);
        for entry in &entries[3..] {
            run.feed(entry);
        }
        let rest = run.finish(&counter);
        assert_eq!(
            (rest.orders, rest.voided, &rest.chain),
            (whole.orders, whole.voided, &whole.chain)
        );
        let gaps: Vec<Gap> = first.gaps.into_iter().chain(rest.gaps).collect();
        assert_eq!(gaps, whole.gaps);
    }
}
