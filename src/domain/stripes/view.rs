//! One process's view of a draw's stripes, and the lucky dip's plan.

use rand::{Rng, RngExt};

use super::{
    Chosen, Held, STRIPE_WRITE_NAMES, STRIPE_WRITE_TICKETS, Side, StripeCounters, StripeLayout,
    StripeTake,
};

/// What one purchase attempt should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Take(Vec<StripeTake>),
    /// The ends this process holds cannot serve the purchase: ask for this many more
    /// stripe ends from the draw's counter.
    Claim(u32),
    /// As far as the view knows, fewer than the quantity remain.
    NotEnough {
        remaining: u64,
    },
    /// Enough remain, but spread over more stripes than one transaction can update.
    TooFragmented,
}

/// One process's view of a draw's stripes.
///
/// Stripe ends are handed out by one atomic counter on the draw: its values `0..S` are
/// the bottom ends of stripes `0..S` in order, and `S..2S` the top ends of stripes
/// `S-1` down to `0`. While bottoms remain, every process sells from stripes that it
/// opened itself, whose counters it knows exactly, and purchases of different processes
/// never meet. Then the top ends go out, the most recently opened stripes first (those
/// most likely to have room), so each end still has one seller. Only when every end has
/// gone out does a process sell from ends that others hold.
#[derive(Debug, Clone)]
pub struct StripeView {
    layout: StripeLayout,
    /// Items one purchase transaction may hold (DynamoDB's limit, from the store).
    transaction_items: usize,
    /// Lower bounds of the counters: a counter only grows.
    known: Vec<StripeCounters>,
    /// Offsets that buyers chose ahead of the known counters. The set only grows until a
    /// cursor passes a member, so what the view holds is a subset of the table's.
    chosen: Vec<Chosen>,
    /// Held offsets and the ends of their holds, as the table last said.
    held: Vec<Held>,
    /// When the view last read each stripe's holds (the planner's clock then, Unix ms).
    /// A hold it saw live may have been paid for since: its end is trusted only once a
    /// read after it still shows the mark.
    held_read_at: Vec<i64>,
    /// The planner's clock (Unix milliseconds): a hold that ends by then is over.
    now: i64,
    /// Purchases of this process in flight per stripe.
    busy: Vec<u32>,
    /// The end of each stripe that this process sells from.
    owned: Vec<Option<Side>>,
    /// Stripes that some process has seen run out, as the draw records them.
    sold_out: Vec<bool>,
    /// Stripe ends handed out by the draw's counter, as far as this process knows
    /// (at most `2S`).
    handed: u64,
    /// Stripes whose item this process has seen (read, or returned by a cancellation).
    seen: Vec<bool>,
    /// Buyers choose or hold numbers in this draw, as far as this process has seen.
    marked: bool,
}

impl StripeView {
    pub fn new(layout: StripeLayout, transaction_items: usize) -> Self {
        let stripes = layout.stripes() as usize;
        Self {
            layout,
            transaction_items,
            known: vec![StripeCounters::default(); stripes],
            chosen: vec![Chosen::new(); stripes],
            held: vec![Held::new(); stripes],
            held_read_at: vec![0; stripes],
            now: 0,
            busy: vec![0; stripes],
            owned: vec![None; stripes],
            sold_out: vec![false; stripes],
            handed: 0,
            seen: vec![false; stripes],
            marked: false,
        }
    }

    /// Every stripe has been opened by someone.
    pub fn all_open(&self) -> bool {
        self.handed >= u64::from(self.layout.stripes())
    }

    /// Every end, bottom and top, has been handed out.
    pub fn all_handed(&self) -> bool {
        self.handed >= 2 * u64::from(self.layout.stripes())
    }

    /// The stripe whose end the counter value `slot` stands for, and which end.
    fn end_of(&self, slot: u64) -> Option<(u32, Side)> {
        let stripes = u64::from(self.layout.stripes());
        if slot < stripes {
            Some((slot as u32, Side::Bottom))
        } else if slot < 2 * stripes {
            Some(((2 * stripes - 1 - slot) as u32, Side::Top))
        } else {
            None
        }
    }

