//! What a lucky dip reads and writes in a draw where buyers choose or hold numbers (T7 in
//! such a draw): a first write on a stripe with marks it has not seen fails once and
//! learns them; a hold it saw live that was paid for since is passed in the same write;
//! near the end, how far the counter has gone, with the stripes, instead of claiming an
//! end that is out; the same in a draw where nobody chose, before a claim of an end whose
//! stripe the process never saw.

use tally::store::{RequestCounter, RequestCounts, Store};
use tally::tickets::{ConvertRequest, NewDraw, PurchaseReceipt, TicketError, TicketService};
use tally_domain::draw::DrawConfig;
use tally_domain::hold::HoldRequest;
use tally_domain::ids::{DrawId, HoldId, PayerId, PaymentId};
use tally_domain::permutation::Permutation;
use tally_domain::purchase::PurchaseRequest;
use tally_domain::stripes::StripeLayout;

use crate::helpers::{fresh_store, store_on};

/// A process of its own, whose client counts its requests.
pub(crate) async fn process(store: &Store) -> (TicketService, RequestCounter) {
    let counter = RequestCounter::default();
    let service = TicketService::new(store_on(store.table(), Some(counter.clone())).await);
    (service, counter)
}

async fn create(service: &TicketService, draw: &str, total: u64, stripes: u32) -> DrawId {
    let draw_id = DrawId::parse(draw).unwrap();
    let config = DrawConfig::new(total, Some(10), Some(stripes))
        .and_then(|c| c.with_hold_seconds(Some(600)))
        .and_then(|c| c.with_max_held_percent(Some(100)))
        .unwrap();
    service
        .create_draw(NewDraw::new(draw_id.clone(), config))
        .await
        .unwrap();
    draw_id
}

async fn layout(store: &Store, draw_id: &DrawId) -> StripeLayout {
    store
        .get_draw(draw_id)
        .await
        .unwrap()
        .unwrap()
        .config
        .layout()
}

/// The number at `offset` of `stripe`.
async fn number_at(store: &Store, draw_id: &DrawId, stripe: u32, offset: u64) -> u64 {
    let draw = store.get_draw(draw_id).await.unwrap().unwrap();
    let total = draw.config.total_tickets();
    let index = draw.config.layout().indices(stripe).start + offset;
    Permutation::new(total, &draw.key).apply(index) + 1
}

pub(crate) fn request(
    draw_id: &DrawId,
    payment: &str,
    quantity: u32,
    numbers: Option<Vec<u64>>,
) -> PurchaseRequest {
    PurchaseRequest {
        draw_id: draw_id.clone(),
        payment_id: PaymentId::parse(payment).unwrap(),
        quantity,
        numbers,
        payer_id: None,
        token: None,
        channel: Default::default(),
        amount: None,
    }
}

/// A lucky dip of `quantity` by `service`: its receipt and the requests its client sent.
async fn dip(
    service: &TicketService,
    counter: &RequestCounter,
    draw_id: &DrawId,
    payment: &str,
    quantity: u32,
) -> (PurchaseReceipt, RequestCounts) {
    let before = counter.snapshot();
    let receipt = service
        .purchase(request(draw_id, payment, quantity, None))
        .await
        .unwrap();
    (receipt, counter.snapshot().since(&before))
}

/// The claims (`UpdateItem`), batch reads and transactions among `sent`.
fn claims_reads_writes(sent: &RequestCounts) -> (u64, u64, u64) {
    (
        sent.of("UpdateItem"),
        sent.of("BatchGetItem"),
        sent.of("TransactWriteItems"),
    )
}

