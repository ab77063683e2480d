//! The stored items of draws, purchases, tickets, unfinished bundles, holds, awards, picks, stripes,
//! allowances and payers.

use super::*;

#[test]
fn a_purchase_reads_and_writes_as_stored() {
    let decoded = decode_purchase(&stored("purchase")).unwrap();
    assert_eq!(decoded, purchase());
    assert_writes("purchase", encode_purchase(&decoded, 2));
}

#[test]
fn a_ticket_reads_and_writes_as_stored() {
    let decoded = decode_ticket(&stored("ticket")).unwrap();
    let expected = Ticket {
        draw_id: draw_id(),
        number: 17,
        payment_id: payment("pay-1"),
        payer_id: Some(PayerId::stored("payer@example.com")),
        voided: false,
    };
    assert_eq!(decoded, expected);
    assert_writes("ticket", encode_ticket(&purchase(), 17));
}

#[test]
fn an_unfinished_bundle_is_listed_as_stored() {
    assert_writes("unfinished_bundle", encode_unfinished_marker(&purchase()));
}

#[test]
fn a_hold_reads_and_writes_as_stored() {
    let decoded = decode_hold(&stored("hold")).unwrap();
    assert_eq!(decoded, hold());
    assert_writes("hold", encode_hold(&decoded));
}

#[test]
fn a_hold_written_with_a_ttl_reads_as_the_same_hold() {
    // Holds were once written with a `ttl` for a TTL the table never had; records are
    // kept now, and the old ones read as before.
    let old = stored("hold_with_ttl");
    assert!(old.contains_key("ttl"));
    assert_eq!(decode_hold(&old).unwrap(), hold());
    assert!(!encode_hold(&hold()).contains_key("ttl"));
}

fn hold() -> Hold {
    Hold {
        draw_id: draw_id(),
        hold_id: HoldId::parse("hold-1").unwrap(),
        payer_id: PayerId::stored("payer@example.com"),
        tickets: vec![8, 9],
        chosen: true,
        fingerprint: "a1b2c3".into(),
        created_at: at(2),
        expires_at: at(2) + SignedDuration::from_secs(600),
        end: HoldEnd::Open,
    }
}

#[test]
fn an_award_reads_and_writes_as_stored() {
    let (draw, decoded) = decode_award(&stored("award")).unwrap();
    assert_eq!((&draw, &decoded), (&draw_id(), &award()));
    assert_writes("award", encode_award(&draw, &decoded, 4).unwrap());
}

fn award() -> InstantAward {
    InstantAward {
        payment_id: payment("pay-1"),
        payer_id: Some(PayerId::stored("payer@example.com")),
        wins: vec![
            InstantWin {
                ticket: 4,
                prize: "mug".into(),
            },
            InstantWin {
                ticket: 250,
                prize: "hat".into(),
            },
        ],
        awarded_at: at(1),
        voided: false,
    }
}

#[test]
fn a_pick_reads_and_writes_as_stored() {
    let decoded = decode_pick(&stored("pick")).unwrap();
    assert_eq!(decoded, pick());
    assert_writes("pick", encode_pick(&draw_id(), &decoded));
}

fn pick() -> PickItem {
    PickItem {
        pick: 3,
        prize: 1,
        ticket: 250,
        payment_id: payment("pay-1"),
        payer_id: Some(PayerId::stored("payer@example.com")),
        reason: Some("the winner could not be reached".into()),
        requested_at: Some(at(5)),
        beacon: Some(RoundSignature {
            round: 1_234_567,
            signature: "ab12".into(),
        }),
        at: at(6),
    }
}

