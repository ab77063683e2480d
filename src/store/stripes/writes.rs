//! The writes of a stripe that purchases and holds send: a lucky dip's move of one end,
//! and a write of offsets a buyer named (to sell, hold, convert or release them).

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::super::codec::n;
use super::super::{Store, StoreError};
use super::update::StripeUpdate;
use super::{BOTTOM, ChosenWrite, TOP};
use tally_domain::ids::DrawId;
use tally_domain::stripes::{ChosenTake, Side, StripeTake};

impl Store {
    /// A lucky dip's write of one stripe end: the cursor moves from the value the view
    /// knew past the offsets taken, chosen and held, on the condition that it is unchanged,
    /// the other end has not come this far, the offsets taken are free and the chosen
    /// ones passed are still chosen (they leave the set). Held offsets passed stay held;
    /// offsets whose hold ended by `now` (Unix ms), ahead of the cursor or behind it, are
    /// taken. `postal` entries are counted on the stripe.
    pub(crate) fn dip_update(
        &self,
        draw_id: &DrawId,
        take: &StripeTake,
        postal: u64,
        now: i64,
    ) -> Result<TransactWriteItem, StoreError> {
        let (mine, other) = match take.side {
            Side::Bottom => (BOTTOM, TOP),
            Side::Top => (TOP, BOTTOM),
        };
        let mut update = StripeUpdate::new(self, draw_id, take.stripe, now);
        update.name("#mine", mine);
        update.name("#other", other);
        update.value(":new", n(take.next_cursor()));
        update.sets.push("#mine = :new".to_owned());
        update.value(":old", n(take.cursor));
        // A take that only takes back offsets behind the other end leaves its own cursor
        // where it was, so a cursor of zero may be stored or missing: both read as zero.
        update.conditions.push(if take.cursor == 0 {
            "(attribute_not_exists(#mine) OR #mine = :old)".to_owned()
        } else {
            "#mine = :old".to_owned()
        });
        update.at_most("#other", ":other_max", take.other_at_most);
        for &offset in &take.taken {
            if take.ended.contains(&offset) {
                update.hold_ended(offset);
            } else {
                update.free(offset);
            }
        }
        for &offset in &take.returned {
            update.hold_ended(offset);
        }
        // A hold passed may have been paid for since the view saw it, and become chosen:
        // either way the cursor passes it; a chosen mark leaves, a hold mark stays.
        for &offset in &take.passed {
            let held = update.held(offset);
            let chosen = update.chosen(offset);
            update.conditions.push(format!(
                "(attribute_exists({held}) OR attribute_exists({chosen}))"
            ));
            update.removes.push(chosen);
        }
        for &offset in &take.skipped {
            let name = update.chosen(offset);
            update.conditions.push(format!("attribute_exists({name})"));
            update.removes.push(name);
        }
        update.count_hold_marks(None)?;
        update.count_postal(postal);
        update.build()
    }

    /// A write of offsets a buyer named on one stripe. Offsets ahead of the cursors are
    /// conditioned on no cursor having reached them; offsets behind one (`returned`) on a
    /// hold that ended. To sell or hold, an offset must be neither chosen nor held by a
    /// hold that lives at `now` (Unix ms); to convert or release, held by that very hold.
    /// A hold removes the ended marks it sweeps and is conditioned on the stripe's count
    /// of marks staying within its cap. `postal` entries are counted on the stripe.
    pub(crate) fn choose_update(
        &self,
        draw_id: &DrawId,
        take: &ChosenTake,
        write: ChosenWrite,
        postal: u64,
        now: i64,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut update = StripeUpdate::new(self, draw_id, take.stripe, now);
        // A release ends a mark the same way ahead of the cursors or behind them.
        let release = matches!(write, ChosenWrite::Release { .. });
        if (!take.offsets.is_empty() && !release) || !take.swept.is_empty() {
            update.name("#bottom", BOTTOM);
            update.name("#top", TOP);
            update.at_most("#bottom", ":bottom_max", take.bottom_at_most);
            update.at_most("#top", ":top_max", take.top_at_most);
        }
        if let ChosenWrite::Hold { end }
        | ChosenWrite::Convert { end }
        | ChosenWrite::Release { end } = write
        {
            update.value(":end", n(end));
        }
        update.value(":yes", AttributeValue::Bool(true));
        update.value(":released", n(0));
        // A sale or a new hold takes a number whose hold ended; a conversion or a release,
        // the number of its own hold.
        let (takes_free, mark) = match write {
            ChosenWrite::Sell | ChosenWrite::Hold { .. } => (true, "<= :now"),
            ChosenWrite::Convert { .. } | ChosenWrite::Release { .. } => (false, "= :end"),
        };
        let named = take.offsets.iter().map(|&o| (o, true));
        for (offset, ahead) in named.chain(take.returned.iter().map(|&o| (o, false))) {
            // Behind a cursor every number this write names carries a mark.
            let marked = !ahead || !takes_free || take.hold_marked.contains(&offset);
            let chosen = (ahead && !release).then(|| update.chosen(offset));
            let held = update.held(offset);
            if let (Some(chosen), true) = (&chosen, takes_free) {
                update
                    .conditions
                    .push(format!("attribute_not_exists({chosen})"));
            }
            update.conditions.push(match marked {
                true => format!("{held} {mark}"),
                false => format!("attribute_not_exists({held})"),
            });
            match write {
                // The number is sold: chosen ahead of the cursors (behind them the cursor's
                // count covers it), and its mark goes.
                ChosenWrite::Sell | ChosenWrite::Convert { .. } => {
                    if let Some(chosen) = chosen {
                        update.sets.push(format!("{chosen} = :yes"));
                    }
                    if marked {
                        update.remove_mark(held);
                    }
                }
                ChosenWrite::Hold { .. } => {
                    update.sets.push(format!("{held} = :end"));
                    update.hold_marks += i64::from(!marked);
                }
                // A release ends the mark (0) rather than removing it, so that a lucky dip
                // that means to pass it as held still finds it.
                ChosenWrite::Release { .. } => update.sets.push(format!("{held} = :released")),
            }
        }
        for &offset in &take.swept {
            update.hold_ended(offset);
        }
        let most = matches!(write, ChosenWrite::Hold { .. }).then_some(take.hold_marks_most);
        update.count_hold_marks(most)?;
        update.count_postal(postal);
        update.build()
    }
}
