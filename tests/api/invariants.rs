//! The invariants read back from the table, shared by the race and fault tests.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use tally::orders::OrderService;

use crate::helpers::{Item, attr_n, attr_numbers, attr_s, of_kind};

/// T1, T2, T3 and T5 on the table: every ticket number is in 1..=`total` and held once;
/// each purchase holds exactly its quantity, no number listed twice; each ticket belongs
/// to the purchase that lists it. Returns each payment's tickets.
pub fn sold_tickets(items: &[Item], total: u64) -> BTreeMap<String, Vec<u64>> {
    let mut held = BTreeMap::new();
    let mut listed = HashSet::new();
    for purchase in of_kind(items, "purchase") {
        let tickets = attr_numbers(purchase, "tickets");
        assert_eq!(tickets.len() as u64, attr_n(purchase, "quantity"), "T3");
        for &number in &tickets {
            assert!((1..=total).contains(&number), "T2: {number} out of range");
            assert!(listed.insert(number), "T1: {number} listed twice");
        }
        held.insert(attr_s(purchase, "payment_id").to_owned(), tickets);
    }
    let ticket_items = of_kind(items, "ticket");
    let mut numbers = HashSet::new();
    for ticket in &ticket_items {
        let number = attr_n(ticket, "number");
        assert!(numbers.insert(number), "T1: ticket {number} stored twice");
        let owner = attr_s(ticket, "payment_id");
        assert!(
            held.get(owner).is_some_and(|t| t.contains(&number)),
            "T5: ticket {number} is not listed by {owner}"
        );
    }
    assert_eq!(numbers, listed, "T5: a listed ticket has no item");
    held
}

/// One numbered order as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Numbered {
    pub number: String,
    pub counter: u64,
}

/// O1 and O4 for one series: one number item and one reference item per order, agreeing,
/// every number used once. Returns each (source, reference)'s order.
pub fn numbered_orders(items: &[Item], series: &str) -> BTreeMap<(String, String), Numbered> {
    let of_series = |kind| {
        of_kind(items, kind)
            .into_iter()
            .filter(|o| attr_s(o, "series") == series)
            .collect::<Vec<_>>()
    };
    let key = |o: &Item| {
        (
            attr_s(o, "source").to_owned(),
            attr_s(o, "external_ref").to_owned(),
        )
    };
    let mut by_ref = BTreeMap::new();
    let mut numbers = HashSet::new();
    for order in of_series("order") {
        let number = attr_s(order, "order_number").to_owned();
        assert!(numbers.insert(number.clone()), "O1: {number} used twice");
        let numbered = Numbered {
            number,
            counter: attr_n(order, "counter"),
        };
        assert!(
            by_ref.insert(key(order), numbered).is_none(),
            "O4: {:?} numbered twice",
            key(order)
        );
    }
    let references = of_series("order_ref");
    assert_eq!(
        references.len(),
        by_ref.len(),
        "O4: references and orders differ"
    );
    for reference in references {
        assert_eq!(
            by_ref.get(&key(reference)).map(|n| n.number.as_str()),
            Some(attr_s(reference, "order_number")),
            "O4: the reference item disagrees"
        );
    }
    by_ref
}

/// V1 and P1 on the table: a voided purchase's tickets are all void and counted once by
/// the draw; each payer's allowance equals the payer's non-voided tickets, never above
/// `cap`. Returns the voided tickets.
pub fn voids_and_caps(items: &[Item], draw: &str, cap: u64) -> HashSet<u64> {
    let is_void =
        |item: &Item| matches!(item.get("status"), Some(AttributeValue::S(s)) if s == "void");
    let mut voided = HashSet::new();
    let mut held: BTreeMap<String, u64> = BTreeMap::new();
    for purchase in of_kind(items, "purchase") {
        let tickets = attr_numbers(purchase, "tickets");
        if is_void(purchase) {
            voided.extend(tickets);
        } else {
            *held
                .entry(attr_s(purchase, "payer_id").to_owned())
                .or_default() += tickets.len() as u64;
        }
    }
    for ticket in of_kind(items, "ticket") {
        let number = attr_n(ticket, "number");
        assert_eq!(
            is_void(ticket),
            voided.contains(&number),
            "V1: ticket {number}"
        );
    }
    let draw_item = of_kind(items, "draw")
        .into_iter()
        .find(|d| attr_s(d, "draw_id") == draw)
        .expect("the draw");
    // Voids before the freeze and after it (late) are counted apart, together once each.
    let count = |name: &str| draw_item.get(name).map_or(0, |_| attr_n(draw_item, name));
    assert_eq!(
        count("voided") + count("late_voided"),
        voided.len() as u64,
        "V1: the draw's voided count"
    );
    let allowances = of_kind(items, "allowance");
    for (payer, tickets) in &held {
        assert!(*tickets <= cap, "P1: {payer} holds {tickets}");
    }
    for allowance in allowances {
        let payer = attr_s(allowance, "payer_id");
        let tickets = held.get(payer).copied().unwrap_or(0);
        assert_eq!(
            attr_n(allowance, "held"),
            tickets,
            "P1: {payer}'s allowance"
        );
    }
    voided
}

