//! The `kind` attribute that tells what an item is, and every kind an item has. Changes of the kinds in [`FACTS`] are
//! domain facts (`stream.rs`); the table stream's filter in template.yaml passes exactly
//! these to the events function, and a test holds the two lists equal.

/// The attribute's name.
pub(crate) const ATTRIBUTE: &str = "kind";

pub(crate) const PURCHASE: &str = "purchase";
pub(crate) const DRAW: &str = "draw";
pub(crate) const PICK: &str = "pick";
pub(crate) const ORDER: &str = "order";
pub(crate) const MOVE: &str = "move";
pub(crate) const RANGE_LOW: &str = "range_low";
pub(crate) const INSTANT_WIN: &str = "instant_win";
pub(crate) const TICKET: &str = "ticket";
pub(crate) const HOLD: &str = "hold";
pub(crate) const SERIES: &str = "series";
pub(crate) const ISSUER: &str = "issuer";
pub(crate) const ALLOWANCE: &str = "allowance";
/// An entry of the operator journal: read through `GET /journal`, no domain fact.
pub(crate) const JOURNAL_ENTRY: &str = "journal_entry";
/// A payer's limits, exclusion and spend, across every draw.
pub(crate) const PAYER: &str = "payer";
/// A draw's published facts: public counts a poll reads, no domain fact.
pub(crate) const PUBLISHED_FACTS: &str = "published_facts";
/// A bundle listed under its draw until its ticket items are all written.
pub(crate) const UNFINISHED_BUNDLE: &str = "unfinished_bundle";
/// An order under its reference key: what finds a repeated post.
pub(crate) const ORDER_REF: &str = "order_ref";

/// The kinds whose changes may record a domain fact.
pub const FACTS: [&str; 7] = [PURCHASE, DRAW, PICK, ORDER, MOVE, RANGE_LOW, INSTANT_WIN];

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The kinds the stream filter of template.yaml's events function lets through.
    fn filtered_kinds() -> BTreeSet<String> {
        let template = include_str!("../../template.yaml");
        let pattern = template
            .lines()
            .find_map(|line| line.trim().strip_prefix("- Pattern: "))
            .expect("template.yaml has a stream filter pattern");
        let pattern: serde_json::Value =
            serde_json::from_str(pattern.trim_matches('\'')).expect("the pattern is JSON");
        pattern["dynamodb"]["NewImage"][ATTRIBUTE]["S"]
            .as_array()
            .expect("the pattern lists kinds")
            .iter()
            .map(|kind| kind.as_str().expect("a kind is a string").to_owned())
            .collect()
    }

    #[test]
    fn the_stream_filter_passes_exactly_the_kinds_that_record_facts() {
        let facts: BTreeSet<String> = FACTS.iter().map(|&kind| kind.to_owned()).collect();
        assert_eq!(filtered_kinds(), facts);
    }
}
