//! The journal of operator actions: every action that is not a buyer's (a draw created,
//! changed, closed or drawn, a purchase or order voided, a series defined or changed, ...)
//! appends one entry in the action's own transaction. Entries carry consecutive numbers
//! from 1 across the deployment, never reset and never skipped, and each stores
//! `SHA-256(previous hash || canonical bytes of the entry)`, so that an edited, removed or
//! inserted entry breaks the chain from there on. The bytes are specified in
//! docs/journal.md.

use jiff::Timestamp;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::chain::{GENESIS, Hash, field};
use super::time::rfc3339_millis as time;

/// What an operator did. The journal stores [`Action::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Action {
    DrawCreated,
    DrawChanged,
    DrawClosed,
    WinnersDrawn,
    Redraw,
    PurchaseVoided,
    /// A payer's spend limits set.
    LimitsSet,
    /// A payer's self-exclusion set or extended.
    ExclusionSet,
    SeriesDefined,
    SeriesChanged,
    CounterMoved,
    RangesChanged,
    OrderVoided,
}

impl Action {
    pub const ALL: [Action; 13] = [
        Self::DrawCreated,
        Self::DrawChanged,
        Self::DrawClosed,
        Self::WinnersDrawn,
        Self::Redraw,
        Self::PurchaseVoided,
        Self::LimitsSet,
        Self::ExclusionSet,
        Self::SeriesDefined,
        Self::SeriesChanged,
        Self::CounterMoved,
        Self::RangesChanged,
        Self::OrderVoided,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::DrawCreated => "draw_created",
            Self::DrawChanged => "draw_changed",
            Self::DrawClosed => "draw_closed",
            Self::WinnersDrawn => "winners_drawn",
            Self::Redraw => "redraw",
            Self::PurchaseVoided => "purchase_voided",
            Self::LimitsSet => "limits_set",
            Self::ExclusionSet => "exclusion_set",
            Self::SeriesDefined => "series_defined",
            Self::SeriesChanged => "series_changed",
            Self::CounterMoved => "counter_moved",
            Self::RangesChanged => "ranges_changed",
            Self::OrderVoided => "order_voided",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|action| action.as_str() == text)
    }
}

/// Who acted, as the journal names them: an IAM principal's ARN, `jwt:<token issuer>#<claim
/// value>` where the API takes tokens, or `local` for a request without an identity (the
/// local server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operator(String);

impl Operator {
    pub const LOCAL: &str = "local";

    pub fn local() -> Self {
        Self(Self::LOCAL.to_owned())
    }

    pub fn named(name: impl Into<String>) -> Self {
        Self(name.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An entry before the journal gives it its number and link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub at: Timestamp,
    pub caller: Operator,
    pub action: Action,
    /// What the action was on: `draw/<draw>`, `draw/<draw>/purchase/<payment>`,
    /// `series/<series>`, `series/<series>/order/<number text>`, `payer/<payer key>`.
    pub target: String,
    /// What changed, as compact JSON: the fields the action set, with their new values.
    pub change: String,
}

impl Draft {
    /// A draft of `action` on `target` whose change is `change` in JSON.
    pub fn new(
        at: Timestamp,
        caller: &Operator,
        action: Action,
        target: String,
        change: &impl Serialize,
    ) -> Self {
        Self {
            at,
            caller: caller.clone(),
            action,
            target,
            // A value Tally built from its own types always serialises.
            change: serde_json::to_string(change).unwrap_or_else(|_| "null".to_owned()),
        }
    }
}

/// An entry as stored: its draft with its number and its link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub number: u64,
    pub draft: Draft,
    pub hash: Hash,
}

/// The journal's last entry: its number (0 before the first) and hash ([`GENESIS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub last: u64,
    pub hash: Hash,
}

impl Head {
    pub const EMPTY: Head = Head {
        last: 0,
        hash: GENESIS,
    };

    /// The entry that follows this head, and the head after it.
    pub fn next(&self, draft: Draft) -> (Entry, Head) {
        let number = self.last + 1;
        let hash = link(&self.hash, number, &draft);
        let head = Head { last: number, hash };
        (
            Entry {
                number,
                draft,
                hash,
            },
            head,
        )
    }
}

/// `SHA-256(previous || "journal" number time caller action target change)`, the number
/// in decimal, each field length-prefixed as in the order chain.
pub fn link(previous: &Hash, number: u64, draft: &Draft) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(previous);
    for value in [
        "journal",
        &number.to_string(),
        &time(draft.at),
        draft.caller.as_str(),
        draft.action.as_str(),
        &draft.target,
        &draft.change,
    ] {
        field(&mut hasher, value);
    }
    hasher.finalize().into()
}

