//! What an answer of sold out costs in requests, in a plain draw (nobody chose or held),
//! from a process that sold in the draw before (warm) and from one new to it (fresh). The
//! answer rests on what the view knows where that proves it: a claim or survey that finds
//! the draw item recording the sell-out, or cursors that leave no room and no hold mark, which
//! record it without a read of the counts.

use tally::store::{RequestCounter, RequestCounts, Store};
use tally::tickets::{NewDraw, TicketError, TicketService};
use tally_domain::draw::DrawConfig;
use tally_domain::ids::DrawId;

use crate::dip_reads::{process, request};
use crate::helpers::fresh_store;

async fn create(service: &TicketService, draw: &str, total: u64, stripes: u32) -> DrawId {
    let draw_id = DrawId::parse(draw).unwrap();
    let config = DrawConfig::new(total, Some(20), Some(stripes)).unwrap();
    service
        .create_draw(NewDraw::new(draw_id.clone(), config))
        .await
        .unwrap();
    draw_id
}

/// A lucky dip by `service`: its answer (the tickets it got) and the requests its client
/// sent for it.
async fn dip(
    service: &TicketService,
    counter: &RequestCounter,
    draw_id: &DrawId,
    payment: &str,
    quantity: u32,
) -> (Result<u64, TicketError>, RequestCounts) {
    let before = counter.snapshot();
    let answer = service
        .purchase(request(draw_id, payment, quantity, None))
        .await
        .map(|r| r.purchase.tickets.len() as u64);
    (answer, counter.snapshot().since(&before))
}

/// Whether the draw item records the sell-out.
async fn recorded(store: &Store, draw_id: &DrawId) -> bool {
    let draw = store.get_draw(draw_id).await.unwrap().unwrap();
    draw.sold_out_at.is_some()
}

/// A lucky dip of `quantity` that must be refused as sold out with `remaining` left: the
/// requests it sent.
async fn sold_out(
    (service, counter): &(TicketService, RequestCounter),
    draw_id: &DrawId,
    payment: &str,
    quantity: u32,
    remaining: u64,
) -> RequestCounts {
    let (answer, sent) = dip(service, counter, draw_id, payment, quantity).await;
    assert!(
        matches!(answer, Err(TicketError::SoldOut { remaining: r, held: 0 }) if r == remaining),
        "{answer:?}"
    );
    sent
}

/// Two processes sell a draw of two stripes out, a whole stripe each, so that neither
/// knows the other's stripe: the draw item does not record the sell-out yet.
async fn sold_by_two(store: &Store, draw: &str) -> (DrawId, [(TicketService, RequestCounter); 2]) {
    let seller = TicketService::new(store.clone());
    let draw_id = create(&seller, draw, 20, 2).await;
    let layout = store
        .get_draw(&draw_id)
        .await
        .unwrap()
        .unwrap()
        .config
        .layout();
    let warm = [process(store).await, process(store).await];
    for (stripe, (service, counter)) in (0..).zip(&warm) {
        let len = layout.len(stripe);
        let payment = format!("stripe-{stripe}");
        let (answer, _) = dip(service, counter, &draw_id, &payment, len as u32).await;
        assert_eq!(answer.unwrap(), len);
    }
    assert!(!recorded(store, &draw_id).await);
    (draw_id, warm)
}

