use super::*;
use crate::stripes::{BUNDLE_STRIPES, STRIPE_WRITE_TICKETS};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// A view of `total` tickets in `stripes` stripes, with DynamoDB's 100 items a transaction.
fn view(total: u64, stripes: u32) -> StripeView {
    StripeView::new(StripeLayout::new(total, stripes), 100)
}

fn plan(view: &StripeView, quantity: u64) -> Plan {
    view.plan(quantity, &mut StdRng::seed_from_u64(7))
}

fn takes(view: &StripeView, quantity: u64) -> Vec<StripeTake> {
    match plan(view, quantity) {
        Plan::Take(takes) => takes,
        other => panic!("expected takes, got {other:?}"),
    }
}

/// Tickets each take sells, by stripe.
fn sells(takes: &[StripeTake]) -> Vec<(u32, u64)> {
    takes.iter().map(|t| (t.stripe, t.count())).collect()
}

/// A take from one end that meets nothing chosen or held.
fn plain(stripe: u32, side: Side, taken: Vec<u64>, other_at_most: u64) -> StripeTake {
    StripeTake {
        stripe,
        side,
        taken,
        other_at_most,
        ..StripeTake::default()
    }
}

/// Learns a read of a stripe sold from its bottom but for `room`, with nothing chosen.
fn leave(view: &mut StripeView, stripe: u32, room: u64) {
    let bottom = view.layout.len(stripe) - room;
    view.learn(stripe, StripeCursors { bottom, top: 0 }, &Chosen::new());
}

/// Every stripe open and sold out from its bottom but for the given rooms.
fn all_open_with_rooms(view: &mut StripeView, rooms: &[(u32, u64)]) {
    view.claimed(u64::from(view.layout.stripes()), 0);
    for s in 0..view.layout.stripes() {
        leave(view, s, rooms.iter().find(|r| r.0 == s).map_or(0, |r| r.1));
    }
}

/// Stripe 0 ours at 1,000, its offset 1 held until 5,000.
fn held_at_one() -> StripeView {
    let mut view = view(1_000, 10);
    view.claimed(0, 1);
    view.at(1_000);
    view.learn_held(0, &Held::from([(1, 5_000)]));
    view
}

#[test]
fn a_hold_seen_live_is_passed_after_its_end_until_a_read_shows_its_mark_left() {
    let mut view = held_at_one();
    let len = view.layout.len(0);
    view.at(9_000);
    let dip = |view: &StripeView| {
        let take = takes(view, 3).remove(0);
        (take.taken, take.passed, take.ended)
    };
    // Ended by the clock, but it may have been paid for meanwhile: passed, not taken.
    assert_eq!(dip(&view), (vec![0, 2, 3], vec![1], vec![]));
    assert_eq!(view.room(0), len - 1);
    // A read after its end still shows the mark: the number is free.
    view.learn_held(0, &Held::from([(1, 5_000)]));
    assert_eq!(dip(&view), (vec![0, 1, 2], vec![], vec![1]));
    assert_eq!(view.room(0), len);
}

#[test]
fn a_hold_passed_behind_the_cursor_comes_back_once_a_read_shows_it_ended() {
    let mut view = held_at_one();
    let len = view.layout.len(0);
    view.committed(&takes(&view, 3), &[], None);
    assert_eq!(view.room(0), len - 4);
    view.at(9_000);
    assert_eq!((view.room(0), view.ended_unread()), (len - 4, vec![0]));
    view.learn_held(0, &Held::from([(1, 5_000)]));
    assert_eq!((view.room(0), view.ended_unread()), (len - 3, vec![]));
}

#[test]
fn reads_ahead_only_where_buyers_chose_or_held_and_only_stripes_unseen() {
    let mut view = view(1_000, 10);
    view.claimed(0, 2);
    assert!(view.read_ahead([1], 100).is_empty());
    view.learn(5, StripeCursors::default(), &Chosen::from([3]));
    // Stripe 1 and, in the same read, those of the next ends: bottoms 2 to 9 (5 is
    // known), then the tops, all of stripes already listed.
    assert_eq!(view.read_ahead([1], 100), vec![1, 2, 3, 4, 6, 7, 8, 9, 0]);
    assert_eq!(view.read_ahead([1], 3), vec![1, 2, 3]);
    leave(&mut view, 1, 1);
    assert!(view.read_ahead([1], 100).is_empty());
}

#[test]
fn sells_from_the_bottom_of_its_own_stripe_while_it_has_room() {
    let mut view = view(1_000, 10);
    // A process without stripes claims one.
    assert_eq!(plan(&view, 3), Plan::Claim(1));
    view.claimed(4, 1);
    let len = view.layout.len(4);
    let dip = takes(&view, 3);
    assert_eq!(dip, vec![plain(4, Side::Bottom, vec![0, 1, 2], len - 3)]);
    view.committed(&dip, &[], None);
    assert_eq!(view.room(4), len - 3);
    leave(&mut view, 4, 2);
    assert_eq!(plan(&view, 3), Plan::Claim(1));
}

