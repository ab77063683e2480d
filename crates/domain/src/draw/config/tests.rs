//! The limits of a draw's settings.

use super::*;

#[test]
fn a_new_draw_keeps_every_stripe_within_its_most_tickets() {
    let config = |stripes| DrawConfig::new(1_000_000, None, Some(stripes)).unwrap();
    assert!(config(88).check_fits(100).is_ok());
    assert_eq!(
        config(87).check_fits(100).unwrap_err(),
        DrawConfigError::StripesTooLong {
            total_tickets: 1_000_000,
            stripes: 87,
            longest: 20_015
        }
    );
    for total in [
        1,
        90,
        10_000,
        921_600,
        921_700,
        5_000_000,
        MAX_TOTAL_TICKETS,
    ] {
        let layout = DrawConfig::new(total, None, None).unwrap().layout();
        let longest = (0..layout.stripes()).map(|s| layout.len(s)).max().unwrap();
        assert!(longest <= MAX_STRIPE_TICKETS, "{total}: {longest}");
    }
}

#[test]
fn a_largest_purchase_spread_beyond_one_transaction_is_refused() {
    let spread = DrawConfig::new(1_024, Some(50), Some(1_024)).unwrap();
    assert_eq!(
        spread.check_fits(100),
        Err(DrawConfigError::PurchaseTooSpread {
            max_per_purchase: 50,
            stripes_needed: 50
        })
    );
    assert!(spread.check_fits(101).is_ok());
    let fine = DrawConfig::new(1_024, Some(49), Some(1_024)).unwrap();
    assert!(fine.check_fits(100).is_ok());
    assert!(
        DrawConfig::new(10_000, Some(50), None)
            .unwrap()
            .check_fits(100)
            .is_ok()
    );
    // A bundle of 500 needs few stripes of a large draw, and more than 32 of a draw
    // of one ticket per stripe.
    let bundle = DrawConfig::new(100_000, Some(500), None).unwrap();
    assert!(bundle.check_fits(100).is_ok());
    assert_eq!(
        DrawConfig::new(1_024, Some(500), Some(1_024))
            .unwrap()
            .check_fits(100),
        Err(DrawConfigError::PurchaseTooSpread {
            max_per_purchase: 500,
            stripes_needed: 500
        })
    );
}

#[test]
fn a_cap_per_payer_takes_one_item_of_the_purchase_transaction() {
    // A draw whose largest purchase fills a transaction of 100 exactly: 1 record,
    // 50 tickets, 49 cursors.
    let exact = (1_024..=2_048)
        .map(|total| DrawConfig::new(total, Some(50), Some(1_024)).unwrap())
        .find(|c| c.layout().stripes_to_hold(50) == 49)
        .expect("some size needs 49 stripes for 50 tickets");
    assert_eq!(exact.purchase_budget(100), 100);
    assert!(exact.check_fits(100).is_ok());
    let capped = exact.with_max_per_payer(Some(200)).unwrap();
    assert_eq!(capped.purchase_budget(100), 99);
    assert!(matches!(
        capped.check_fits(100),
        Err(DrawConfigError::PurchaseTooSpread { .. })
    ));
    assert_eq!(
        exact.with_max_per_payer(Some(0)),
        Err(DrawConfigError::MaxPerPayer(0))
    );
}

#[test]
fn prizes_declared_are_1_to_the_most_and_no_more_than_the_tickets() {
    let config = DrawConfig::new(200, None, None).unwrap();
    assert_eq!(config.prizes(), None);
    for fine in [1, MAX_PRIZES] {
        let declared = config.with_prizes(Some(fine)).unwrap();
        assert_eq!(declared.prizes(), Some(fine));
    }
    for refused in [0, MAX_PRIZES + 1] {
        assert_eq!(
            config.with_prizes(Some(refused)),
            Err(DrawConfigError::Prizes(refused))
        );
    }
    let small = DrawConfig::new(5, None, None).unwrap();
    assert!(small.with_prizes(Some(5)).is_ok());
    assert_eq!(small.with_prizes(Some(6)), Err(DrawConfigError::Prizes(6)));
}

#[test]
fn settings_outside_the_limits_are_refused() {
    assert_eq!(
        DrawConfig::new(0, None, None),
        Err(DrawConfigError::TotalTickets(0))
    );
    assert_eq!(
        DrawConfig::new(MAX_TOTAL_TICKETS + 1, None, None),
        Err(DrawConfigError::TotalTickets(MAX_TOTAL_TICKETS + 1))
    );
    assert_eq!(
        DrawConfig::new(10, Some(0), None),
        Err(DrawConfigError::MaxPerPurchase(0))
    );
    assert_eq!(
        DrawConfig::new(10, Some(501), None),
        Err(DrawConfigError::MaxPerPurchase(501))
    );
    assert_eq!(
        DrawConfig::new(10, None, Some(11)),
        Err(DrawConfigError::Stripes(11))
    );
    assert_eq!(
        DrawConfig::new(5_000, None, Some(1_025)),
        Err(DrawConfigError::Stripes(1_025))
    );
    let config = DrawConfig::new(10_000, None, None).unwrap();
    assert_eq!(config.max_per_purchase(), DEFAULT_MAX_PER_PURCHASE);
    assert_eq!(config.stripes(), 111);
    let stripes = |total| DrawConfig::new(total, None, None).unwrap().stripes();
    assert_eq!(
        (
            stripes(1_000),
            stripes(100),
            stripes(5),
            stripes(10_000_000)
        ),
        (64, 12, 1, 1_024)
    );
}
