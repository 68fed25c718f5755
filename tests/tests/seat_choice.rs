//! `create_room` with `mark`: the creator plays the mark it asked for in the
//! room's first game; rematches swap as always; a bad mark is `bad_message`.

use serde_json::json;
use tictactoe_protocol::ErrorCode;
use tictactoe_tests::{TestServer, test_config};

#[tokio::test]
async fn the_creator_plays_the_mark_it_asked_for() {
    let server = TestServer::start(test_config()).await;
    for (mark, you) in [("O", 2), ("X", 1), ("o", 2), ("O", 2), ("x", 1), ("O", 2)] {
        let mut a = server.client().await;
        let mut b = server.client().await;
        a.send(json!({"type": "create_room", "mark": mark})).await;
        let room = a.recv_type("room_created").await["room"].clone();
        b.send(json!({"type": "join_room", "room": room})).await;
        let started = a.recv_type("game_started").await;
        assert_eq!(started["you"], json!(you), "asked for {mark}");
        assert_eq!(b.recv_type("game_started").await["you"], json!(3 - you));
        if mark.eq_ignore_ascii_case("O") {
            // The rematch swaps the seats, as in every room.
            a.send(json!({"type": "resign"})).await;
            a.recv_type("game_over").await;
            a.send(json!({"type": "rematch"})).await;
            b.send(json!({"type": "rematch"})).await;
            assert_eq!(a.recv_type("game_started").await["you"], json!(1));
        }
    }
    let mut c = server.client().await;
    for bad in [json!("Z"), json!(1)] {
        c.send(json!({"type": "create_room", "mark": bad, "id": 9})).await;
        let err = c.expect_error(ErrorCode::BadMessage, Some(json!(9))).await;
        assert!(err["message"].as_str().is_some_and(|m| m.contains("mark")), "{err}");
    }
    server.shutdown().await;
}