#[test]
fn uses_up_its_emptiest_own_stripe_first_and_spans_own_stripes() {
    let mut view = view(1_000, 10);
    view.claimed(2, 1);
    view.claimed(5, 1);
    leave(&mut view, 2, 3);
    assert_eq!(sells(&takes(&view, 2)), vec![(2, 2)]);
    // The three left in stripe 2 go first rather than stay behind as crumbs.
    assert_eq!(sells(&takes(&view, 8)), vec![(2, 3), (5, 5)]);
}

#[test]
fn leaves_stripes_busy_in_this_process_alone() {
    let mut view = view(100, 10);
    view.claimed(1, 1);
    let first = takes(&view, 2);
    view.set_busy(&first, true);
    assert_eq!(plan(&view, 2), Plan::Claim(1));
    view.set_busy(&first, false);
    assert_eq!(takes(&view, 2)[0].stripe, 1);
}

#[test]
fn after_the_last_stripe_opened_hands_out_top_ends_newest_first() {
    let mut view = view(1_000, 10);
    view.claimed(8, 1);
    assert!(!view.all_open());
    // Values of `opened` 9, 10 and 11: the bottom of stripe 9, the tops of 9 and 8.
    view.claimed(9, 3);
    assert!(view.all_open());
    leave(&mut view, 8, 0);
    leave(&mut view, 9, 6);
    let cursor = view.layout.len(9) - 6;
    let dip = takes(&view, 4);
    assert_eq!(sells(&dip), vec![(9, 4)]);
    assert_eq!((dip[0].side, dip[0].cursor), (Side::Bottom, cursor));
    // A top end we were handed is sold from downwards, with its own cursor.
    let mut other = view_with_top_of_six();
    let len = other.layout.len(6);
    let dip = takes(&other, 4);
    let taken = vec![len - 1, len - 2, len - 3, len - 4];
    assert_eq!(dip, vec![plain(6, Side::Top, taken, len - 4)]);
    other.committed(&dip, &[], None);
    assert_eq!(other.room(6), 1);
}

/// Every stripe open, only stripe 6 with room (5), and its top end ours.
fn view_with_top_of_six() -> StripeView {
    let mut view = view(1_000, 10);
    all_open_with_rooms(&mut view, &[(6, 5)]);
    // Value of `opened` 13 stands for the top of stripe 6 (19 - 13).
    view.claimed(13, 1);
    view
}

#[test]
fn claims_the_ends_that_hold_what_is_lacking_skipping_those_known_empty() {
    let mut view = view(1_000, 10);
    all_open_with_rooms(&mut view, &[(8, 2), (6, 5), (2, 9)]);
    view.sold_out(9);
    // Values of `opened` 10..=13 are the tops of 9 (sold out), 8 (2), 7 (none), 6 (5).
    assert_eq!(plan(&view, 6), Plan::Claim(4));
    assert_eq!(plan(&view, 2), Plan::Claim(2));
    view.claimed(10, 4);
    let dip = takes(&view, 6);
    assert_eq!(sells(&dip), vec![(8, 2), (6, 4)]);
    assert!(dip.iter().all(|t| t.side == Side::Top));
}

#[test]
fn before_the_last_stripe_claims_as_many_stripes_as_the_purchase_lacks() {
    let mut view = view(1_000, 10);
    view.claimed(8, 1);
    leave(&mut view, 8, 3);
    // 3 left in stripe 8; stripe 9 holds the rest of a purchase of its size + 3.
    let quantity = 3 + view.layout.len(9);
    assert_eq!(plan(&view, quantity), Plan::Claim(1));
    // One more: past the bottom of 9 come the tops of 9 and 8 (ours already, so no
    // help) and of 7, which others opened and may have room.
    assert_eq!(plan(&view, quantity + 1), Plan::Claim(4));
}

#[test]
fn shares_ends_once_every_end_has_gone_out() {
    let mut view = view(1_000, 10);
    all_open_with_rooms(&mut view, &[(3, 4), (6, 5)]);
    view.claimed(20, 0);
    let dip = takes(&view, 5);
    assert_eq!(sells(&dip), vec![(6, 5)]);
    assert!(dip.iter().all(|t| t.side == Side::Top));
}

#[test]
fn a_stripe_recorded_as_sold_out_has_no_room_forgets_its_holds_and_is_not_read_again() {
    let mut view = view(1_000, 10);
    view.claimed(0, 10);
    view.at(1_000);
    leave(&mut view, 1, 0);
    assert_eq!(view.unreported_sold_out(), vec![1]);
    for s in [3, 4] {
        view.learn_held(s, &Held::from([(s.into(), 2_000)]));
        leave(&mut view, s, 1);
    }
    assert!(view.may_sell().contains(&3));
    // Another process saw stripes run out with no hold on them: nothing comes back there.
    for s in [1, 3, 5] {
        view.sold_out(s);
    }
    assert!(view.unreported_sold_out().is_empty());
    assert_eq!((view.room(1), view.room(5)), (0, 0));
    assert!(!view.has_held(3) && view.has_held(4));
    assert_eq!(view.may_sell(), vec![0, 2, 4, 6, 7, 8, 9]);
    let gone: u64 = [1, 3, 5].iter().map(|&s| view.layout.len(s)).sum();
    // Stripe 4 has one number left.
    assert_eq!(view.remaining(), 1_000 - gone - view.layout.len(4) + 1);
}

