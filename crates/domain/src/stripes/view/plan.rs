//! The lucky dip's plan: which ends of which stripes a purchase takes from, or how many
//! ends it claims first, from what the view knows.

use rand::seq::SliceRandom;
use rand::{Rng, RngExt};

use super::{Plan, StripeView};
use crate::stripes::{STRIPE_WRITE_NAMES, STRIPE_WRITE_TICKETS, Side, StripeTake};

impl StripeView {
    /// How many ends to claim for `lacking` tickets: the next ends `opened` will hand
    /// out (as far as this process knows which), until their room covers what is lacking
    /// or `most` of them have room. At least one.
    fn ends_for(&self, lacking: u64, most: usize) -> u32 {
        let (mut held, mut with_room) = (0u64, 0usize);
        let mut slot = self.handed;
        while held < lacking && with_room < most {
            let Some((stripe, side)) = self.end_of(slot) else {
                break;
            };
            let room = match side {
                // Stripes we hold, or whose bottom this same claim would bring.
                Side::Top if self.owns(stripe) || u64::from(stripe) >= self.handed => 0,
                _ => self.takeable(stripe),
            };
            held += room;
            with_room += usize::from(room > 0);
            slot += 1;
        }
        ((slot - self.handed) as u32).max(1)
    }

    /// The most tickets that `cursors` stripes can hold: the sum of the largest rooms.
    fn reachable(&self, cursors: usize) -> u64 {
        let mut rooms: Vec<u64> = (0..self.layout.stripes())
            .map(|s| self.takeable(s))
            .collect();
        if cursors < rooms.len() {
            rooms.select_nth_unstable_by(cursors, |a, b| b.cmp(a));
            rooms.truncate(cursors);
        }
        rooms.iter().sum()
    }

    /// What one write of stripe `s` can take: its room, at most `STRIPE_WRITE_TICKETS`.
    fn takeable(&self, stripe: u32) -> u64 {
        self.room(stripe).min(STRIPE_WRITE_TICKETS)
    }

    /// Chooses the stripes for a purchase of `quantity` tickets: one stripe that fits if
    /// there is one, else the roomiest stripes in turn.
    pub fn plan(&self, quantity: u64, rng: &mut impl Rng) -> Plan {
        let stripes = 0..self.layout.stripes();
        let idle = |&s: &u32| self.busy[s as usize] == 0 && self.room(s) > 0;
        let owned: Vec<(u32, Side)> = stripes
            .clone()
            .filter(idle)
            .filter_map(|s| self.owned[s as usize].map(|side| (s, side)))
            .collect();
        // Cursors one transaction can move besides the purchase record.
        let most = crate::stripes::stripe_budget(self.transaction_items - 1, quantity as usize);
        // Rooms are upper bounds: if the roomiest stripes one transaction can move cannot
        // hold the purchase (as when fewer remain), no claim or retry ever will, so it is
        // refused at once.
        if self.reachable(most) < quantity {
            return if self.remaining() < quantity {
                Plan::NotEnough
            } else {
                Plan::TooFragmented
            };
        }
        if let Some(takes) = self.span(std::slice::from_ref(&owned), quantity, rng)
            && takes.len() <= most
        {
            return Plan::Take(takes);
        }
        // Claim the ends that hold what the purchase lacks, in one request: they are ours
        // alone, so nobody else's purchase meets ours there.
        if !self.all_handed() {
            let own_room: u64 = owned.iter().map(|&(s, _)| self.room(s)).sum();
            let lacking = quantity.saturating_sub(own_room).max(1);
            let room_for = most.saturating_sub(owned.len()).max(1);
            return Plan::Claim(self.ends_for(lacking, room_for));
        }
        // Every end has gone out: our own ends, then the top ends that others hold, in
        // random order so that processes spread out, then stripes that other purchases of
        // this process use.
        let mut others: Vec<(u32, Side)> = stripes
            .clone()
            .filter(|s| !self.owns(*s) && idle(s))
            .map(|s| (s, Side::Top))
            .collect();
        others.shuffle(rng);
        // Where buyers choose, a stripe never seen is read before a first write on it:
        // those seen go first.
        if self.marked {
            others.sort_by_key(|&(s, _)| !self.seen[s as usize]);
        }
        let busy: Vec<(u32, Side)> = stripes
            .filter(|&s| self.busy[s as usize] > 0 && self.room(s) > 0)
            .map(|s| (s, self.owned[s as usize].unwrap_or(Side::Top)))
            .collect();
        match self.span(&[owned, others, busy], quantity, rng) {
            Some(takes) if takes.len() <= most => Plan::Take(takes),
            _ => Plan::TooFragmented,
        }
    }

