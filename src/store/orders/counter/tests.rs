use super::*;
use crate::store::PARTITION_KEY;

#[test]
fn a_stored_lease_has_the_attributes_conditions_name() {
    let lease = Pending {
        owner: "w".into(),
        until: 1,
    };
    let stored = derived(&lease).unwrap();
    let mut names: Vec<&str> = stored.as_m().unwrap().keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, [OWNER, UNTIL]);
}

#[test]
fn the_counter_reads_the_attributes_updates_name() {
    let item = Item::from([
        (LAST.to_owned(), n(42)),
        (HEAD.to_owned(), s("c0ffee")),
        (FORMAT_VERSION.to_owned(), n(2)),
        (MOVED_TO.to_owned(), n(40)),
        (TURNS.to_owned(), n(7)),
    ]);
    let counter = decode_counter(&item).unwrap();
    assert_eq!(
        (
            counter.last,
            counter.head.as_deref(),
            counter.format_version
        ),
        (Some(42), Some("c0ffee"), Some(2))
    );
    assert_eq!((counter.moved_to, counter.turns), (Some(40), Some(7)));
}

#[test]
fn a_wrong_typed_counter_attribute_makes_the_counter_corrupt() {
    let item = Item::from([
        (PARTITION_KEY.to_owned(), s("SERIES#INV#PERIOD#2026")),
        (LAST.to_owned(), s("42")),
    ]);
    let Err(StoreError::Corrupt { key, reason }) = decode_counter(&item) else {
        panic!("a string `last` reads as a counter");
    };
    assert_eq!(key, "SERIES#INV#PERIOD#2026");
    assert!(reason.contains("`last`"), "{reason}");
}
