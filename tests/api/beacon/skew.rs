//! Clocks a little apart: the process that asks for a redraw may read a clock behind the
//! one that drew the winners, or behind the one that asked for the redraw before.

use super::*;

/// The winners are drawn by a process whose clock is 200 ms ahead of the processes that
/// then ask for two redraws. Each request is recorded after the drawing and after the
/// redraw before it, so the proof passes both verifiers.
#[tokio::test]
async fn redraws_asked_on_a_clock_behind_the_drawing_still_follow_it_in_the_proof() {
    let world = BeaconApp::spawn().await;
    let app = &world.app;
    let closed = world.closed_draw("skew", 2).await;
    let round = closed["beacon"]["round"].as_u64().unwrap();
    let eligible = app.get("/draws/skew/eligible").await.body;
    let drawn_at = published_ms(round) + 500;
    world.set_clock(drawn_at);
    let drawn = app
        .post(
            "/draws/skew/winners",
            &json!({"prizes": 2, "beacon_signature": signature(round)}),
        )
        .await;
    assert_eq!(drawn.status, StatusCode::CREATED, "{}", drawn.body);
    let mut asked_at = Vec::new();
    for prize in [1, 2] {
        world.set_clock(drawn_at - 200);
        let reason = format!("charged back, prize {prize}");
        let path = format!("/draws/skew/winners/{prize}/redraw");
        let asked = app.post(&path, &json!({"reason": reason})).await;
        assert_eq!(asked.status, StatusCode::ACCEPTED, "{}", asked.body);
        let pending = &asked.body["pending_redraw"];
        asked_at.push(pending["requested_at"].as_str().unwrap().to_owned());
        let redraw_round = pending["beacon_round"].as_u64().unwrap();
        world.set_clock(published_ms(redraw_round));
        let signed = json!({"reason": reason, "beacon_signature": signature(redraw_round)});
        let redrawn = app.post(&path, &signed).await;
        assert_eq!(redrawn.status, StatusCode::CREATED, "{}", redrawn.body);
    }
    let winners = app.get("/draws/skew/winners").await.body;
    let drawn_text = winners["proof"]["drawn_at"].as_str().unwrap().to_owned();
    let times: Vec<jiff::Timestamp> = [&drawn_text, &asked_at[0], &asked_at[1]]
        .iter()
        .map(|t| t.parse().unwrap())
        .collect();
    assert!(times[0] <= times[1] && times[1] < times[2], "{times:?}");
    assert_eq!(
        verifiers_accept(
            "skew",
            &winners,
            &eligible,
            Some(&closed),
            Some(&networks_json())
        ),
        Verdicts::BOTH_PASS
    );
    // Without its drawing time, the redraws' order cannot be checked.
    let mut undated = winners.clone();
    undated["proof"].as_object_mut().unwrap().remove("drawn_at");
    assert_eq!(
        verifiers_accept(
            "undated",
            &undated,
            &eligible,
            Some(&closed),
            Some(&networks_json())
        ),
        Verdicts::fail("round")
    );
}
