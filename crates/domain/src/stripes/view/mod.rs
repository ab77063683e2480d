//! One process's view of a draw's stripes; the lucky dip's plan from it is in `plan.rs`,
//! what it knows of hold marks and a hold's lucky dip in `held.rs`.

mod held;
mod plan;

use super::{Chosen, ChosenTake, Held, Side, StripeCursors, StripeLayout, StripeTake};

/// What one purchase attempt should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    Take(Vec<StripeTake>),
    /// The ends this process holds cannot serve the purchase: ask for this many more
    /// stripe ends from the draw's `opened`.
    Claim(u32),
    /// As far as the view knows, fewer than the quantity remain.
    NotEnough,
    /// Enough remain, but spread over more stripes than one transaction can update.
    TooFragmented,
}

/// One process's view of a draw's stripes.
///
/// Stripe ends are handed out by one atomic count on the draw, `opened`: its values `0..S` are
/// the bottom ends of stripes `0..S` in order, and `S..2S` the top ends of stripes
/// `S-1` down to `0`. While bottoms remain, every process sells from stripes that it
/// opened itself, whose cursors it knows exactly, and purchases of different processes
/// never meet. Then the top ends go out, the most recently opened stripes first (those
/// most likely to have room), so each end still has one seller. Only when every end has
/// gone out does a process sell from ends that others hold.
#[derive(Debug, Clone)]
pub struct StripeView {
    layout: StripeLayout,
    /// Items one purchase transaction may hold (DynamoDB's limit, from the store).
    pub(super) transaction_items: usize,
    /// Lower bounds of the cursors: a cursor only grows.
    known: Vec<StripeCursors>,
    /// Offsets that buyers chose ahead of the known cursors. The set only grows until a
    /// cursor passes a member, so what the view holds is a subset of the table's.
    pub(super) chosen: Vec<Chosen>,
    /// Held offsets and the ends of their holds, as the table last said.
    held: Vec<Held>,
    /// The most hold marks each stripe may carry (`held_caps`).
    pub(super) held_caps: Vec<u64>,
    /// When the view last read each stripe's holds (the planner's clock then, Unix ms).
    /// A hold it saw live may have been paid for since: its end is trusted only once a
    /// read after it still shows the mark.
    held_read_at: Vec<i64>,
    /// The planner's clock (Unix milliseconds): a hold that ends by then is over.
    pub(super) now: i64,
    /// Purchases of this process in flight per stripe.
    busy: Vec<u32>,
    /// The end of each stripe that this process sells from.
    owned: Vec<Option<Side>>,
    /// Stripes that some process has seen run out, as the draw records them.
    sold_out: Vec<bool>,
    /// Stripe ends handed out by the draw's `opened`, as far as this process knows
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
            known: vec![StripeCursors::default(); stripes],
            chosen: vec![Chosen::new(); stripes],
            held: vec![Held::new(); stripes],
            held_caps: (0..layout.stripes()).map(|s| layout.len(s)).collect(),
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

    /// The stripe whose end the value `slot` of `opened` stands for, and which end.
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

    /// Records what the table says of a stripe: its cursors and its chosen offsets.
    pub fn learn(&mut self, stripe: u32, cursors: StripeCursors, chosen: &Chosen) {
        let known = &mut self.known[stripe as usize];
        known.bottom = known.bottom.max(cursors.bottom);
        known.top = known.top.max(cursors.top);
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

    /// The end of the hold on an offset, as the view knows it.
    pub fn hold_end(&self, stripe: u32, offset: u64) -> Option<i64> {
        self.held[stripe as usize].get(&offset).copied()
    }

    /// Whether the view knows held offsets on the stripe. A hold may have been released
    /// or have ended since the view learned it, so its room may be short by them.
    pub fn has_held(&self, stripe: u32) -> bool {
        !self.held[stripe as usize].is_empty()
    }

    /// Whether the offset is behind one of the known cursors.
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

    /// Records a committed write: lucky-dip `takes` (their cursors, and the ends it sold
    /// from as ours) and the writes of named numbers (`named`), sold, or with `held`
    /// held until then (released, 0) with the ended marks they swept.
    pub fn committed(&mut self, takes: &[StripeTake], named: &[ChosenTake], held: Option<i64>) {
        for take in takes {
            let held = &mut self.held[take.stripe as usize];
            for offset in take.returned.iter().chain(&take.ended) {
                held.remove(offset);
            }
            let known = &mut self.known[take.stripe as usize];
            let cursor = match take.side {
                Side::Bottom => &mut known.bottom,
                Side::Top => &mut known.top,
            };
            *cursor = (*cursor).max(take.next_cursor());
            self.owned[take.stripe as usize].get_or_insert(take.side);
            self.prune(take.stripe);
        }
        // Named numbers: ahead of the cursors, and behind them (`returned`).
        for take in named {
            self.marked = true;
            let marks = &mut self.held[take.stripe as usize];
            for &offset in take.offsets.iter().chain(&take.returned) {
                match held {
                    Some(end) => marks.insert(offset, end),
                    None => marks.remove(&offset),
                };
            }
            for offset in &take.swept {
                marks.remove(offset);
            }
            if held.is_none() {
                self.chosen[take.stripe as usize].extend(&take.offsets);
                self.prune(take.stripe);
            }
        }
    }

    /// Drops chosen offsets that a cursor has passed: its count covers them now.
    fn prune(&mut self, stripe: u32) {
        let len = self.layout.len(stripe);
        let known = self.known[stripe as usize];
        self.chosen[stripe as usize].retain(|&o| o >= known.bottom && o < len - known.top);
    }

    pub fn layout(&self) -> StripeLayout {
        self.layout
    }

    /// The stripes to read before a lucky dip from `touched`, in a draw where buyers
    /// choose or hold numbers: a first write on a stripe whose marks the view has not
    /// seen would fail once on them. The unseen stripes among `touched`, and in the same
    /// read the unseen stripes of the ends `opened` hands out next, up to `most`, so
    /// that the ends this process claims later are known when it gets them. Nothing in a
    /// draw where nobody chose or held, or when every touched stripe has been seen.
    pub fn read_ahead(&self, touched: impl IntoIterator<Item = u32>, most: usize) -> Vec<u32> {
        let unseen = |s: &u32| !self.seen[*s as usize];
        let mut stripes: Vec<u32> = touched.into_iter().filter(unseen).collect();
        if !self.marked || stripes.is_empty() {
            return Vec::new();
        }
        for stripe in self
            .upcoming()
            .filter(|s| unseen(s) && !self.sold_out[*s as usize])
        {
            if stripes.len() >= most {
                break;
            }
            if !stripes.contains(&stripe) {
                stripes.push(stripe);
            }
        }
        stripes
    }

    /// The stripes of the ends that `opened` hands out next, in the order it hands
    /// them out, from where the view knows it to be.
    fn upcoming(&self) -> impl Iterator<Item = u32> + '_ {
        let slots = self.handed..2 * u64::from(self.layout.stripes());
        slots.filter_map(|slot| self.end_of(slot).map(|(stripe, _)| stripe))
    }