#[test]
fn a_survey_fits_one_read_with_the_stripes_of_the_next_ends_first() {
    let mut view = view(1_000, 10);
    // Bottoms of stripes 0 to 9 and the tops of 9 and 8 are out; 7 has no room.
    view.claimed(0, 12);
    leave(&mut view, 7, 0);
    assert_eq!(view.survey(20), vec![6, 5, 4, 3, 2, 1, 0, 8, 9]);
    assert_eq!(view.survey(4), vec![6, 5, 4, 3]);
}

#[test]
fn own_ends_that_suffice_need_no_claim() {
    let mut view = view(1_000, 10);
    view.claimed(9, 1);
    all_open_with_rooms(&mut view, &[(6, 5), (9, 3)]);
    let own = takes(&view, 3);
    assert_eq!((own[0].stripe, own[0].side), (9, Side::Bottom));
    view.committed(&own, &[], None);
    // The tops of 9 (ours already), 8, 7 and 6.
    assert_eq!(plan(&view, 3), Plan::Claim(4));
}

#[test]
fn refuses_what_remains_too_little_or_too_spread_before_any_claim() {
    // 60 stripes with one ticket each: 50 tickets need 50 cursors + 50 tickets + 1.
    let mut spread = view(6_000, 60);
    // Fewer than the quantity left in all: that is "not enough", not fragmentation.
    let mut few = view(100, 10);
    for view in [&mut spread, &mut few] {
        let stripes = view.layout.stripes();
        view.claimed(2 * u64::from(stripes), 0);
        (0..stripes).for_each(|s| leave(view, s, 1));
    }
    // A view that knows nothing yet: 1,024 one-ticket stripes, so no claim is sent.
    let fresh = view(1_024, 1_024);
    let six = view_with_top_of_six();
    for (view, quantity, refusal) in [
        (&six, 6, Plan::NotEnough),
        (&spread, 50, Plan::TooFragmented),
        (&fresh, 50, Plan::TooFragmented),
        (&fresh, 49, Plan::Claim(49)),
        (&few, 11, Plan::NotEnough),
    ] {
        assert_eq!(plan(view, quantity), refusal, "{quantity}");
    }
    assert_eq!((six.remaining(), few.remaining()), (5, 10));
    assert_eq!(sells(&takes(&six, 5)), vec![(6, 5)]);
    assert_eq!(takes(&spread, 49).len(), 49);
}

#[test]
fn a_bundle_is_planned_over_several_stripes_of_at_most_one_write_each() {
    let mut view = view(3_000, 64);
    for _ in 0..10 {
        if let Plan::Claim(count) = plan(&view, 320) {
            view.claimed(view.handed, count);
        }
    }
    let dip = takes(&view, 320);
    assert_eq!(dip.iter().map(StripeTake::count).sum::<u64>(), 320);
    assert!(dip.len() <= BUNDLE_STRIPES);
    assert!(dip.iter().all(|t| t.count() <= STRIPE_WRITE_TICKETS));
}

#[test]
fn the_next_end_is_unseen_until_its_stripe_is_read_or_known_sold_out() {
    let mut view = view(1_000, 10);
    // Every bottom is out: the next end is the top of stripe 9.
    view.claimed(0, 10);
    assert!(view.next_end_unseen());
    leave(&mut view, 9, 1);
    assert!(!view.next_end_unseen());
    // The top of 9 is out too; 8 is recorded sold out, so the next that may sell is 7.
    view.claimed(10, 1);
    view.sold_out(8);
    assert!(view.next_end_unseen());
    leave(&mut view, 7, 1);
    assert!(!view.next_end_unseen());
}

#[test]
fn every_ticket_is_known_sold_only_with_no_room_and_no_hold_mark_or_once_recorded() {
    let mut view = view(100, 4);
    assert!(!view.all_sold());
    all_open_with_rooms(&mut view, &[]);
    assert!(view.all_sold());
    // A held number the cursor passed may come back: not proven sold.
    view.at(1_000);
    view.learn_held(2, &Held::from([(0, 5_000)]));
    assert_eq!(view.remaining(), 0);
    assert!(!view.all_sold());
    // A draw recorded sold out has no stripe with room or holds.
    let mut view = held_at_one();
    view.all_sold_out();
    assert_eq!((view.remaining(), view.live_held()), (0, 0));
    assert!(view.all_sold());
    assert!(view.may_sell().is_empty() && view.unreported_sold_out().is_empty());
}
