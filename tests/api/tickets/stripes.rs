//! What the store hands a process: stripe ends from claims, and cursors read with the
//! purchase record.

use super::*;

#[tokio::test]
async fn claims_hand_out_each_stripe_end_once_and_return_the_draw_and_its_sold_out_stripes() {
    let app = spawn_app().await;
    create_draw(&app, "claims", 1_000, json!({"stripes": 40})).await;
    let draw = tally_domain::ids::DrawId::parse("claims").unwrap();
    // 24 processes claiming 1, 2 or 3 ends at once get 48 distinct counter values.
    let claims = (0..24u32).map(|i| {
        let (store, draw) = (app.store.clone(), draw.clone());
        tokio::spawn(async move { store.claim_stripes(&draw, 1 + i % 3, &[]).await })
    });
    let mut values = Vec::new();
    for claim in claims {
        let claim = claim.await.unwrap().unwrap().expect("the draw exists");
        assert_eq!(claim.draw.draw_id, draw);
        assert_eq!(claim.draw.config.stripes(), 40);
        values.extend(claim.first..claim.first + u64::from(claim.count));
    }
    values.sort_unstable();
    assert_eq!(values, (0..48).collect::<Vec<u64>>());

    // Stripes named as sold out stay recorded, and every later claim returns them all.
    let first = app
        .store
        .claim_stripes(&draw, 1, &[3, 7])
        .await
        .unwrap()
        .unwrap();
    assert_eq!((first.first, first.count), (48, 1));
    let later = app
        .store
        .claim_stripes(&draw, 2, &[7, 1])
        .await
        .unwrap()
        .unwrap();
    let mut sold_out = later.sold_out.clone();
    sold_out.sort_unstable();
    assert_eq!((later.first, sold_out), (49, vec![1, 3, 7]));

    let missing = tally_domain::ids::DrawId::parse("missing").unwrap();
    assert!(
        app.store
            .claim_stripes(&missing, 1, &[])
            .await
            .unwrap()
            .is_none()
    );
    assert!(app.store.get_draw(&missing).await.unwrap().is_none());
}

#[tokio::test]
async fn a_read_of_the_cursors_ends_with_the_purchase_record_in_one_snapshot() {
    use tally::store::purchases::PurchaseRead;
    use tally_domain::ids::{DrawId, PaymentId};

    let app = spawn_app().await;
    create_draw(&app, "wide", 1_000, json!({"stripes": 150})).await;
    let bought = app
        .post(
            "/draws/wide/purchases",
            &json!({"payment_id": "paid", "quantity": 7}),
        )
        .await;
    assert_eq!(bought.status, StatusCode::CREATED);
    let counter = tally::store::RequestCounter::default();
    let store = crate::helpers::store_on(app.store.table(), Some(counter.clone())).await;
    let draw = DrawId::parse("wide").unwrap();
    let all: Vec<u32> = (0..150).collect();

    // 51 cursors in a batch read, then 99 cursors and the record in one snapshot.
    let read = store
        .read_cursors_then_purchase(&draw, &all, &PaymentId::parse("paid").unwrap())
        .await
        .unwrap();
    let sent = counter.snapshot();
    assert_eq!(read.requests, 2);
    assert_eq!(
        (sent.of("BatchGetItem"), sent.of("TransactGetItems")),
        (1, 1),
        "{sent}"
    );
    let stripes: Vec<u32> = read.stripes.iter().map(|(s, _)| *s).collect();
    assert_eq!(stripes, all);
    assert_eq!(
        read.stripes
            .iter()
            .map(|(_, s)| s.sold(u64::MAX))
            .sum::<u64>(),
        7
    );
    match read.purchase {
        PurchaseRead::Found(purchase) => assert_eq!(purchase.tickets, tickets_of(&bought)),
        other => panic!("expected the purchase, got {other:?}"),
    }

    let few = store
        .read_cursors_then_purchase(&draw, &all[..10], &PaymentId::parse("unpaid").unwrap())
        .await
        .unwrap();
    assert_eq!(few.requests, 1);
    assert_eq!(counter.snapshot().since(&sent).of("TransactGetItems"), 1);
    assert_eq!(few.stripes.len(), 10);
    assert!(
        matches!(few.purchase, PurchaseRead::Absent),
        "{:?}",
        few.purchase
    );
}