/// Why the journal does not check out, at the first entry where it does not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Broken {
    #[error("entry {expected} is missing (the next one found is {found})")]
    Gap { expected: u64, found: u64 },
    #[error("entry {number} does not link to the one before: it was changed, or one before it was")]
    Link { number: u64 },
    #[error("the head names entry {head} as the last, but the last entry is {last}")]
    Head { head: u64, last: u64 },
    #[error("the head's hash is not that of entry {last}")]
    HeadHash { last: u64 },
}

impl Broken {
    /// The first entry that does not check out.
    pub fn number(&self) -> u64 {
        match *self {
            Self::Gap { expected, .. } => expected,
            Self::Link { number } => number,
            Self::Head { head, last } => head.min(last + 1),
            Self::HeadHash { last } => last,
        }
    }
}

/// Checks entries read in number order, page after page: numbers from 1 without a gap or a
/// repeat, each linked to the one before; then [`Verifier::finish`] against the head.
#[derive(Debug)]
pub struct Verifier {
    head: Head,
}

impl Default for Verifier {
    fn default() -> Self {
        Self { head: Head::EMPTY }
    }
}

impl Verifier {
    pub fn check(&mut self, entry: &Entry) -> Result<(), Broken> {
        let expected = self.head.last + 1;
        if entry.number != expected {
            return Err(Broken::Gap {
                expected,
                found: entry.number,
            });
        }
        let hash = link(&self.head.hash, entry.number, &entry.draft);
        if hash != entry.hash {
            return Err(Broken::Link {
                number: entry.number,
            });
        }
        self.head = Head {
            last: entry.number,
            hash,
        };
        Ok(())
    }

    /// The entries checked so far against the stored head: a removed last entry, or a
    /// head that moved without its entry, shows here.
    pub fn finish(&self, stored: &Head) -> Result<u64, Broken> {
        if stored.last != self.head.last {
            return Err(Broken::Head {
                head: stored.last,
                last: self.head.last,
            });
        }
        if stored.hash != self.head.hash {
            return Err(Broken::HeadHash {
                last: self.head.last,
            });
        }
        Ok(self.head.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_rfc3339;

    fn draft(target: &str) -> Draft {
        Draft::new(
            parse_rfc3339("2026-12-05T10:00:00.000Z").unwrap(),
            &Operator::local(),
            Action::PurchaseVoided,
            target.to_owned(),
            &serde_json::json!({ "reason": "refund" }),
        )
    }

    fn journal(count: u64) -> (Vec<Entry>, Head) {
        let mut head = Head::EMPTY;
        let mut entries = Vec::new();
        for n in 0..count {
            let (entry, next) = head.next(draft(&format!("draw/d/purchase/p{n}")));
            entries.push(entry);
            head = next;
        }
        (entries, head)
    }

    fn verify(entries: &[Entry], head: &Head) -> Result<u64, Broken> {
        let mut verifier = Verifier::default();
        for entry in entries {
            verifier.check(entry)?;
        }
        verifier.finish(head)
    }

    #[test]
    fn a_journal_as_written_checks_out() {
        let (entries, head) = journal(5);
        assert_eq!(entries[0].number, 1);
        assert_eq!(verify(&entries, &head), Ok(5));
        assert_eq!(verify(&[], &Head::EMPTY), Ok(0));
    }

    #[test]
    fn an_edited_entry_is_named_as_the_first_broken_one() {
        let (mut entries, head) = journal(5);
        entries[2].draft.change = r#"{"reason":"fraud"}"#.to_owned();
        let broken = verify(&entries, &head).unwrap_err();
        assert_eq!(broken, Broken::Link { number: 3 });
        assert_eq!(broken.number(), 3);
        let (mut entries, head) = journal(5);
        entries[1].draft.caller = Operator::named("someone-else");
        assert_eq!(verify(&entries, &head), Err(Broken::Link { number: 2 }));
    }

    #[test]
    fn a_removed_entry_is_a_gap_and_a_removed_last_one_shows_at_the_head() {
        let (mut entries, head) = journal(5);
        entries.remove(3);
        assert_eq!(
            verify(&entries, &head),
            Err(Broken::Gap {
                expected: 4,
                found: 5
            })
        );
        let (mut entries, head) = journal(5);
        entries.pop();
        let broken = verify(&entries, &head).unwrap_err();
        assert_eq!(broken, Broken::Head { head: 5, last: 4 });
        assert_eq!(broken.number(), 5);
    }

    #[test]
    fn every_action_reads_back_from_its_name() {
        for action in Action::ALL {
            assert_eq!(Action::parse(action.as_str()), Some(action));
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(json, format!("\"{}\"", action.as_str()));
        }
    }
}
