//! A draw's public facts at one moment, from what its stripes hold: numbers sold, held
//! and free, and how many numbers of each instant prize are still unsold. Pure logic: no
//! I/O. Counts only: nothing here returns which number is which.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Draw, DrawStatus};
use crate::availability::StripeMarks;
use crate::ids::DrawId;
use crate::schedule::Schedule;
use crate::spend::Price;
use crate::stripes::{Standing, StripeLayout, standings};

/// What anyone may know of a draw, counted at `read_at`: what its public facts answer
/// says, and what the draw's published facts keep. Counts only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawFacts {
    pub draw_id: DrawId,
    /// The status the draw item had: how it reads at a later moment is
    /// [`Self::status_at`], from its times.
    pub status: DrawStatus,
    /// Every ticket was sold at the count.
    pub sold_out: bool,
    pub schedule: Schedule,
    pub total_tickets: u64,
    pub price: Option<Price>,
    pub standings: Standings,
    /// Tickets voided before the freeze.
    pub voided: u64,
    pub entries: Entries,
    /// The draw's instant prizes in their order; `None` for a draw without.
    pub instant: Option<Vec<InstantCount>>,
    pub read_at: Timestamp,
}

impl DrawFacts {
    /// The draw's status at `now`, which may be later than the count: past `closes_at`
    /// it reads closed at once.
    pub fn status_at(&self, now: Timestamp) -> DrawStatus {
        self.status.reads_at(&self.schedule, self.sold_out, now)
    }
}

/// Entries by channel, as the glossary defines an entry: tickets sold and not voided before
/// the freeze.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Entries {
    pub online: u64,
    pub postal: u64,
}

impl Entries {
    /// The entries of `draw` from its stripes' counts: `sold` tickets, voided ones
    /// included, of which `postal` by post. Stripes read one by one may show a postal
    /// purchase over two stripes on its first (where its channel is counted) before its
    /// second: postal entries never exceed the tickets sold.
    pub fn count(draw: &Draw, sold: u64, postal: u64) -> Self {
        let postal = postal.min(sold);
        let online_voided = draw.voided.saturating_sub(draw.postal_voided);
        Self {
            online: (sold - postal).saturating_sub(online_voided),
            postal: postal.saturating_sub(draw.postal_voided),
        }
    }

    pub fn total(self) -> u64 {
        self.online + self.postal
    }
}

/// An instant prize's winning numbers: how many it has, and of those how many are unsold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstantCount {
    pub prize: String,
    pub count: u32,
    pub remaining: u32,
}

/// Numbers of a draw by standing at one moment; they add up to the draw's total.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Standings {
    /// Sold, voided ones included (they are never sold again).
    pub sold: u64,
    /// Kept by live holds.
    pub held: u64,
    /// Neither sold nor held: what a buyer may get now.
    pub free: u64,
}

/// A winning number of an instant prize, where it lies: its stripe, its offset there and
/// the prize's place in the draw's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WinningPlace {
    pub stripe: u32,
    pub offset: u64,
    pub prize: usize,
}

/// The standings of every number of a draw at `now` (Unix ms): `stripes[i]` is stripe
/// `i`.
pub fn count(layout: StripeLayout, stripes: &[StripeMarks], now: i64) -> Standings {
    let mut total = Standings::default();
    for (stripe, (cursors, chosen, held)) in (0..).zip(stripes) {
        for (run, standing) in standings(layout.len(stripe), *cursors, chosen, held, now) {
            let n = run.end - run.start;
            match standing {
                Standing::Sold => total.sold += n,
                Standing::Held => total.held += n,
                Standing::Free => total.free += n,
            }
        }
    }
    total
}

