//! What each offset of a stripe is at one moment, from what the table holds of it: free,
//! held or sold. The grid and the eligible list both read a stripe through this.

use std::ops::Range;

use super::{Chosen, Held, StripeCounters};

/// What an offset of a stripe is.
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
    counters: StripeCounters,
    chosen: &Chosen,
    held: &Held,
    now: i64,
) -> Vec<(Range<u64>, Standing)> {
    let ahead = counters.bottom.min(len)
        ..len
            .saturating_sub(counters.top)
            .max(counters.bottom.min(len));
    let default = |offset: u64| {
        if ahead.contains(&offset) {
            Standing::Free
        } else {
            Standing::Sold
        }
    };
    let mut marks: Vec<(u64, Standing)> = chosen
        .iter()
        .filter(|o| ahead.contains(o))
        .map(|&o| (o, Standing::Sold))
        .chain(held.iter().filter(|(o, _)| **o < len).map(|(&o, &end)| {
            (
                o,
                if end > now {
                    Standing::Held
                } else {
                    Standing::Free
                },
            )
        }))
        .collect();
    marks.sort_unstable_by_key(|m| m.0);
    let mut runs: Vec<(Range<u64>, Standing)> = Vec::new();
    let mut push = |range: Range<u64>, standing: Standing| {
        if range.is_empty() {
            return;
        }
        match runs.last_mut() {
            Some((last, s)) if *s == standing && last.end == range.start => last.end = range.end,
            _ => runs.push((range, standing)),
        }
    };
    let mut next = 0;
    for (offset, standing) in marks {
        // The plain offsets before this mark: split where the cursors' runs meet.
        for cut in [ahead.start, ahead.end, offset] {
            if cut > next && cut <= offset {
                push(next..cut, default(next));
                next = cut;
            }
        }
        push(offset..offset + 1, standing);
        next = offset + 1;
    }
    for cut in [ahead.start, ahead.end, len] {
        if cut > next {
            push(next..cut, default(next));
            next = cut;
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn each(len: u64, runs: &[(Range<u64>, Standing)]) -> Vec<Standing> {
        let out: Vec<Standing> = runs
            .iter()
            .flat_map(|(r, s)| r.clone().map(move |_| *s))
            .collect();
        assert_eq!(out.len() as u64, len);
        out
    }

    #[test]
    fn offsets_behind_a_cursor_are_sold_unless_held_and_free_again_once_the_hold_ends() {
        use Standing::{Free as F, Held as H, Sold as S};
        let counters = StripeCounters { bottom: 3, top: 2 };
        let chosen = Chosen::from([4]);
        let held = Held::from([(1, 100), (2, 50), (5, 100), (6, 10), (8, 100)]);
        let runs = standings(10, counters, &chosen, &held, 50);
        assert_eq!(each(10, &runs), vec![S, H, F, F, S, H, F, F, H, S]);
    }
}
