//! Blocks of a fast series: a process reserves a block of counters with one atomic `ADD`
//! and hands them out from memory ([`Spare`]), reserving more only when it runs dry. How
//! many it reserves next follows the rate it uses them at ([`BlockSize`]), as Leaf's
//! segment mode does. Counters are never handed out twice: each leaves the spare numbers
//! when it is taken, and comes back only if its write was refused (then it was never
//! written) or its outcome is unknown (then it comes back `doubtful`, and a write that
//! finds it taken drops it).

use std::ops::RangeInclusive;
use std::time::Duration;

use jiff::Timestamp;

/// The largest block a process reserves at once: what a crash can leave unused.
pub const MAX_BLOCK: u64 = 1_000;
/// How long a block should last: a process that used its block up faster reserves twice
/// as many next time, one that took more than twice as long half as many.
pub const BLOCK_TARGET: Duration = Duration::from_secs(10);
/// How long after its reservation a counter may still be handed out: older ones are left
/// unused, so that an order numbered more than this after another has a larger number.
pub const BLOCK_MAX_AGE: Duration = Duration::from_secs(60);

/// One counter taken from the spare numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpareCounter {
    pub counter: u64,
    /// When its block was reserved.
    pub reserved_at: Timestamp,
    /// An earlier write of it may have committed (its answer was lost).
    pub doubtful: bool,
}

/// A run of spare counters reserved at the same moment, all doubtful or none.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    first: u64,
    last: u64,
    reserved_at: Timestamp,
    doubtful: bool,
}

impl Piece {
    fn joins(&self, next: &Piece) -> bool {
        self.last + 1 == next.first
            && self.reserved_at == next.reserved_at
            && self.doubtful == next.doubtful
    }
}

/// The counters a process reserved and has not used, lowest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spare {
    pieces: Vec<Piece>,
}

impl Spare {
    pub fn len(&self) -> u64 {
        self.pieces.iter().map(|p| p.last - p.first + 1).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// Adds a block just reserved.
    pub fn add(&mut self, block: RangeInclusive<u64>, reserved_at: Timestamp) {
        if block.is_empty() {
            return;
        }
        self.insert(Piece {
            first: *block.start(),
            last: *block.end(),
            reserved_at,
            doubtful: false,
        });
    }

    /// Takes up to `count` counters, lowest first.
    pub fn take(&mut self, count: u64) -> Vec<SpareCounter> {
        let mut taken = Vec::new();
        while (taken.len() as u64) < count {
            let Some(piece) = self.pieces.first_mut() else {
                break;
            };
            taken.push(SpareCounter {
                counter: piece.first,
                reserved_at: piece.reserved_at,
                doubtful: piece.doubtful,
            });
            if piece.first == piece.last {
                self.pieces.remove(0);
            } else {
                piece.first += 1;
            }
        }
        taken
    }

    /// Gives back counters that were taken and not written: refused writes keep what they
    /// were, counters whose write has an unknown outcome come back doubtful.
    pub fn give_back(&mut self, counters: impl IntoIterator<Item = SpareCounter>) {
        for c in counters {
            self.insert(Piece {
                first: c.counter,
                last: c.counter,
                reserved_at: c.reserved_at,
                doubtful: c.doubtful,
            });
        }
    }

    /// Leaves the counters reserved before `oldest` unused; returns how many.
    pub fn expire(&mut self, oldest: Timestamp) -> u64 {
        let before = self.len();
        self.pieces.retain(|p| p.reserved_at >= oldest);
        before - self.len()
    }

    /// The spare counters that were never written, as ranges, lowest first.
    pub fn ranges(&self) -> Vec<RangeInclusive<u64>> {
        let mut ranges: Vec<RangeInclusive<u64>> = Vec::new();
        for piece in self.pieces.iter().filter(|p| !p.doubtful) {
            match ranges.last_mut() {
                Some(last) if *last.end() + 1 == piece.first => {
                    *last = *last.start()..=piece.last;
                }
                _ => ranges.push(piece.first..=piece.last),
            }
        }
        ranges
    }

    /// The spare counters whose write has an unknown outcome, lowest first.
    pub fn doubtful(&self) -> Vec<u64> {
        self.pieces
            .iter()
            .filter(|p| p.doubtful)
            .flat_map(|p| p.first..=p.last)
            .collect()
    }

    /// Inserts a piece no counter of which is spare yet, merging it with its neighbours.
    fn insert(&mut self, piece: Piece) {
        let at = self.pieces.partition_point(|p| p.first < piece.first);
        self.pieces.insert(at, piece);
        if at + 1 < self.pieces.len() && self.pieces[at].joins(&self.pieces[at + 1]) {
            self.pieces[at].last = self.pieces.remove(at + 1).last;
        }
        if at > 0 && self.pieces[at - 1].joins(&self.pieces[at]) {
            self.pieces[at - 1].last = self.pieces.remove(at).last;
        }
    }
}

/// How many counters a process reserves next: 1 at first, then doubled while blocks last
/// less than [`BLOCK_TARGET`], halved when one lasted more than twice that, within
/// 1..=[`MAX_BLOCK`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSize(u64);

impl Default for BlockSize {
    fn default() -> Self {
        Self(1)
    }
}

impl BlockSize {
    pub fn get(self) -> u64 {
        self.0
    }