#[tokio::test]
async fn a_sold_out_answer_costs_a_read_of_the_draw_and_of_the_record_once_the_sell_out_is_recorded()
 {
    let (store, _table) = fresh_store(None).await;
    let (draw_id, [first, second]) = sold_by_two(&store, "sold-twice").await;
    // Warm, the sell-out not recorded: its stripe is full, the claim gets no end and the write
    // on the other's stripe misses; that stripe returned, the view proves the sell-out
    // and records it (before: a read of the counts first, four requests).
    let sent = sold_out(&first, &draw_id, "late-1", 1, 0).await;
    assert_eq!(sent.total(), 3, "{sent}");
    assert_eq!(sent.of("BatchGetItem"), 0, "{sent}");
    assert!(recorded(&store, &draw_id).await);
    // Warm, the sell-out recorded: the next end's stripe is one it never saw, so it
    // surveys before claiming; the draw item read with the stripes says so, and only the
    // purchase record is read (before: the counts too, and the record of the sell-out
    // again, four requests).
    let sent = sold_out(&second, &draw_id, "late-2", 1, 0).await;
    assert_eq!(sent.total(), 2, "{sent}");
    assert_eq!(
        (sent.of("BatchGetItem"), sent.of("GetItem")),
        (1, 1),
        "{sent}"
    );
    // Fresh, the sell-out recorded: the claim that caches the draw, and the record.
    let fresh = process(&store).await;
    let sent = sold_out(&fresh, &draw_id, "late-3", 1, 0).await;
    assert_eq!(
        (sent.of("UpdateItem"), sent.of("GetItem")),
        (1, 1),
        "{sent}"
    );
    assert_eq!(sent.total(), 2, "{sent}");
    // Once seen, a sold-out answer is the read of the record alone.
    for (i, process) in [&first, &second, &fresh].into_iter().enumerate() {
        let sent = sold_out(process, &draw_id, &format!("again-{i}"), 1, 0).await;
        assert_eq!(sent.of("GetItem"), 1, "{sent}");
        assert_eq!(sent.total(), 1, "{sent}");
    }
}

#[tokio::test]
async fn a_fresh_process_records_a_sell_out_from_its_one_read_of_the_cursors() {
    let (store, _table) = fresh_store(None).await;
    let (draw_id, _) = sold_by_two(&store, "sold-fresh").await;
    // New to the draw, it claims a top end and misses on it; the next end's stripe is
    // unseen, so it surveys the draw and the stripes that may sell: that read proves the
    // sell-out, which is recorded without a read of its counts, and the purchase record
    // is read (before: the counts read first, six requests).
    let fresh = process(&store).await;
    let sent = sold_out(&fresh, &draw_id, "late", 1, 0).await;
    assert_eq!(
        (
            sent.of("UpdateItem"),
            sent.of("BatchGetItem"),
            sent.of("GetItem")
        ),
        (2, 1, 1),
        "{sent}"
    );
    assert_eq!(
        (sent.of("TransactGetItems"), sent.total()),
        (0, 5),
        "{sent}"
    );
    assert!(recorded(&store, &draw_id).await);
}

#[tokio::test]
async fn a_sold_out_answer_with_tickets_left_rests_on_one_read_of_the_cursors() {
    let (store, _table) = fresh_store(None).await;
    let seller = TicketService::new(store.clone());
    let draw_id = create(&seller, "spread", 40, 4).await;
    // Four processes open a stripe each and buy 9 of its 10: one left on each.
    let mut warm = Vec::new();
    for i in 0..4 {
        let process = process(&store).await;
        let (answer, _) = dip(&process.0, &process.1, &draw_id, &format!("nine-{i}"), 9).await;
        assert_eq!(answer.unwrap(), 9);
        warm.push(process);
    }
    // Warm: a claim of a top end, a write that misses on it, then the read that the exact
    // answer rests on.
    let sent = sold_out(&warm[0], &draw_id, "five", 5, 4).await;
    assert_eq!(sent.of("TransactGetItems"), 1, "{sent}");
    assert_eq!(sent.total(), 3, "{sent}");
    // Fresh: the claim that caches the draw, and the read.
    let fresh = process(&store).await;
    let sent = sold_out(&fresh, &draw_id, "five-fresh", 5, 4).await;
    assert_eq!(sent.of("TransactGetItems"), 1, "{sent}");
    assert_eq!(sent.total(), 2, "{sent}");
    // The four left, bought at once, record the sell-out without a read of the counts.
    let (answer, sent) = dip(&fresh.0, &fresh.1, &draw_id, "four", 4).await;
    assert_eq!(answer.unwrap(), 4);
    assert_eq!(sent.of("BatchGetItem"), 0, "{sent}");
    assert!(recorded(&store, &draw_id).await);
}