    pub fn owns(&self, stripe: u32) -> bool {
        self.owned[stripe as usize].is_some()
    }

    /// Records what the table says of a stripe: its counters and its chosen offsets.
    pub fn learn(&mut self, stripe: u32, counters: StripeCounters, chosen: &Chosen) {
        let known = &mut self.known[stripe as usize];
        known.bottom = known.bottom.max(counters.bottom);
        known.top = known.top.max(counters.top);
        self.seen[stripe as usize] = true;
        self.marked |= !chosen.is_empty();
        self.chosen[stripe as usize].extend(chosen);
        self.prune(stripe);
    }

    /// Records the holds of a stripe as the table says (they come and go, so the newest
    /// read replaces what the view held).
    pub fn learn_held(&mut self, stripe: u32, held: &Held) {
        self.marked |= !held.is_empty();
        self.held[stripe as usize].clone_from(held);
        self.held_read_at[stripe as usize] = self.now;
    }

    /// Sets the planner's clock (Unix milliseconds) before a plan.
    pub fn at(&mut self, now: i64) {
        self.now = now;
    }

    /// Records a hold of `offsets` until `end`, or its release (`end` 0).
    pub fn hold(&mut self, stripe: u32, offsets: &[u64], end: i64) {
        self.mark();
        let held = &mut self.held[stripe as usize];
        for &offset in offsets {
            held.insert(offset, end);
        }
    }

    /// The end of the hold on an offset, as the view knows it.
    pub fn hold_end(&self, stripe: u32, offset: u64) -> Option<i64> {
        self.held[stripe as usize].get(&offset).copied()
    }

    /// Whether the view knows held offsets on the stripe. A hold may have been released
    /// or have ended since the view learned it, so its room may be short by them.
    pub fn has_held(&self, stripe: u32) -> bool {
        !self.held[stripe as usize].is_empty()
    }

    /// The planner's clock.
    pub fn now(&self) -> i64 {
        self.now
    }

    /// Whether the offset is behind one of the known counters.
    pub fn is_behind(&self, stripe: u32, offset: u64) -> bool {
        let known = self.known[stripe as usize];
        offset < known.bottom || offset >= self.layout.len(stripe).saturating_sub(known.top)
    }

    /// Whether a hold of `stripe` ending at `end` is over and the view knows its number is
    /// free: the hold ended by the planner's clock, and the view read the mark after
    /// that. A hold that the view saw live may have been paid for since; the cursors pass
    /// it like a live one, and a later read tells.
    fn over(&self, stripe: u32, end: i64) -> bool {
        end <= self.now && end <= self.held_read_at[stripe as usize]
    }

    /// The stripes this process sells from where a hold it saw live has ended since it
    /// last read them: a read tells whether their numbers came back.
    pub fn ended_unread(&self) -> Vec<u32> {
        (0..self.layout.stripes())
            .filter(|&s| self.owns(s) && !self.sold_out[s as usize])
            .filter(|&s| {
                let read_at = self.held_read_at[s as usize];
                self.held[s as usize]
                    .values()
                    .any(|&end| end <= self.now && end > read_at)
            })
            .collect()
    }

    /// Held offsets behind a cursor whose hold is over: free again.
    fn returned(&self, stripe: u32) -> Vec<u64> {
        self.held[stripe as usize]
            .iter()
            .filter(|&(&offset, &end)| self.over(stripe, end) && self.is_behind(stripe, offset))
            .map(|(&offset, _)| offset)
            .collect()
    }

    /// Records a committed purchase: its counters, and the ends it sold from as ours.
    pub fn committed(&mut self, takes: &[StripeTake]) {
        for take in takes {
            let held = &mut self.held[take.stripe as usize];
            for offset in take.returned.iter().chain(&take.ended) {
                held.remove(offset);
            }
            let known = &mut self.known[take.stripe as usize];
            let counter = match take.side {
                Side::Bottom => &mut known.bottom,
                Side::Top => &mut known.top,
            };
            *counter = (*counter).max(take.next_cursor());
            self.owned[take.stripe as usize].get_or_insert(take.side);
            self.prune(take.stripe);
        }
    }

