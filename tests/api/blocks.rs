//! O6 and the rules a block keeps: processes number a fast series from blocks they
//! reserved, and still no number lies outside a live authorised range or past the
//! format's width (R1, O3), ranges and widths run out at their last number, a block ends
//! with its period (in the series' time zone) and with its age, and a format change for
//! a coming period applies from that period's first number. Each service is a process
//! with a clock of its own.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use tally_domain::journal::Operator;

use jiff::{SignedDuration, Timestamp};
use tally::orders::{AuditScope, ItemOutcome, OrderService, RejectionCode, SeriesChange};
use tally::store::{RequestCounter, Store};
use tally_domain::access::SourceAccess;
use tally_domain::audit::GapCause;
use tally_domain::ids::{SeriesId, SourceId};
use tally_domain::order::{Order, Reason};
use tally_domain::series::{AuthorisedRange, Calendar, Ranges, Reset, SeriesDefinition, Timezone};

use crate::helpers::{fresh_store, order_input, scan, store_on};
use crate::invariants::numbered_orders;

type Clock = Arc<Mutex<Timestamp>>;

/// A process on `table` whose clock the test sets, counting its requests.
async fn process(table: &str, at: Timestamp) -> (OrderService, Clock, RequestCounter) {
    let counter = RequestCounter::default();
    let store = store_on(table, Some(counter.clone())).await;
    let now = Arc::new(Mutex::new(at));
    let clock = now.clone();
    let service = OrderService::with_clock(store, Arc::new(move || *clock.lock().unwrap()));
    (service, now, counter)
}

fn utc(y: i16, m: i8, d: i8, h: i8, min: i8, s: i8) -> Timestamp {
    jiff::tz::Offset::UTC
        .to_timestamp(jiff::civil::date(y, m, d).at(h, min, s, 0))
        .unwrap()
}

/// A fast series that never resets, numbering inside `ranges`.
fn ranged(format: &str, ranges: Vec<AuthorisedRange>) -> SeriesDefinition {
    SeriesDefinition::new(format, Reset::Never, false, 1)
        .unwrap()
        .with_ranges(Ranges::new(ranges).unwrap(), 90)
        .unwrap()
}

/// One order posted alone: its order, or the code it was refused with.
async fn post(
    service: &OrderService,
    series: &SeriesId,
    reference: &str,
) -> Result<Order, RejectionCode> {
    let input = order_input(reference);
    let source = SourceId::parse("erp").unwrap();
    match service
        .create_orders(series, &source, vec![input], &SourceAccess::All)
        .await
        .unwrap()
        .pop()
        .unwrap()
    {
        ItemOutcome::Created(order) => Ok(order),
        ItemOutcome::Existing(order) => panic!("{} existed", order.order_number),
        ItemOutcome::Rejected(rejection) => Err(rejection.code),
    }
}