fn draw() -> Draw {
    Draw {
        name: Some("Spring raffle".into()),
        schedule: Schedule::new(Some(at(0)), Some(at(30))).unwrap(),
        beacon: Some(BeaconNetwork::quicknet()),
        created_beacon: Some("quicknet".into()),
        instant_wins: Some(InstantWins::stored(
            vec![
                InstantPrize {
                    prize: "mug".into(),
                    count: 5,
                },
                InstantPrize {
                    prize: "hat".into(),
                    count: 2,
                },
            ],
            "5eed".into(),
        )),
        ..Draw::new(
            draw_id(),
            DrawConfig::new(1000, Some(10), Some(8))
                .and_then(|c| c.with_max_per_payer(Some(20)))
                .and_then(|c| c.with_hold_seconds(Some(300)))
                .and_then(|c| c.with_max_held_per_payer(Some(10)))
                .and_then(|c| c.with_max_held_percent(Some(50)))
                .unwrap()
                .with_instant_wins(true),
            PermutationKey::from_bytes(&[7; 16]).unwrap(),
            DrawSeed::from_bytes(&[9; 32]).unwrap(),
            at(0),
        )
    }
}

fn frozen() -> Frozen {
    Frozen {
        eligible_count: 996,
        eligible_digest: "d1d2".into(),
        frozen_at: at(31),
        beacon_round: Some(1_234_500),
        // Frozen before the close fixed the number of prizes: such draws read as they were.
        prizes: None,
    }
}

fn winners() -> WinnersRecord {
    WinnersRecord {
        prizes: 3,
        beacon: Some(RoundSignature {
            round: 1_234_510,
            signature: "cd34".into(),
        }),
        eligible_count: 996,
        eligible_digest: "d1d2".into(),
        picks: 4,
        drawn_at: at(32),
    }
}

fn pending() -> PendingRedraw {
    PendingRedraw {
        prize: 2,
        pick: 5,
        reason: "the winner declined".into(),
        requested_at: at(33),
        beacon_round: 1_234_520,
    }
}

#[test]
fn a_draw_reads_and_writes_as_stored() {
    let decoded = decode_draw(&stored("draw")).unwrap();
    assert_eq!(decoded.draw_id, draw_id());
    assert_eq!(decoded.name.as_deref(), Some("Spring raffle"));
    assert_eq!(decoded.config.total_tickets(), 1000);
    assert_eq!(decoded.config.max_per_payer(), Some(20));
    assert_eq!(decoded.config.hold_seconds(), 300);
    assert_eq!(decoded.schedule.closes_at(), Some(at(30)));
    assert_eq!(decoded.key.as_bytes(), &[7; 16]);
    assert_eq!(decoded.seed.as_bytes().as_slice(), &[9; 32]);
    assert_eq!(decoded.beacon.as_ref().map(|b| b.name()), Some("quicknet"));
    let instant = decoded.instant_wins.as_ref().expect("instant wins");
    assert_eq!(instant.prizes().len(), 2);
    assert_eq!(decoded.created_at, at(0));
    assert_writes("draw", encode_draw(&decoded).unwrap());
    assert_writes("draw", encode_draw(&draw()).unwrap());
}

#[test]
fn a_draw_that_declared_its_prizes_reads_and_writes_as_stored() {
    let decoded = decode_draw(&stored("draw_with_prizes")).unwrap();
    assert_eq!(decoded.config.prizes(), Some(3));
    let declared = Draw {
        config: draw().config.with_prizes(Some(3)).unwrap(),
        ..draw()
    };
    assert!(decoded.same_settings(&declared));
    assert_writes("draw_with_prizes", encode_draw(&decoded).unwrap());
    assert_writes("draw_with_prizes", encode_draw(&declared).unwrap());
    // A draw stored before declarations, or that declared none, reads without.
    assert_eq!(decode_draw(&stored("draw")).unwrap().config.prizes(), None);
}

#[test]
fn a_corrupt_hold_time_makes_the_draw_corrupt_like_any_other_attribute() {
    for value in [
        AttributeValue::N("soon".into()),
        AttributeValue::S("120".into()),
    ] {
        let mut item = stored("draw");
        item.insert("hold_seconds".into(), value);
        assert!(matches!(
            decode_draw(&item),
            Err(StoreError::Corrupt { .. })
        ));
    }
}