    /// The process ran dry `lasted` after its last reservation.
    pub fn ran_dry(&mut self, lasted: Duration) {
        self.0 = if lasted < BLOCK_TARGET {
            (self.0 * 2).min(MAX_BLOCK)
        } else if lasted < 2 * BLOCK_TARGET {
            self.0
        } else {
            (self.0 / 2).max(1)
        };
    }

    /// The counters to reserve for `missing` more, where the room has `room` left: what
    /// is missing at least, the block size if larger, but near the end of the room no
    /// more than a sixteenth of what is left, so that few counters wait in one process
    /// while another finds the room used up.
    pub fn reservation(self, missing: u64, room: u64) -> u64 {
        let share = room.div_ceil(16).max(1);
        missing.max(self.0.min(share)).min(room)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(second: i8) -> Timestamp {
        jiff::tz::Offset::UTC
            .to_timestamp(jiff::civil::date(2026, 11, 29).at(10, 0, second, 0))
            .unwrap()
    }

    fn counters(taken: &[SpareCounter]) -> Vec<u64> {
        taken.iter().map(|c| c.counter).collect()
    }

    #[test]
    fn counters_are_taken_lowest_first_and_never_twice() {
        let mut spare = Spare::default();
        spare.add(11..=15, at(0));
        spare.add(21..=22, at(1));
        assert_eq!(spare.len(), 7);
        let first = spare.take(3);
        assert_eq!(counters(&first), [11, 12, 13]);
        let second = spare.take(10);
        assert_eq!(counters(&second), [14, 15, 21, 22]);
        assert!(spare.is_empty());
        assert!(spare.take(1).is_empty());
    }

    #[test]
    fn counters_given_back_come_first_again_and_keep_their_doubt() {
        let mut spare = Spare::default();
        spare.add(1..=4, at(0));
        let mut taken = spare.take(3);
        taken[1].doubtful = true;
        spare.give_back(taken);
        assert_eq!(spare.ranges(), [1..=1, 3..=4]);
        assert_eq!(spare.doubtful(), [2]);
        let again = spare.take(4);
        assert_eq!(counters(&again), [1, 2, 3, 4]);
        assert_eq!(
            again.iter().map(|c| c.doubtful).collect::<Vec<_>>(),
            [false, true, false, false]
        );
        // Given back whole, the pieces join again.
        spare.give_back(again);
        assert_eq!(spare.pieces.len(), 3);
        spare.give_back(Vec::new());
        assert_eq!(spare.len(), 4);
    }

    #[test]
    fn counters_older_than_the_limit_are_left_unused() {
        let mut spare = Spare::default();
        spare.add(1..=5, at(0));
        spare.add(6..=8, at(30));
        assert_eq!(spare.expire(at(10)), 5);
        assert_eq!(spare.ranges(), [6..=8]);
    }

    #[test]
    fn the_block_size_follows_the_rate() {
        let mut size = BlockSize::default();
        for _ in 0..12 {
            size.ran_dry(Duration::from_secs(1));
        }
        assert_eq!(size.get(), MAX_BLOCK);
        size.ran_dry(Duration::from_secs(15));
        assert_eq!(size.get(), MAX_BLOCK);
        size.ran_dry(Duration::from_secs(60));
        assert_eq!(size.get(), MAX_BLOCK / 2);
        let mut idle = BlockSize::default();
        idle.ran_dry(Duration::from_secs(3_600));
        assert_eq!(idle.get(), 1);
    }

    #[test]
    fn a_reservation_covers_what_is_missing_and_stays_in_the_room() {
        let size = BlockSize(64);
        assert_eq!(size.reservation(1, u64::MAX), 64);
        assert_eq!(size.reservation(100, u64::MAX), 100);
        // Near the end of a room: a sixteenth of what is left, what is missing at least.
        assert_eq!(size.reservation(1, 160), 10);
        assert_eq!(size.reservation(12, 160), 12);
        assert_eq!(size.reservation(1, 3), 1);
        assert_eq!(size.reservation(5, 3), 3);
    }
}