/// Two processes post in turn until both are refused; returns the counters numbered and
/// the code each was refused with last.
async fn post_until_refused(
    processes: &[&OrderService; 2],
    series: &SeriesId,
) -> (BTreeSet<u64>, Vec<RejectionCode>) {
    let mut numbered = BTreeSet::new();
    let mut refused: [Option<RejectionCode>; 2] = [None, None];
    for k in 0.. {
        let turn = k % 2;
        if refused.iter().all(Option::is_some) {
            break;
        }
        if refused[turn].is_some() {
            continue;
        }
        match post(processes[turn], series, &format!("r-{k}")).await {
            Ok(order) => assert!(numbered.insert(order.counter), "O1: {}", order.counter),
            Err(code) => refused[turn] = Some(code),
        }
    }
    (numbered, refused.into_iter().flatten().collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_stay_inside_live_ranges_and_the_ranges_run_out_at_their_last_number() {
    let (store, _table) = fresh_store(None).await;
    let start = utc(2026, 6, 1, 10, 0, 0);
    let (a, _, _) = process(store.table(), start).await;
    let (b, _, _) = process(store.table(), start).await;
    let series = SeriesId::parse("CAF").unwrap();
    let definition = ranged(
        "F{seq:3}",
        vec![
            AuthorisedRange::new(1, 100, "CAF-1", None).unwrap(),
            AuthorisedRange::new(201, 300, "CAF-2", None).unwrap(),
        ],
    );
    a.define_series(&series, definition, &Operator::local())
        .await
        .unwrap();
    let (numbered, refused) = post_until_refused(&[&a, &b], &series).await;
    // R1: every number of both ranges, none outside, though both processes held blocks.
    let expected: BTreeSet<u64> = (1..=100).chain(201..=300).collect();
    assert_eq!(numbered, expected);
    assert_eq!(refused, [RejectionCode::RangeExhausted; 2]);
    assert!(a.spare_numbers().is_empty() && b.spare_numbers().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_width_runs_out_at_its_last_number_whatever_the_blocks() {
    let (store, _table) = fresh_store(None).await;
    let start = utc(2026, 6, 1, 10, 0, 0);
    let (a, _, _) = process(store.table(), start).await;
    let (b, _, _) = process(store.table(), start).await;
    let series = SeriesId::parse("BG").unwrap();
    let definition = SeriesDefinition::new("{seq:2!}", Reset::Never, false, 1).unwrap();
    a.define_series(&series, definition, &Operator::local())
        .await
        .unwrap();
    let (numbered, refused) = post_until_refused(&[&a, &b], &series).await;
    assert_eq!(numbered, (1..=99).collect::<BTreeSet<u64>>());
    assert_eq!(refused, [RejectionCode::SeriesExhausted; 2]);
    let stored = numbered_orders(&scan(&store).await, "BG");
    assert!(stored.values().all(|n| n.number.len() == 2), "O3");
}

#[tokio::test]
async fn a_block_ends_with_its_period_in_the_series_time_zone_and_a_new_format_starts_with_the_next()
 {
    let (store, _table) = fresh_store(None).await;
    // 23:50 in Berlin on 31 December 2026.
    let (a, clock, _) = process(store.table(), utc(2026, 12, 31, 22, 50, 0)).await;
    let (operator, _, _) = process(store.table(), utc(2026, 12, 31, 22, 50, 0)).await;
    let series = SeriesId::parse("YB").unwrap();
    let berlin = Calendar::new(Timezone::parse("Europe/Berlin").unwrap(), 1).unwrap();
    let definition = SeriesDefinition::new("A{yy}-{seq:4}", Reset::Yearly, false, 1)
        .unwrap()
        .with_calendar(berlin);
    a.define_series(&series, definition, &Operator::local())
        .await
        .unwrap();
    for k in 0..10 {
        let order = post(&a, &series, &format!("old-{k}")).await.unwrap();
        assert_eq!(order.period, "2026");
        assert_eq!(order.order_number, format!("A26-{:04}", k + 1));
    }
    let held = a.spare_numbers();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].period.as_str(), "2026");
    // Another process changes the format of the coming year.
    let change = SeriesChange::Format("B{yyyy}/{seq:5}".into());
    operator
        .change_series(&series, change, &Operator::local())
        .await
        .unwrap();
    // 00:00 in Berlin: the first number of 2027, in its format, from a block of 2027.
    *clock.lock().unwrap() = utc(2026, 12, 31, 23, 0, 0);
    let first = post(&a, &series, "new-0").await.unwrap();
    assert_eq!((first.period.as_str(), first.counter), ("2027", 1));
    assert_eq!(first.order_number, "B2027/00001");
    // The rest of 2026's block stays unused; the audit of 2026 lists it (G1).
    let year = operator.period_of(&series, Some("2026")).await.unwrap();
    let audit = operator
        .audit_period(year, AuditScope::default(), &|_| {})
        .await
        .unwrap();
    let gaps: Vec<(u64, u64, GapCause)> = audit
        .report
        .gaps
        .iter()
        .map(|g| (g.from, g.to, g.cause))
        .collect();
    let spare = &held[0].counters;
    assert_eq!(
        gaps,
        [(*spare[0].start(), *spare[0].end(), GapCause::ReservedUnused)]
    );
    assert_eq!(*spare[0].start(), 11);
}

#[tokio::test]
async fn spare_numbers_older_than_a_minute_are_left_unused() {
    let (store, _table) = fresh_store(None).await;
    let start = utc(2026, 6, 1, 10, 0, 0);
    let (a, clock, _) = process(store.table(), start).await;
    let series = SeriesId::parse("AGE").unwrap();
    let definition = SeriesDefinition::new("G{seq:6}", Reset::Never, false, 1).unwrap();
    a.define_series(&series, definition, &Operator::local())
        .await
        .unwrap();
    for k in 0..8 {
        post(&a, &series, &format!("a-{k}")).await.unwrap();
    }
    let held: Vec<u64> = a.spare_numbers()[0]
        .counters
        .iter()
        .cloned()
        .flatten()
        .collect();
    assert!(!held.is_empty());
    // 61 seconds later the spare numbers are too old: the next number is a new block's.
    *clock.lock().unwrap() = start + SignedDuration::from_secs(61);
    let next = post(&a, &series, "later").await.unwrap();
    assert!(
        held.iter().all(|&c| c < next.counter),
        "{held:?} {}",
        next.counter
    );
    let still: Vec<u64> = a
        .spare_numbers()
        .iter()
        .flat_map(|s| s.counters.clone())
        .flatten()
        .collect();
    assert!(still.iter().all(|c| !held.contains(c)));
}

#[tokio::test]
async fn a_process_reads_its_series_again_after_a_minute() {
    let (store, _table) = fresh_store(None).await;
    let start = utc(2026, 6, 1, 10, 0, 0);
    let (a, clock, requests) = process(store.table(), start).await;
    let series = SeriesId::parse("SET").unwrap();
    let definition = SeriesDefinition::new("S{seq:6}", Reset::Never, false, 1).unwrap();
    define_with(&store, &series, definition).await;
    let reads = || requests.snapshot().of("GetItem");
    post(&a, &series, "first").await.unwrap();
    assert_eq!(reads(), 1);
    *clock.lock().unwrap() = start + SignedDuration::from_secs(59);
    post(&a, &series, "cached").await.unwrap();
    assert_eq!(reads(), 1);
    *clock.lock().unwrap() = start + SignedDuration::from_secs(61);
    post(&a, &series, "stale").await.unwrap();
    assert_eq!(reads(), 2);
}

async fn define_with(store: &Store, series: &SeriesId, definition: SeriesDefinition) {
    OrderService::new(store.clone())
        .define_series(series, definition, &Operator::local())
        .await
        .unwrap();
}

#[tokio::test]
async fn spare_numbers_of_a_range_that_expired_are_never_issued() {
    let (store, _table) = fresh_store(None).await;
    let start = utc(2026, 6, 1, 10, 0, 0);
    let (a, clock, _) = process(store.table(), start).await;
    let series = SeriesId::parse("EXP").unwrap();
    let definition = ranged(
        "E{seq:4}",
        vec![
            AuthorisedRange::new(
                1,
                1_000,
                "CAF-1",
                Some(start + SignedDuration::from_secs(30)),
            )
            .unwrap(),
            AuthorisedRange::new(2_001, 3_000, "CAF-2", None).unwrap(),
        ],
    );
    a.define_series(&series, definition, &Operator::local())
        .await
        .unwrap();
    for k in 0..8 {
        post(&a, &series, &format!("a-{k}")).await.unwrap();
    }
    assert!(!a.spare_numbers().is_empty());
    // R1: once the first range has expired, its spare numbers are left; the next number
    // is the second range's first.
    *clock.lock().unwrap() = start + SignedDuration::from_secs(31);
    let next = post(&a, &series, "after").await.unwrap();
    assert_eq!(next.counter, 2_001);
}

/// A yearly fast series with a number in 2026, whose format the operator's process then
/// changes to `changed` (for 2027: 2026 has started), and whose 2026 counter it moves so
/// that the next number is `next`. Returns that process, which knows the new format.
async fn changed_for_next_year(
    table: &str,
    series: &SeriesId,
    format: &str,
    changed: &str,
    next: u64,
) -> OrderService {
    let at = utc(2026, 6, 1, 10, 0, 0);
    let (a, _, _) = process(table, at).await;
    let definition = SeriesDefinition::new(format, Reset::Yearly, false, 1).unwrap();
    a.define_series(series, definition, &Operator::local())
        .await
        .unwrap();
    post(&a, series, "first").await.unwrap();
    let (operator, _, _) = process(table, at).await;
    operator
        .change_series(
            series,
            SeriesChange::Format(changed.into()),
            &Operator::local(),
        )
        .await
        .unwrap();
    let moved = SeriesChange::Move {
        next,
        reason: Reason::parse("paper invoices").unwrap(),
        period: None,
    };
    let status = operator
        .change_series(series, moved, &Operator::local())
        .await
        .unwrap();
    assert_eq!(status.series.latest_version(), 2);
    operator
}

/// `count` orders posted alone: each one's number or refusal.
async fn post_each(
    service: &OrderService,
    series: &SeriesId,
    count: usize,
) -> Vec<Result<String, RejectionCode>> {
    let mut outcomes = Vec::new();
    for k in 0..count {
        let posted = post(service, series, &format!("r-{k}")).await;
        outcomes.push(posted.map(|order| order.order_number));
    }
    outcomes
}

#[tokio::test]
async fn a_period_keeps_the_width_of_its_own_format_after_a_change_for_the_next() {
    let (store, _table) = fresh_store(None).await;
    let series = SeriesId::parse("EW").unwrap();
    // An exact width in 2026; 2027 numbers without one.
    let operator = changed_for_next_year(
        store.table(),
        &series,
        "W{yy}-{seq:2!}",
        "W{yyyy}/{seq:3}",
        97,
    )
    .await;
    let outcomes = post_each(&operator, &series, 5).await;
    let exhausted = Err(RejectionCode::SeriesExhausted);
    assert_eq!(
        outcomes,
        [
            Ok("W26-97".to_owned()),
            Ok("W26-98".to_owned()),
            Ok("W26-99".to_owned()),
            exhausted.clone(),
            exhausted
        ]
    );
    let stored = numbered_orders(&scan(&store).await, "EW");
    assert!(stored.values().all(|n| n.number.len() == 6), "O3");
}

#[tokio::test]
async fn a_narrower_format_for_the_next_period_does_not_exhaust_the_current_one() {
    let (store, _table) = fresh_store(None).await;
    let series = SeriesId::parse("NW").unwrap();
    // 2027 numbers in an exact width of two; 2026 has none.
    let operator = changed_for_next_year(
        store.table(),
        &series,
        "N{yy}-{seq:3}",
        "N{yy}-{seq:2!}",
        99,
    )
    .await;
    let outcomes = post_each(&operator, &series, 3).await;
    assert_eq!(
        outcomes,
        [
            Ok("N26-099".to_owned()),
            Ok("N26-100".to_owned()),
            Ok("N26-101".to_owned())
        ]
    );
}
