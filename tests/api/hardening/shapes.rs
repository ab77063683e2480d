//! Inputs the code refuses exactly as the OpenAPI document describes them: a signature of
//! whole bytes, a draw name that says something.

use super::*;

#[tokio::test]
async fn a_beacon_signature_is_whole_bytes_in_hex_before_the_draw_is_read() {
    let app = spawn_app().await;
    let largest = "ab".repeat(96);
    let past = "ab".repeat(97);
    for (signature, code) in [
        ("a", "invalid_beacon_signature"),
        ("abc", "invalid_beacon_signature"),
        ("", "invalid_beacon_signature"),
        ("zz", "invalid_beacon_signature"),
        (past.as_str(), "invalid_beacon_signature"),
        // The shape is right: the draw is looked for, and there is none.
        ("ab", "draw_not_found"),
        (largest.as_str(), "draw_not_found"),
    ] {
        let winners = json!({"prizes": 1, "beacon_signature": signature});
        let redraw = json!({"reason": "r", "beacon_signature": signature});
        for (path, body) in [
            ("/draws/none/winners", winners),
            ("/draws/none/winners/1/redraw", redraw),
        ] {
            let reply = app.post(path, &body).await;
            assert_eq!(reply.code(), code, "{path} {signature:.8}: {}", reply.body);
        }
    }
}

#[tokio::test]
async fn a_draw_name_of_white_space_alone_is_refused_as_a_prize_is() {
    let app = spawn_app().await;
    for blank in [" ", "   ", "\u{00A0}\u{3000}"] {
        let named = app
            .post("/draws", &json!({"total_tickets": 10, "name": blank}))
            .await;
        assert_eq!(
            (named.status, named.code()),
            (StatusCode::BAD_REQUEST, "invalid_name"),
            "{blank:?}: {}",
            named.body
        );
        let prized = app
            .post(
                "/draws",
                &json!({"total_tickets": 10, "instant_wins": [{"prize": blank, "count": 1}]}),
            )
            .await;
        assert_eq!(prized.status, StatusCode::BAD_REQUEST, "{}", prized.body);
    }
    let spaced = app
        .post(
            "/draws",
            &json!({"total_tickets": 10, "name": " Summer draw "}),
        )
        .await;
    assert_eq!(spaced.status, StatusCode::CREATED, "{}", spaced.body);
    assert_eq!(spaced.body["name"], " Summer draw ");
}