#[test]
fn a_wrong_typed_winners_record_makes_the_draw_corrupt() {
    let number_as_text = AttributeValue::S("3".into());
    assert_corrupt(
        "draw_drawn",
        &[WINNERS, "prizes"],
        number_as_text,
        decode_draw,
    );
    let bad_time = AttributeValue::S("yesterday".into());
    assert_corrupt("draw_drawn", &[WINNERS, "drawn_at"], bad_time, decode_draw);
}

#[test]
fn a_drawn_draw_reads_what_its_updates_wrote() {
    let item = stored("draw_drawn");
    let decoded = decode_draw(&item).unwrap();
    assert_eq!(decoded.status, DrawStatus::Closed);
    assert_eq!(decoded.frozen, Some(frozen()));
    assert_eq!(decoded.winners, Some(winners()));
    assert_eq!(decoded.pending_redraw, Some(pending()));
    assert_eq!(
        (decoded.voided, decoded.late_voided, decoded.postal_voided),
        (3, 1, 2)
    );
    assert_eq!(decoded.voiding, vec![payment("pay-9")]);
    assert_eq!(decoded.sold_out_at, Some(at(20)));
    // What the updates write, written again from the values read.
    assert_eq!(item[FROZEN], derived(&frozen()).unwrap());
    // A draw without a beacon stores no round at all.
    let unbeaconed = derived(&Frozen {
        beacon_round: None,
        ..frozen()
    });
    assert!(
        !unbeaconed
            .unwrap()
            .as_m()
            .unwrap()
            .contains_key("beacon_round")
    );
    assert_eq!(item[WINNERS], encode_winners(&winners()).unwrap());
    assert_eq!(item[PENDING_REDRAW], derived(&pending()).unwrap());
}

#[test]
fn a_stripe_reads_as_stored() {
    let state = StripeState::decode(&stored("stripe")).unwrap();
    assert_eq!(state.cursors, StripeCursors { bottom: 12, top: 3 });
    assert!(state.closed);
    assert_eq!(state.chosen, [40, 41].into());
    assert_eq!(state.held, [(50, 1_793_527_200_125)].into());
    assert_eq!(state.postal, 2);
    assert_eq!(state.sold(100), 17);
    let mut bottom_only = stored("stripe");
    bottom_only.remove(TOP);
    let state = StripeState::decode(&bottom_only).unwrap();
    assert_eq!(state.cursors, StripeCursors { bottom: 12, top: 0 });
}

#[test]
fn an_allowance_reads_as_stored() {
    let allowance = Allowance::decode(&stored("allowance")).unwrap();
    assert_eq!((allowance.held, allowance.holding), (7, 2));
    assert_eq!(allowance.holds.len(), 1);
    assert_eq!(
        (allowance.holds[0].end, allowance.holds[0].quantity),
        (1_793_527_200_125, 2)
    );
}

#[test]
fn a_priced_purchase_reads_and_writes_as_stored() {
    let priced = Purchase {
        channel: Channel::Online,
        amount: Some(Money {
            minor: 750,
            currency: Currency::parse("GBP").unwrap(),
        }),
        ..purchase()
    };
    let decoded = decode_purchase(&stored("purchase_priced")).unwrap();
    assert_eq!(decoded, priced);
    assert_writes("purchase_priced", encode_purchase(&decoded, 2));
    // A purchase stored before prices reads without an amount.
    assert_eq!(decode_purchase(&stored("purchase")).unwrap().amount, None);
}

#[test]
fn a_payer_item_reads_as_stored() {
    let payer = PayerRecord::decode(&stored("payer")).unwrap();
    let gbp = Currency::parse("GBP").unwrap();
    assert_eq!(payer.version, 3);
    assert_eq!(
        payer
            .limits
            .limit(&Default::default(), gbp, Span::Day, at(0)),
        Some(5_000)
    );
    assert_eq!(payer.exclusion.map(|e| e.until), Some(Some(at(30))));
    let day = &payer.spent[&(gbp, Span::Day)];
    assert_eq!((day.window.as_str(), day.amount), ("2026-11-01", 1_250));
}