/// L1 on the table: every credit note of `credits` names an invoice of `invoices` that
/// exists once, is not void and lists the credit note; every credit note an invoice lists
/// exists and names it. Returns the number of credit notes.
pub fn credit_links(items: &[Item], credits: &str, invoices: &str) -> usize {
    let numbers = |series: &str| -> BTreeMap<String, &Item> {
        of_kind(items, "order")
            .into_iter()
            .filter(|o| attr_s(o, "series") == series)
            .map(|o| (attr_s(o, "order_number").to_owned(), o))
            .collect()
    };
    let (notes, bills) = (numbers(credits), numbers(invoices));
    let listed = |invoice: &Item| -> Vec<String> {
        match invoice.get("credit_notes") {
            Some(AttributeValue::L(list)) => list
                .iter()
                .map(|v| match v {
                    AttributeValue::S(s) => s.clone(),
                    other => panic!("a credit note is not a string: {other:?}"),
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    for (number, note) in &notes {
        let corrects = attr_s(note, "corrects");
        let invoice = bills
            .get(corrects)
            .unwrap_or_else(|| panic!("L1: {number} corrects {corrects}, which is not there"));
        assert!(
            !invoice.contains_key("voided_at"),
            "L1: {number} corrects {corrects}, which is void"
        );
        assert!(
            listed(invoice).contains(number),
            "L1: {corrects} does not list {number}"
        );
    }
    for (number, invoice) in &bills {
        for note in listed(invoice) {
            let named = notes.get(&note).map(|n| attr_s(n, "corrects"));
            assert_eq!(named, Some(number.as_str()), "L1: {number} lists {note}");
        }
    }
    notes.len()
}

/// R1 on the table for a gapless series with ranges (`(from, to)`, in order): every
/// order's counter lies in a range, and the orders and declared moves cover every counter
/// from `start` to the counter's last exactly once. Returns the counters of the orders.
pub fn within_ranges(items: &[Item], series: &str, start: u64, ranges: &[(u64, u64)]) -> Vec<u64> {
    let mut covered: BTreeMap<u64, u64> = BTreeMap::new();
    let mut counters = Vec::new();
    for order in of_kind(items, "order")
        .into_iter()
        .filter(|o| attr_s(o, "series") == series)
    {
        let counter = attr_n(order, "counter");
        assert!(
            ranges
                .iter()
                .any(|(from, to)| (*from..=*to).contains(&counter)),
            "R1: counter {counter} is outside every range"
        );
        assert!(covered.insert(counter, counter).is_none(), "O1: {counter}");
        counters.push(counter);
    }
    for moved in of_kind(items, "move")
        .into_iter()
        .filter(|m| attr_s(m, "series") == series)
    {
        let from = attr_n(moved, "counter");
        assert!(
            covered.insert(from, attr_n(moved, "to")).is_none(),
            "R1: a move at {from}"
        );
    }
    let mut next = start;
    for (from, to) in covered {
        assert_eq!(
            from, next,
            "R1: counters {next}..{from} are neither used nor declared"
        );
        next = to + 1;
    }
    counters.sort_unstable();
    counters
}

/// The numbers the order services (processes) hold unused: those never written, and those
/// whose write has an unknown outcome (used if it committed).
pub fn spare_numbers(services: &[Arc<OrderService>]) -> (BTreeSet<u64>, BTreeSet<u64>) {
    let (mut spare, mut doubtful) = (BTreeSet::new(), BTreeSet::new());
    for numbers in services.iter().flat_map(|s| s.spare_numbers()) {
        spare.extend(numbers.counters.into_iter().flatten());
        doubtful.extend(numbers.doubtful);
    }
    (spare, doubtful)
}