    /// `count` free offsets of one end of a stripe: the first ones from its cursor on, or
    /// offsets behind a cursor whose hold is over, each ticket from either in proportion
    /// to how many they hold, so the dip stays uniform over what is free.
    fn walk(&self, stripe: u32, side: Side, count: u64, rng: &mut impl Rng) -> StripeTake {
        let len = self.layout.len(stripe);
        let known = self.known[stripe as usize];
        let (cursor, other) = match side {
            Side::Bottom => (known.bottom, known.top),
            Side::Top => (known.top, known.bottom),
        };
        let chosen = &self.chosen[stripe as usize];
        let held = &self.held[stripe as usize];
        let mut pool = self.returned(stripe);
        let mut ahead = self.room(stripe).saturating_sub(pool.len() as u64);
        let mut take = StripeTake {
            stripe,
            side,
            cursor,
            ..StripeTake::default()
        };
        let mut step = cursor;
        // Room in the write's expression for one more free ticket.
        let fits = |t: &StripeTake| {
            2 * t.taken.len() - t.ended.len()
                + t.returned.len()
                + t.skipped.len()
                + 2 * t.passed.len()
                < STRIPE_WRITE_NAMES - 1
        };
        while take.count() < count && fits(&take) {
            let back = pool.len() as u64;
            if back > 0 && rng.random_range(0..back + ahead) < back {
                let pick = rng.random_range(0..pool.len());
                take.returned.push(pool.swap_remove(pick));
                continue;
            }
            let taken = take.taken.len();
            while take.taken.len() == taken && step < len.saturating_sub(other) && fits(&take) {
                let offset = match side {
                    Side::Bottom => step,
                    Side::Top => len - 1 - step,
                };
                step += 1;
                match held.get(&offset) {
                    _ if chosen.contains(&offset) => take.skipped.push(offset),
                    Some(&end) if !self.over(stripe, end) => take.passed.push(offset),
                    mark => {
                        if mark.is_some() {
                            take.ended.push(offset);
                        }
                        take.taken.push(offset);
                    }
                }
            }
            if take.taken.len() == taken {
                break;
            }
            ahead = ahead.saturating_sub(1);
        }
        take.other_at_most = len - take.next_cursor();
        take
    }

    /// Takes `quantity` from the tiers of candidates, best tier first. The first tier (our
    /// own ends, whose cursors are fresh) is used up emptiest first. In the others the
    /// first stripe in their order that fits the rest wins; without one the roomiest is
    /// taken and the search goes on. `None` when the candidates hold too little.
    fn span(
        &self,
        tiers: &[Vec<(u32, Side)>],
        quantity: u64,
        rng: &mut impl Rng,
    ) -> Option<Vec<StripeTake>> {
        let mut takes: Vec<StripeTake> = Vec::new();
        let mut need = quantity;
        while need > 0 {
            let unused = |c: &&(u32, Side)| !takes.iter().any(|t| t.stripe == c.0);
            let room = |c: &&(u32, Side)| self.takeable(c.0);
            // Our own ends first, the emptiest first, so that they get finished instead of
            // left with crumbs that others would have to come for.
            let own = tiers[0].iter().filter(unused).min_by_key(room);
            let others = || tiers[1..].iter().flatten().filter(unused);
            let &(stripe, side) = own
                .or_else(|| others().find(|c| room(c) >= need))
                .or_else(|| others().max_by_key(room))?;
            let take = self.walk(stripe, side, self.takeable(stripe).min(need), rng);
            if take.count() == 0 {
                return None;
            }
            need -= take.count();
            takes.push(take);
        }
        Some(takes)
    }
}