    /// Whether the stripe of the next end `opened` hands out that may still sell is
    /// one this process has never seen: a claim would get an end whose room it only
    /// guesses.
    pub fn next_end_unseen(&self) -> bool {
        self.upcoming()
            .find(|&s| !self.sold_out[s as usize])
            .is_some_and(|s| !self.seen[s as usize])
    }

    /// The stripes that may still sell, ascending: a full stripe stays full unless holds
    /// give numbers back.
    pub fn may_sell(&self) -> Vec<u32> {
        (0..self.layout.stripes())
            .filter(|&s| self.room(s) > 0 || self.has_held(s))
            .collect()
    }

    /// The stripes a survey reads with the draw item, at most `most`: those that may still
    /// sell, the stripes of the ends `opened` hands out next first, as those are what
    /// a claim would get.
    pub fn survey(&self, most: usize) -> Vec<u32> {
        let may_sell = self.may_sell();
        let mut listed = vec![false; self.layout.stripes() as usize];
        let mut stripes = Vec::new();
        for stripe in self.upcoming().chain(may_sell.iter().copied()) {
            let first = !std::mem::replace(&mut listed[stripe as usize], true);
            if first && may_sell.binary_search(&stripe).is_ok() {
                stripes.push(stripe);
            }
        }
        stripes.truncate(most);
        stripes
    }

    /// Records that `stripe` has run out. It is reported so only from a read that showed
    /// no hold on it, and a full stripe gets none after: the holds the view knew there
    /// are gone, and its numbers are not read again.
    pub fn sold_out(&mut self, stripe: u32) {
        if let Some(flag) = self.sold_out.get_mut(stripe as usize) {
            *flag = true;
            self.held[stripe as usize].clear();
        }
    }

    /// Records that every ticket of the draw is sold, as its item says: for good, since a
    /// void never puts a ticket back on sale.
    pub fn all_sold_out(&mut self) {
        (0..self.layout.stripes()).for_each(|s| self.sold_out(s));
    }

    /// Whether what the view knows proves every ticket sold: no stripe has room and none
    /// carries a hold mark (a hold could give a number back, and a cursor that passed a
    /// held number did not sell it). Known cursors are lower bounds, so it stays true.
    pub fn all_sold(&self) -> bool {
        self.remaining() == 0 && self.held.iter().all(|held| held.is_empty())
    }

    /// Stripes this process has seen run out that the draw does not record yet.
    pub fn unreported_sold_out(&self) -> Vec<u32> {
        (0..self.layout.stripes())
            .filter(|&s| !self.sold_out[s as usize] && self.room(s) == 0)
            // A stripe with holds may get numbers back when they end.
            .filter(|&s| self.held[s as usize].is_empty())
            .collect()
    }

    /// Records how many stripe ends the draw's `opened` has handed out, as a read found.
    pub fn handed_at_least(&mut self, opened: u64) {
        self.handed = self
            .handed
            .max(opened.min(2 * u64::from(self.layout.stripes())));
    }

    pub fn marked(&self) -> bool {
        self.marked
    }

    /// Records the result of a claim: the ends that the `count` values of `opened` from
    /// `first` stand for are ours (a process keeps the bottom of a stripe it opened).
    pub fn claimed(&mut self, first: u64, count: u32) {
        let end = first + u64::from(count);
        for slot in first..end {
            if let Some((stripe, side)) = self.end_of(slot) {
                self.owned[stripe as usize].get_or_insert(side);
            }
        }
        self.handed_at_least(end);
    }

    /// Counts the purchases of this process in flight on the takes' stripes.
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
}

#[cfg(test)]
mod tests;