    /// Records chosen offsets that a committed purchase took: ahead of the cursors, and
    /// `returned` behind them.
    pub fn chose(&mut self, stripe: u32, offsets: &[u64], returned: &[u64]) {
        self.mark();
        let held = &mut self.held[stripe as usize];
        for offset in offsets.iter().chain(returned) {
            held.remove(offset);
        }
        self.chosen[stripe as usize].extend(offsets);
        self.prune(stripe);
    }

    /// Drops chosen offsets that a cursor has passed: its count covers them now.
    fn prune(&mut self, stripe: u32) {
        let len = self.layout.len(stripe);
        let known = self.known[stripe as usize];
        self.chosen[stripe as usize].retain(|&o| o >= known.bottom && o < len - known.top);
    }

    /// What the view knows of a stripe: its counters (lower bounds) and chosen offsets.
    pub fn known(&self, stripe: u32) -> (StripeCounters, &Chosen) {
        (self.known[stripe as usize], &self.chosen[stripe as usize])
    }

    pub fn layout(&self) -> StripeLayout {
        self.layout
    }

    /// Items one purchase transaction may hold.
    pub fn transaction_items(&self) -> usize {
        self.transaction_items
    }

    /// Records that buyers choose or hold numbers in this draw.
    pub fn mark(&mut self) {
        self.marked = true;
    }

    /// The stripes to read before a lucky dip from `touched`, in a draw where buyers
    /// choose or hold numbers: a first write on a stripe whose marks the view has not
    /// seen would fail once on them. The unseen stripes among `touched`, and in the same
    /// read the unseen stripes of the ends the counter hands out next, up to `most`, so
    /// that the ends this process claims later are known when it gets them. Nothing in a
    /// draw where nobody chose or held, or when every touched stripe has been seen.
    pub fn read_ahead(&self, touched: &[u32], most: usize) -> Vec<u32> {
        if !self.marked {
            return Vec::new();
        }
        let unseen = |s: u32| !self.seen[s as usize];
        let mut stripes: Vec<u32> = touched.iter().copied().filter(|&s| unseen(s)).collect();
        if stripes.is_empty() {
            return stripes;
        }
        let slots = self.handed..2 * u64::from(self.layout.stripes());
        for (stripe, _) in slots.filter_map(|slot| self.end_of(slot)) {
            if stripes.len() >= most {
                break;
            }
            if unseen(stripe) && !self.sold_out[stripe as usize] && !stripes.contains(&stripe) {
                stripes.push(stripe);
            }
        }
        stripes
    }

    /// Records that `stripe` has run out.
    pub fn sold_out(&mut self, stripe: u32) {
        if let Some(flag) = self.sold_out.get_mut(stripe as usize) {
            *flag = true;
        }
    }

    /// Stripes this process has seen run out that the draw does not record yet.
    pub fn unreported_sold_out(&self) -> Vec<u32> {
        (0..self.layout.stripes())
            .filter(|&s| !self.sold_out[s as usize] && self.room(s) == 0)
            // A stripe with holds may get numbers back when they end.
            .filter(|&s| self.held[s as usize].is_empty())
            .collect()
    }

    /// Records how many stripe ends the draw's counter has handed out, as a read found.
    pub fn handed_at_least(&mut self, opened: u64) {
        self.handed = self
            .handed
            .max(opened.min(2 * u64::from(self.layout.stripes())));
    }

    /// Whether buyers choose or hold numbers in this draw, as far as the view has seen.
    pub fn marked(&self) -> bool {
        self.marked
    }

    /// Records the result of a claim: the ends that the `count` counter values from
    /// `first` stand for are ours (a process keeps the bottom of a stripe it opened).
    pub fn claimed(&mut self, first: u64, count: u32) {
        let end = first + u64::from(count);
        for slot in first..end {
            if let Some((stripe, side)) = self.end_of(slot) {
                self.owned[stripe as usize].get_or_insert(side);
            }
        }
        self.handed = self
            .handed
            .max(end.min(2 * u64::from(self.layout.stripes())));
    }