async fn choose(service: &TicketService, draw_id: &DrawId, payment: &str, mut numbers: Vec<u64>) {
    numbers.sort_unstable();
    let quantity = numbers.len() as u32;
    service
        .purchase(request(draw_id, payment, quantity, Some(numbers)))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_first_dip_where_buyers_chose_learns_its_stripe_from_one_cancelled_write() {
    let (store, _table) = fresh_store(None).await;
    let chooser = TicketService::new(store.clone());
    let draw_id = create(&chooser, "chosen-first", 20, 2).await;
    let mut chosen = Vec::new();
    for stripe in 0..2 {
        for offset in 0..4 {
            chosen.push(number_at(&store, &draw_id, stripe, offset).await);
        }
    }
    choose(&chooser, &draw_id, "chosen", chosen).await;
    // A process new to the draw knows nothing of the chosen numbers: its first write is
    // cancelled on them, returns the stripe, and the second passes them. The claim and
    // the two writes are all it sends (the notebook's 2026-12-05 ablation: telling it
    // beforehand saved nothing measurable).
    let (buyer, counter) = process(&store).await;
    let (receipt, sent) = dip(&buyer, &counter, &draw_id, "dip", 3).await;
    let mut expected = Vec::new();
    for offset in 4..7 {
        expected.push(number_at(&store, &draw_id, 0, offset).await);
    }
    assert_eq!(receipt.purchase.tickets, expected);
    assert_eq!(claims_reads_writes(&sent), (1, 0, 2), "{sent}");
    assert_eq!(receipt.requests, 3);
}

#[tokio::test]
async fn a_dip_passes_a_hold_paid_for_since_it_saw_it_in_one_transaction() {
    let (store, _table) = fresh_store(None).await;
    let (seller, counter) = process(&store).await;
    let draw_id = create(&seller, "paid-since", 3, 1).await;
    let n = [
        number_at(&store, &draw_id, 0, 0).await,
        number_at(&store, &draw_id, 0, 1).await,
        number_at(&store, &draw_id, 0, 2).await,
    ];
    let hold_id = HoldId::parse("h").unwrap();
    seller
        .hold(HoldRequest {
            draw_id: draw_id.clone(),
            hold_id: hold_id.clone(),
            quantity: 1,
            numbers: Some(vec![n[1]]),
            payer_id: PayerId::parse("buyer").unwrap(),
        })
        .await
        .unwrap();
    let (first, _) = dip(&seller, &counter, &draw_id, "first", 1).await;
    assert_eq!(first.purchase.tickets, vec![n[0]]);
    // Another process takes the payment: the held number becomes a chosen one.
    let paid = TicketService::new(store.clone())
        .convert(ConvertRequest {
            draw_id: draw_id.clone(),
            payment_id: PaymentId::parse("paid").unwrap(),
            hold_id,
            token: None,
        })
        .await
        .unwrap();
    assert_eq!(paid.purchase.tickets, vec![n[1]]);
    // The seller still knows the number as held: its dip passes it all the same.
    let (second, sent) = dip(&seller, &counter, &draw_id, "second", 1).await;
    assert_eq!(second.purchase.tickets, vec![n[2]]);
    // One transaction; then, as it sold the last ticket, the draw's counts are read and
    // the draw's sell-out is recorded for the listings.
    assert_eq!(
        (second.requests, sent.of("TransactWriteItems")),
        (1, 1),
        "{sent}"
    );
    assert_eq!(
        (sent.of("BatchGetItem"), sent.of("UpdateItem"), sent.total()),
        (1, 1, 3),
        "{sent}"
    );
    let stripe = &store.read_stripes(&draw_id, &[0]).await.unwrap()[0].1;
    assert_eq!(stripe.cursors.bottom, 3);
    assert!(
        stripe.chosen.is_empty() && stripe.held.is_empty(),
        "{stripe:?}"
    );
    let after = seller
        .purchase(request(&draw_id, "third", 1, None))
        .await
        .unwrap_err();
    assert!(
        matches!(after, TicketError::SoldOut { remaining: 0, .. }),
        "{after}"
    );
}

#[tokio::test]
async fn near_the_end_a_process_reads_the_counter_with_the_stripes_instead_of_claiming() {
    let (store, _table) = fresh_store(None).await;
    let chooser = TicketService::new(store.clone());
    let draw_id = create(&chooser, "survey", 10, 2).await;
    let draw = store.get_draw(&draw_id).await.unwrap().unwrap();
    let layout = draw.config.layout();
    let top_of_second = number_at(&store, &draw_id, 1, layout.len(1) - 1).await;
    // The second process chose a number itself: it knows that buyers choose here.
    let (first, first_counter) = process(&store).await;
    let (second, counter) = process(&store).await;
    choose(&second, &draw_id, "chosen", vec![top_of_second]).await;
    let mut first_stripe = Vec::new();
    for offset in 0..layout.len(0) {
        first_stripe.push(number_at(&store, &draw_id, 0, offset).await);
    }
    let mut sold = vec![top_of_second];
    // Four processes get the four ends: the bottoms, then the tops of stripes 1 and 0.
    for (service, requests, payment) in [
        (&first, &first_counter, "bottom-0"),
        (&second, &counter, "bottom-1"),
    ] {
        sold.extend(
            dip(service, requests, &draw_id, payment, 1)
                .await
                .0
                .purchase
                .tickets,
        );
    }
    for payment in ["top-1", "top-0"] {
        let (service, requests) = process(&store).await;
        sold.extend(
            dip(&service, &requests, &draw_id, payment, 1)
                .await
                .0
                .purchase
                .tickets,
        );
    }
    // The second process sells its stripe out, then needs an end. The counter has handed
    // out all four: one read says so, with the stripes that may still sell, and it buys
    // from the first stripe's ends without a claim.
    let mut shared = None;
    for n in 0..layout.len(1) {
        let (receipt, sent) = dip(&second, &counter, &draw_id, &format!("second-{n}"), 1).await;
        assert_eq!(sent.of("UpdateItem"), 0, "{sent}");
        let ticket = receipt.purchase.tickets[0];
        sold.push(ticket);
        if first_stripe.contains(&ticket) {
            shared = Some(sent);
            break;
        }
    }
    let sent = shared.expect("the second process bought from the first stripe");
    assert_eq!(sent.of("BatchGetItem"), 1, "{sent}");
    loop {
        match first
            .purchase(request(&draw_id, &format!("rest-{}", sold.len()), 1, None))
            .await
        {
            Ok(receipt) => sold.extend(receipt.purchase.tickets),
            Err(TicketError::SoldOut { remaining: 0, .. }) => break,
            Err(other) => panic!("{other}"),
        }
    }
    sold.sort_unstable();
    assert_eq!(sold, (1..=10).collect::<Vec<u64>>());
}

/// A draw of 120 stripes where a process chose a number (so it knows that buyers choose),
/// 119 processes opened the bottoms of stripes 0 to 118 and sold nothing yet, and the
/// process got the last bottom and sold its stripe out: that process, and its counter.
async fn wide_draw_at_its_last_bottom(
    store: &Store,
    draw: &str,
) -> (DrawId, StripeLayout, TicketService, RequestCounter) {
    let draw_id = create(&TicketService::new(store.clone()), draw, 240, 120).await;
    let layout = layout(store, &draw_id).await;
    let chosen = number_at(store, &draw_id, 0, 0).await;
    let (buyer, counter) = process(store).await;
    choose(&buyer, &draw_id, "chosen", vec![chosen]).await;
    store.claim_stripes(&draw_id, 119, &[]).await.unwrap();
    let last = layout.len(119);
    let (first, _) = dip(&buyer, &counter, &draw_id, "last-bottom", last as u32).await;
    let mut expected = Vec::new();
    for offset in 0..last {
        expected.push(number_at(store, &draw_id, 119, offset).await);
    }
    assert_eq!(first.purchase.tickets, expected);
    (draw_id, layout, buyer, counter)
}

#[tokio::test]
async fn a_survey_of_a_draw_wider_than_one_read_is_one_request() {
    let (store, _table) = fresh_store(None).await;
    let (draw_id, layout, buyer, counter) = wide_draw_at_its_last_bottom(&store, "wide").await;
    // Its next dip needs an end. The 119 other stripes may all still sell, more than one
    // read holds with the draw item: the survey reads the draw item and the stripes of the
    // next ends in one request, then claims the next top that has room.
    let (second, sent) = dip(&buyer, &counter, &draw_id, "next-end", 1).await;
    assert_eq!(claims_reads_writes(&sent), (1, 1, 1), "{sent}");
    assert_eq!(second.requests, 3);
    let top = number_at(&store, &draw_id, 118, layout.len(118) - 1).await;
    assert_eq!(second.purchase.tickets, vec![top]);
}

#[tokio::test]
async fn a_survey_that_finds_every_end_out_is_enough_to_buy_from_ends_others_hold() {
    let (store, _table) = fresh_store(None).await;
    let (draw_id, layout, buyer, counter) = wide_draw_at_its_last_bottom(&store, "out").await;
    // Others take every top, and sell nothing yet.
    store.claim_stripes(&draw_id, 120, &[]).await.unwrap();
    // The buyer's next dip surveys (119 stripes may still sell: 99 of them fit in the
    // read), learns that every end is out and buys from an end that another holds, on the
    // cursors the survey read or still knows, without a snapshot of every stripe after it.
    let (receipt, sent) = dip(&buyer, &counter, &draw_id, "after-survey", 1).await;
    assert_eq!(claims_reads_writes(&sent), (0, 1, 1), "{sent}");
    assert_eq!(sent.of("TransactGetItems"), 0, "{sent}");
    assert_eq!(receipt.requests, 2);
    let mut tops = Vec::new();
    for stripe in 0..119 {
        tops.push(number_at(&store, &draw_id, stripe, layout.len(stripe) - 1).await);
    }
    assert!(tops.contains(&receipt.purchase.tickets[0]), "{receipt:?}");
}

#[tokio::test]
async fn a_process_that_needs_an_end_it_never_saw_reads_first_where_nobody_chose() {
    let (store, _table) = fresh_store(None).await;
    let creator = TicketService::new(store.clone());
    let draw_id = create(&creator, "plain-survey", 40, 4).await;
    let layout = layout(&store, &draw_id).await;
    // Three processes open the bottoms of stripes 0 to 2: they sell stripes 0 and 2 out
    // and leave 5 numbers in stripe 1. Nobody has recorded a stripe sold out.
    for (payment, quantity) in [
        ("open-0", layout.len(0)),
        ("open-1", 5),
        ("open-2", layout.len(2)),
    ] {
        let (service, requests) = process(&store).await;
        dip_all(&service, &requests, &draw_id, payment, quantity).await;
    }
    // The fourth gets the last bottom and sells its stripe out.
    let (buyer, counter) = process(&store).await;
    dip_all(&buyer, &counter, &draw_id, "bottom-3", layout.len(3)).await;
    // Its next dip needs an end, and the next top is of a stripe it never saw: it reads
    // the counter and the stripes first, then claims past the top of stripe 2, which is
    // out, to the top of stripe 1, instead of claiming stripe 2's and missing there.
    let (receipt, sent) = dip(&buyer, &counter, &draw_id, "next-end", 1).await;
    assert_eq!(claims_reads_writes(&sent), (1, 1, 1), "{sent}");
    assert_eq!(receipt.requests, 3);
    let top = number_at(&store, &draw_id, 1, layout.len(1) - 1).await;
    assert_eq!(receipt.purchase.tickets, vec![top]);
}

/// Lucky dips of `quantity` tickets in all by `service`, at most 10 at a time.
async fn dip_all(
    service: &TicketService,
    counter: &RequestCounter,
    draw_id: &DrawId,
    payment: &str,
    quantity: u64,
) {
    let mut left = quantity;
    for n in 0.. {
        if left == 0 {
            break;
        }
        let part = left.min(10);
        dip(
            service,
            counter,
            draw_id,
            &format!("{payment}-{n}"),
            part as u32,
        )
        .await;
        left -= part;
    }
}
