//! What each offset of a stripe is at one moment, from what the table holds of it: free,
//! held or sold. The grid and the eligible list both read a stripe through this.

use std::collections::BTreeMap;
use std::ops::Range;

use super::{Chosen, Held, StripeCursors};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    Free,
    /// Held by a hold that lives at that moment.
    Held,
    Sold,
}

/// The offsets `0..len` of a stripe at `now` (Unix ms), as runs of one standing, in
/// order. Behind a cursor an offset is sold unless a hold marks it (held while the hold
/// lives, free once it ended); ahead of both it is free unless chosen or held.
pub fn standings(
    len: u64,
    cursors: StripeCursors,
    chosen: &Chosen,
    held: &Held,
    now: i64,
) -> Vec<(Range<u64>, Standing)> {
    let bottom = cursors.bottom.min(len);
    let ahead = bottom..len.saturating_sub(cursors.top).max(bottom);
    let mut marks: BTreeMap<u64, Standing> = chosen
        .iter()
        .filter(|o| ahead.contains(o))
        .map(|&o| (o, Standing::Sold))
        .collect();
    for (&o, &end) in held.range(..len) {
        marks.insert(
            o,
            if end > now {
                Standing::Held
            } else {
                Standing::Free
            },
        );
    }
    // Runs change only at the cursors and around marks.
    let mut cuts: Vec<u64> = [0, ahead.start, ahead.end, len].into();
    cuts.extend(marks.keys().flat_map(|&o| [o, o + 1]));
    cuts.sort_unstable();
    cuts.dedup();
    let mut runs: Vec<(Range<u64>, Standing)> = Vec::new();
    for cut in cuts.windows(2) {
        let standing = match marks.get(&cut[0]) {
            Some(&standing) => standing,
            None if ahead.contains(&cut[0]) => Standing::Free,
            None => Standing::Sold,
        };
        match runs.last_mut() {
            Some((run, last)) if *last == standing => run.end = cut[1],
            _ => runs.push((cut[0]..cut[1], standing)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_behind_a_cursor_are_sold_unless_held_and_free_again_once_the_hold_ends() {
        use Standing::{Free as F, Held as H, Sold as S};
        let cursors = StripeCursors { bottom: 3, top: 2 };
        let held = Held::from([(1, 100), (2, 50), (5, 100), (6, 10), (8, 100)]);
        let runs = standings(10, cursors, &Chosen::from([4]), &held, 50);
        let each: Vec<Standing> = runs
            .iter()
            .flat_map(|(run, s)| run.clone().map(move |_| *s))
            .collect();
        assert_eq!(each, vec![S, H, F, F, S, H, F, F, H, S]);
        // Neighbours of one standing are one run.
        assert_eq!(runs.len(), 8);
    }
}