    /// How many ends to claim for `lacking` tickets: the next ends the counter will hand
    /// out (as far as this process knows which), until their room covers what is lacking
    /// or `most` of them have room. At least one.
    fn ends_for(&self, lacking: u64, most: usize) -> u32 {
        let (mut count, mut held, mut with_room) = (0u32, 0u64, 0usize);
        let mut slot = self.handed;
        while held < lacking && with_room < most {
            let Some((stripe, side)) = self.end_of(slot) else {
                break;
            };
            let room = match side {
                Side::Bottom => self.takeable(stripe),
                // Stripes we hold, or whose bottom this same claim would bring.
                Side::Top if self.owns(stripe) || u64::from(stripe) >= self.handed => 0,
                Side::Top => self.takeable(stripe),
            };
            held += room;
            with_room += usize::from(room > 0);
            count += 1;
            slot += 1;
        }
        count.max(1)
    }

    pub fn set_busy(&mut self, takes: &[StripeTake], busy: bool) {
        for take in takes {
            let count = &mut self.busy[take.stripe as usize];
            *count = if busy { *count + 1 } else { *count - 1 };
        }
    }

    pub fn room(&self, stripe: u32) -> u64 {
        if self.sold_out[stripe as usize] {
            return 0;
        }
        let known = self.known[stripe as usize];
        let (mut live_ahead, mut returned) = (0u64, 0u64);
        for (&offset, &end) in &self.held[stripe as usize] {
            match (self.over(stripe, end), self.is_behind(stripe, offset)) {
                (false, false) => live_ahead += 1,
                (true, true) => returned += 1,
                _ => {}
            }
        }
        self.layout.len(stripe).saturating_sub(
            known.bottom + known.top + self.chosen[stripe as usize].len() as u64 + live_ahead,
        ) + returned
    }