/// How many winning numbers of each of `prizes` instant prizes are unsold at `now`: held
/// ones count as unsold, since they win nothing until paid for. Every winning number
/// costs the same work, a search in its stripe's runs, whatever it wins and whether it
/// sold, so neither the answer's time nor its shape says which numbers win.
pub fn unsold_prizes(
    layout: StripeLayout,
    stripes: &[StripeMarks],
    now: i64,
    winning: &[WinningPlace],
    prizes: usize,
) -> Vec<u32> {
    let mut by_stripe: BTreeMap<u32, Vec<&WinningPlace>> = BTreeMap::new();
    for place in winning {
        by_stripe.entry(place.stripe).or_default().push(place);
    }
    let mut unsold = vec![0; prizes];
    for (stripe, places) in by_stripe {
        let Some((cursors, chosen, held)) = stripes.get(stripe as usize) else {
            continue;
        };
        let runs = standings(layout.len(stripe), *cursors, chosen, held, now);
        for place in places {
            let at = runs.partition_point(|(run, _)| run.end <= place.offset);
            let sold = runs
                .get(at)
                .is_some_and(|(_, standing)| *standing == Standing::Sold);
            if let Some(count) = unsold.get_mut(place.prize) {
                *count += u32::from(!sold);
            }
        }
    }
    unsold
}

/// One ticket's chance of a prize: `chances` in `out_of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Odds {
    pub chances: u64,
    pub out_of: u64,
}

impl Odds {
    /// `chances` in `out_of`; none when nothing is left to draw from.
    pub fn of(chances: u64, out_of: u64) -> Option<Self> {
        (out_of > 0).then_some(Self { chances, out_of })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stripes::{Chosen, Held, StripeCursors};

    /// Two stripes, of six offsets and of four: the first sold 2 from the bottom and 1
    /// from the top, with offset 2 held until 100; the second with offset 3 chosen and
    /// offset 0 held by a hold that ended at 10.
    fn stripes() -> (StripeLayout, Vec<StripeMarks>) {
        let layout = StripeLayout::new(10, 2);
        assert_eq!((layout.len(0), layout.len(1)), (6, 4));
        let first = (
            StripeCursors { bottom: 2, top: 1 },
            Chosen::new(),
            Held::from([(2, 100)]),
        );
        let second = (
            StripeCursors::default(),
            Chosen::from([3]),
            Held::from([(0, 10)]),
        );
        (layout, vec![first, second])
    }

    #[test]
    fn sold_held_and_free_add_up_to_the_draw() {
        let (layout, stripes) = stripes();
        let counts = count(layout, &stripes, 50);
        assert_eq!(
            counts,
            Standings {
                sold: 4,
                held: 1,
                free: 5
            }
        );
        // Once the hold ends its number is free again.
        assert_eq!(count(layout, &stripes, 100).free, 6);
    }

    #[test]
    fn a_prize_stays_unsold_until_its_number_sells_held_or_not() {
        let (layout, stripes) = stripes();
        let place = |stripe, offset, prize| WinningPlace {
            stripe,
            offset,
            prize,
        };
        let winning = [
            // Sold by the bottom cursor, by the top one, and chosen.
            place(0, 1, 0),
            place(0, 5, 1),
            place(1, 3, 1),
            // Held, free ahead of the cursors, free again once its hold ended.
            place(0, 2, 0),
            place(0, 3, 2),
            place(1, 0, 2),
        ];
        assert_eq!(
            unsold_prizes(layout, &stripes, 50, &winning, 3),
            vec![1, 0, 2]
        );
    }

    #[test]
    fn entries_leave_out_the_tickets_voided_before_the_freeze() {
        use crate::draw::DrawConfig;
        use crate::ids::DrawId;
        use crate::permutation::PermutationKey;
        use crate::seed::DrawSeed;

        let draw = Draw {
            voided: 4,
            postal_voided: 1,
            late_voided: 2,
            ..Draw::new(
                DrawId::parse("d").unwrap(),
                DrawConfig::new(100, None, None).unwrap(),
                PermutationKey::from_bytes(&[7; 16]).unwrap(),
                DrawSeed::from_bytes(&[9; 32]).unwrap(),
                Timestamp::UNIX_EPOCH,
            )
        };
        let entries = Entries::count(&draw, 20, 5);
        assert_eq!((entries.online, entries.postal), (12, 4));
        assert_eq!(entries.total(), 16);
        // A read torn across stripes never counts more postal entries than sold.
        let torn = Entries::count(
            &Draw {
                voided: 0,
                postal_voided: 0,
                ..draw
            },
            3,
            5,
        );
        assert_eq!((torn.online, torn.postal), (0, 3));
    }

    #[test]
    fn odds_need_something_to_draw_from() {
        assert_eq!(Odds::of(3, 0), None);
        assert_eq!(
            Odds::of(3, 40),
            Some(Odds {
                chances: 3,
                out_of: 40
            })
        );
    }
}