    pub fn remaining(&self) -> u64 {
        (0..self.layout.stripes()).map(|s| self.room(s)).sum()
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
        let idle = |s: &u32| self.busy[*s as usize] == 0 && self.room(*s) > 0;
        let owned: Vec<(u32, Side)> = stripes
            .clone()
            .filter(idle)
            .filter_map(|s| self.owned[s as usize].map(|side| (s, side)))
            .collect();
        // Cursors one transaction can move besides the purchase record.
        let most = super::stripe_budget(self.transaction_items - 1, quantity as usize);
        let remaining = self.remaining();
        if self.all_open() && remaining < quantity {
            return Plan::NotEnough { remaining };
        }
        // Rooms are upper bounds: if the roomiest stripes one transaction can move cannot
        // hold the purchase, no claim or retry ever will, so it is refused at once.
        if self.reachable(most) < quantity {
            return if remaining < quantity {
                Plan::NotEnough { remaining }
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
            .filter(|s| !self.owns(*s))
            .filter(idle)
            .map(|s| (s, Side::Top))
            .collect();
        for i in (1..others.len()).rev() {
            others.swap(i, rng.random_range(0..=i));
        }
        let busy: Vec<(u32, Side)> = stripes
            .filter(|s| self.busy[*s as usize] > 0 && self.room(*s) > 0)
            .map(|s| (s, self.owned[s as usize].unwrap_or(Side::Top)))
            .collect();
        let takes = self.span(&[owned, others, busy], quantity, rng);
        let Some(takes) = takes else {
            return Plan::TooFragmented;
        };
        if takes.len() > most {
            return Plan::TooFragmented;
        }
        Plan::Take(takes)
    }

    /// `count` free offsets of one end of a stripe: the first ones from `cursor` on, or
    /// offsets behind a cursor whose hold is over, each ticket from either in proportion
    /// to how many they hold, so the dip stays uniform over what is free.
    fn walk(
        &self,
        stripe: u32,
        side: Side,
        cursor: u64,
        count: u64,
        rng: &mut impl Rng,
    ) -> StripeTake {
        let len = self.layout.len(stripe);
        let known = self.known[stripe as usize];
        let other = match side {
            Side::Bottom => known.top,
            Side::Top => known.bottom,
        };
        let chosen = &self.chosen[stripe as usize];
        let held = &self.held[stripe as usize];
        let mut pool = self.returned(stripe);
        let mut ahead = self.room(stripe).saturating_sub(pool.len() as u64);
        let mut take = StripeTake {
            stripe,
            side,
            cursor,
            taken: Vec::with_capacity(count as usize),
            skipped: Vec::new(),
            passed: Vec::new(),
            returned: Vec::new(),
            ended: Vec::new(),
            other_at_most: 0,
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
            let mut found = false;
            while !found && step < len.saturating_sub(other) && fits(&take) {
                let offset = match side {
                    Side::Bottom => step,
                    Side::Top => len - 1 - step,
                };
                step += 1;
                match held.get(&offset) {
                    _ if chosen.contains(&offset) => take.skipped.push(offset),
                    Some(&end) if !self.over(stripe, end) => take.passed.push(offset),
                    Some(_) => {
                        take.ended.push(offset);
                        take.taken.push(offset);
                        found = true;
                    }
                    None => {
                        take.taken.push(offset);
                        found = true;
                    }
                }
            }
            if !found {
                break;
            }
            ahead = ahead.saturating_sub(1);
        }
        take.other_at_most = len - take.next_cursor();
        take
    }

    /// Takes `quantity` from the tiers of candidates, best tier first. The first tier (our
    /// own ends, whose counters are fresh) is used up emptiest first. In the others the
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
            let own = tiers
                .first()
                .and_then(|own| own.iter().filter(unused).min_by_key(room));
            let &(stripe, side) = own.or_else(|| {
                tiers[1..]
                    .iter()
                    .find_map(|tier| {
                        tier.iter()
                            .filter(unused)
                            .find(|c| self.takeable(c.0) >= need)
                    })
                    .or_else(|| tiers[1..].iter().flatten().filter(unused).max_by_key(room))
            })?;
            let count = self.takeable(stripe).min(need);
            let known = self.known[stripe as usize];
            let cursor = match side {
                Side::Bottom => known.bottom,
                Side::Top => known.top,
            };
            let take = self.walk(stripe, side, cursor, count, rng);
            if take.count() == 0 {
                return None;
            }
            need -= take.count();
            takes.push(take);
        }
        Some(takes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::draw::DrawConfig;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    /// DynamoDB's limit, as the store passes it.
    const TRANSACTION_ITEMS: usize = 100;

    fn view(total: u64, stripes: u32) -> StripeView {
        StripeView::new(
            DrawConfig::new(total, Some(10), Some(stripes))
                .unwrap()
                .layout(),
            TRANSACTION_ITEMS,
        )
    }

    fn rng() -> StdRng {
        StdRng::seed_from_u64(7)
    }

    fn takes(plan: Plan) -> Vec<StripeTake> {
        match plan {
            Plan::Take(takes) => takes,
            other => panic!("expected takes, got {other:?}"),
        }
    }

    fn counters(bottom: u64, top: u64) -> StripeCounters {
        StripeCounters { bottom, top }
    }

    /// Learns what a table read says of a stripe nobody chose numbers of.
    fn learn(stripe: u32, counters: StripeCounters, view: &mut StripeView) {
        view.learn(stripe, counters, &Chosen::new());
    }

    /// Every stripe open and sold out from its bottom but for the given rooms.
    fn all_open_with_rooms(view: &mut StripeView, rooms: &[(u32, u64)]) {
        view.claimed(u64::from(view.layout.stripes()), 0);
        for s in 0..view.layout.stripes() {
            let room = rooms.iter().find(|r| r.0 == s).map_or(0, |r| r.1);
            learn(s, counters(view.layout.len(s) - room, 0), view);
        }
    }

    fn held(marks: &[(u64, i64)]) -> Held {
        marks.iter().copied().collect()
    }

    #[test]
    fn a_hold_seen_live_is_passed_after_its_end_until_a_read_shows_its_mark_left() {
        let mut view = view(1_000, 10);
        view.claimed(0, 1);
        view.at(1_000);
        view.learn_held(0, &held(&[(1, 5_000)]));
        view.at(9_000);
        // Ended by the clock, but it may have been paid for meanwhile: passed, not taken.
        let plan = takes(view.plan(3, &mut rng()));
        assert_eq!(
            (&plan[0].taken, &plan[0].passed, &plan[0].ended),
            (&vec![0, 2, 3], &vec![1], &vec![])
        );
        assert_eq!(view.room(0), view.layout.len(0) - 1);
        // A read after its end still shows the mark: the number is free.
        view.learn_held(0, &held(&[(1, 5_000)]));
        let plan = takes(view.plan(3, &mut rng()));
        assert_eq!(
            (&plan[0].taken, &plan[0].passed, &plan[0].ended),
            (&vec![0, 1, 2], &vec![], &vec![1])
        );
        assert_eq!(view.room(0), view.layout.len(0));
    }

    #[test]
    fn a_hold_passed_behind_the_cursor_comes_back_once_a_read_shows_it_ended() {
        let mut view = view(1_000, 10);
        view.claimed(0, 1);
        view.at(1_000);
        view.learn_held(0, &held(&[(1, 5_000)]));
        view.committed(&takes(view.plan(3, &mut rng())));
        let len = view.layout.len(0);
        assert_eq!(view.room(0), len - 4);
        view.at(9_000);
        assert_eq!(view.room(0), len - 4);
        assert_eq!(view.ended_unread(), vec![0]);
        view.learn_held(0, &held(&[(1, 5_000)]));
        assert_eq!(view.room(0), len - 3);
        assert!(view.ended_unread().is_empty());
    }

    #[test]
    fn reads_ahead_only_where_buyers_chose_or_held_and_only_stripes_unseen() {
        let mut view = view(1_000, 10);
        view.claimed(0, 2);
        assert!(view.read_ahead(&[1], 100).is_empty());
        view.learn(5, counters(0, 0), &Chosen::from([3]));
        // Stripe 1 and, in the same read, those of the next ends: bottoms 2 to 9 (5 is
        // known), then the tops, all of stripes already listed.
        assert_eq!(view.read_ahead(&[1], 100), vec![1, 2, 3, 4, 6, 7, 8, 9, 0]);
        assert_eq!(view.read_ahead(&[1], 3), vec![1, 2, 3]);
        learn(1, counters(0, 0), &mut view);
        assert!(view.read_ahead(&[1], 100).is_empty());
    }

    #[test]
    fn a_process_without_stripes_claims_one() {
        let view = view(100, 10);
        assert_eq!(view.plan(3, &mut rng()), Plan::Claim(1));
    }

    #[test]
    fn sells_from_the_bottom_of_its_own_stripe_while_it_has_room() {
        let mut view = view(1_000, 10);
        view.claimed(4, 1);
        let len = view.layout.len(4);
        let plan = takes(view.plan(3, &mut rng()));
        assert_eq!(
            plan,
            vec![StripeTake {
                stripe: 4,
                side: Side::Bottom,
                cursor: 0,
                taken: vec![0, 1, 2],
                skipped: vec![],
                passed: vec![],
                returned: vec![],
                ended: vec![],
                other_at_most: len - 3
            }]
        );
        view.committed(&plan);
        assert_eq!(view.room(4), len - 3);
        learn(4, counters(len - 2, 0), &mut view);
        assert_eq!(view.plan(3, &mut rng()), Plan::Claim(1));
    }

    #[test]
    fn uses_up_its_emptiest_own_stripe_first_and_spans_own_stripes() {
        let mut view = view(1_000, 10);
        view.claimed(2, 1);
        view.claimed(5, 1);
        let len2 = view.layout.len(2);
        learn(2, counters(len2 - 3, 0), &mut view);
        let picked = |plan: Plan| -> Vec<(u32, u64)> {
            takes(plan).iter().map(|t| (t.stripe, t.count())).collect()
        };
        assert_eq!(picked(view.plan(2, &mut rng())), vec![(2, 2)]);
        // The three left in stripe 2 go first rather than stay behind as crumbs.
        assert_eq!(picked(view.plan(8, &mut rng())), vec![(2, 3), (5, 5)]);
    }

    #[test]
    fn leaves_stripes_busy_in_this_process_alone() {
        let mut view = view(100, 10);
        view.claimed(1, 1);
        let first = takes(view.plan(2, &mut rng()));
        view.set_busy(&first, true);
        assert_eq!(view.plan(2, &mut rng()), Plan::Claim(1));
        view.set_busy(&first, false);
        assert_eq!(takes(view.plan(2, &mut rng()))[0].stripe, 1);
    }

    #[test]
    fn after_the_last_stripe_the_counter_hands_out_top_ends_newest_first() {
        let mut view = view(1_000, 10);
        view.claimed(8, 1);
        assert!(!view.all_open());
        // Counter values 9, 10 and 11: the bottom of stripe 9, the tops of 9 and 8.
        view.claimed(9, 3);
        assert!(view.all_open());
        learn(8, counters(view.layout.len(8), 0), &mut view);
        learn(9, counters(view.layout.len(9) - 6, 0), &mut view);
        let plan = takes(view.plan(4, &mut rng()));
        assert_eq!(plan.len(), 1);
        let cursor = view.layout.len(9) - 6;
        assert_eq!(
            (plan[0].stripe, plan[0].side, plan[0].cursor),
            (9, Side::Bottom, cursor)
        );
        // A top end we were handed is sold from downwards, with its own counter.
        let mut other = view_with_top_of_six();
        let plan = takes(other.plan(4, &mut rng()));
        let len = other.layout.len(6);
        assert_eq!(
            plan,
            vec![StripeTake {
                stripe: 6,
                side: Side::Top,
                cursor: 0,
                taken: vec![len - 1, len - 2, len - 3, len - 4],
                skipped: vec![],
                passed: vec![],
                returned: vec![],
                ended: vec![],
                other_at_most: len - 4
            }]
        );
        other.committed(&plan);
        assert_eq!(other.room(6), 1);
    }

    /// Every stripe open, only stripe 6 with room (5), and its top end ours.
    fn view_with_top_of_six() -> StripeView {
        let mut view = view(1_000, 10);
        all_open_with_rooms(&mut view, &[(6, 5)]);
        // Counter value 13 stands for the top of stripe 6 (19 - 13).
        view.claimed(13, 1);
        view
    }

    #[test]
    fn claims_the_ends_that_hold_what_is_lacking_skipping_those_known_empty() {
        let mut view = view(1_000, 10);
        all_open_with_rooms(&mut view, &[(8, 2), (6, 5), (2, 9)]);
        view.sold_out(9);
        // Counter values 10..=13 are the tops of 9 (sold out), 8 (2), 7 (none), 6 (5).
        assert_eq!(view.plan(6, &mut rng()), Plan::Claim(4));
        assert_eq!(view.plan(2, &mut rng()), Plan::Claim(2));
        view.claimed(10, 4);
        let plan = takes(view.plan(6, &mut rng()));
        assert_eq!(plan.iter().map(|t| t.count()).sum::<u64>(), 6);
        assert!(
            plan.iter()
                .all(|t| t.side == Side::Top && [6, 8].contains(&t.stripe))
        );
    }

    #[test]
    fn before_the_last_stripe_claims_as_many_stripes_as_the_purchase_lacks() {
        let mut view = view(1_000, 10);
        view.claimed(8, 1);
        let len8 = view.layout.len(8);
        learn(8, counters(len8 - 3, 0), &mut view);
        // 3 left in stripe 8; stripe 9 holds the rest of a purchase of its size + 3.
        let quantity = 3 + view.layout.len(9);
        assert_eq!(view.plan(quantity, &mut rng()), Plan::Claim(1));
        // One more: past the bottom of 9 come the tops of 9 and 8 (ours already, so no
        // help) and of 7, which others opened and may have room.
        assert_eq!(view.plan(quantity + 1, &mut rng()), Plan::Claim(4));
    }

    #[test]
    fn shares_ends_once_every_end_has_gone_out() {
        let mut view = view(1_000, 10);
        all_open_with_rooms(&mut view, &[(3, 4), (6, 5)]);
        view.claimed(20, 0);
        let plan = takes(view.plan(5, &mut rng()));
        assert_eq!(plan.iter().map(|t| t.count()).sum::<u64>(), 5);
        assert!(plan.iter().all(|t| t.side == Side::Top));
    }

    #[test]
    fn a_stripe_recorded_as_sold_out_has_no_room_and_is_reported_until_recorded() {
        let mut view = view(1_000, 10);
        view.claimed(0, 2);
        learn(1, counters(view.layout.len(1), 0), &mut view);
        assert_eq!(view.unreported_sold_out(), vec![1]);
        view.sold_out(1);
        view.sold_out(4);
        assert!(view.unreported_sold_out().is_empty());
        assert_eq!((view.room(1), view.room(4)), (0, 0));
        assert_eq!(
            view.remaining(),
            1_000 - view.layout.len(1) - view.layout.len(4)
        );
    }

    #[test]
    fn own_ends_that_suffice_need_no_claim() {
        let mut view = view(1_000, 10);
        view.claimed(9, 1);
        all_open_with_rooms(&mut view, &[(6, 5), (9, 3)]);
        let own = takes(view.plan(3, &mut rng()));
        assert_eq!((own[0].stripe, own[0].side), (9, Side::Bottom));
        view.committed(&own);
        // The tops of 9 (ours already), 8, 7 and 6.
        assert_eq!(view.plan(3, &mut rng()), Plan::Claim(4));
    }

    #[test]
    fn reports_not_enough_with_what_remains() {
        let view = view_with_top_of_six();
        assert_eq!(view.plan(6, &mut rng()), Plan::NotEnough { remaining: 5 });
        let plan = takes(view.plan(5, &mut rng()));
        assert_eq!(plan.iter().map(|t| t.count()).sum::<u64>(), 5);
    }

    #[test]
    fn refuses_a_purchase_spread_over_more_stripes_than_a_transaction_holds() {
        // 60 stripes with one ticket each: 50 tickets need 50 cursors + 50 tickets + 1.
        let mut view = view(6_000, 60);
        view.claimed(120, 0);
        for s in 0..60 {
            learn(s, counters(view.layout.len(s) - 1, 0), &mut view);
        }
        assert_eq!(view.plan(50, &mut rng()), Plan::TooFragmented);
        assert_eq!(takes(view.plan(49, &mut rng())).len(), 49);
    }

    #[test]
    fn a_purchase_no_transaction_can_hold_is_refused_before_any_claim() {
        // A view that knows nothing yet: 1,024 one-ticket stripes, a purchase of 50 needs
        // 50 cursors besides 51 items, so no claim is sent.
        let fresh = StripeView::new(StripeLayout::new(1_024, 1_024), TRANSACTION_ITEMS);
        assert_eq!(fresh.plan(50, &mut rng()), Plan::TooFragmented);
        assert_eq!(fresh.plan(49, &mut rng()), Plan::Claim(49));
        // Fewer than the quantity left in all: that is "not enough", not fragmentation.
        let mut view = view(100, 10);
        view.claimed(20, 0);
        for s in 0..10 {
            learn(s, counters(view.layout.len(s) - 1, 0), &mut view);
        }
        assert_eq!(view.plan(11, &mut rng()), Plan::NotEnough { remaining: 10 });
    }

    #[test]
    fn a_bundle_is_planned_over_several_stripes_of_at_most_one_write_each() {
        let mut view = view(3_000, 64);
        let mut rng = rng();
        let mut plan = view.plan(320, &mut rng);
        for _ in 0..10 {
            match plan {
                Plan::Claim(count) => {
                    let first = view.handed;
                    view.claimed(first, count);
                    plan = view.plan(320, &mut rng);
                }
                _ => break,
            }
        }
        let takes = takes(plan);
        assert_eq!(takes.iter().map(StripeTake::count).sum::<u64>(), 320);
        assert!(takes.len() <= super::super::BUNDLE_STRIPES);
        assert!(takes.iter().all(|t| t.count() <= STRIPE_WRITE_TICKETS));
    }
}
