//! Every error code, provoked over a real socket; each refusal echoes the
//! request's `id`, changes nothing, and the game goes on with `seq` continuing.

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{TestServer, private_pair, quick_pair, test_config};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

#[tokio::test]
async fn refusals_during_a_game_change_nothing() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair(&server, 3).await;

    // bad_message in all its forms, with the id echoed where it could be read.
    p.x.send_raw(Message::text("this is not json")).await;
    p.x.expect_error(ErrorCode::BadMessage, None).await;
    p.x.send_raw(Message::text("[1, 2]")).await;
    p.x.expect_error(ErrorCode::BadMessage, None).await;
    p.x.send(json!({"type": "dance", "id": 1})).await;
    p.x.expect_error(ErrorCode::BadMessage, Some(json!(1))).await;
    p.x.send(json!({"type": "move", "row": 0, "id": 2})).await;
    p.x.expect_error(ErrorCode::BadMessage, Some(json!(2))).await;
    p.x.send(json!({"type": "move", "row": "zero", "col": 0, "id": "three"})).await;
    p.x.expect_error(ErrorCode::BadMessage, Some(json!("three"))).await;
    p.x.send_raw(Message::binary(vec![1u8, 2, 3])).await;
    p.x.expect_error(ErrorCode::BadMessage, None).await;

    // not_your_turn: O moves first.
    p.o.send(json!({"type": "move", "row": 0, "col": 0, "id": 4})).await;
    p.o.expect_error(ErrorCode::NotYourTurn, Some(json!(4))).await;
    // out_of_bounds, both too large and negative.
    p.x.send(json!({"type": "move", "row": 3, "col": 0, "id": 5})).await;
    p.x.expect_error(ErrorCode::OutOfBounds, Some(json!(5))).await;
    p.x.send(json!({"type": "move", "row": 0, "col": -1, "id": 6})).await;
    p.x.expect_error(ErrorCode::OutOfBounds, Some(json!(6))).await;
    // busy: already in a game.
    p.x.send(json!({"type": "quick_match", "id": 7})).await;
    p.x.expect_error(ErrorCode::Busy, Some(json!(7))).await;
    p.x.send(json!({"type": "create_room", "id": 8})).await;
    p.x.expect_error(ErrorCode::Busy, Some(json!(8))).await;

    // The game goes on: the first accepted move is seq 1.
    assert_eq!(p.x.play(1, 1).await["seq"], 1);
    assert_eq!(p.o.recv_type("moved").await["seq"], 1);
    // cell_occupied, then not_your_turn for X.
    p.o.send(json!({"type": "move", "row": 1, "col": 1, "id": 9})).await;
    p.o.expect_error(ErrorCode::CellOccupied, Some(json!(9))).await;
    p.x.send(json!({"type": "move", "row": 0, "col": 0, "id": 10})).await;
    p.x.expect_error(ErrorCode::NotYourTurn, Some(json!(10))).await;
    assert_eq!(p.o.play(0, 0).await["seq"], 2);
    assert_eq!(p.x.recv_type("moved").await["seq"], 2);

    // Finish: X wins the middle row; then game_over for further moves.
    for (mover, r, c) in [(1, 1, 0), (2, 0, 1), (1, 1, 2)] {
        let (m, o) = if mover == 1 { (&mut p.x, &mut p.o) } else { (&mut p.o, &mut p.x) };
        m.play(r, c).await;
        o.recv_type("moved").await;
    }
    let over = p.o.recv_type("game_over").await;
    assert_eq!(over["winner"], 1);
    assert_eq!(over["moves"], json!([[1, 1], [0, 0], [1, 0], [0, 1], [1, 2]]));
    p.x.recv_type("game_over").await;
    p.o.send(json!({"type": "move", "row": 2, "col": 2, "id": 11})).await;
    p.o.expect_error(ErrorCode::GameOver, Some(json!(11))).await;
    p.o.send(json!({"type": "resign", "id": 12})).await;
    p.o.expect_error(ErrorCode::GameOver, Some(json!(12))).await;
    server.shutdown().await;
}

#[tokio::test]
async fn refusals_outside_a_game() {
    let server = TestServer::start(test_config()).await;
    let mut c = server.client().await;
    c.send(json!({"type": "hello", "name": "ann", "protocol": 2, "id": 1})).await;
    c.expect_error(ErrorCode::UnsupportedProtocol, Some(json!(1))).await;
    for (i, name) in ["", "   ", "a\u{7}b", "abcdefghijklmnopqrstuvwxy"].iter().enumerate() {
        c.send(json!({"type": "hello", "name": name, "id": 10 + i})).await;
        c.expect_error(ErrorCode::InvalidName, Some(json!(10 + i))).await;
    }
    c.send(json!({"type": "hello", "name": "ann", "protocol": 1})).await;
    for size in [json!(1), json!(101), json!(-3)] {
        c.send(json!({"type": "quick_match", "size": size, "id": "s"})).await;
        c.expect_error(ErrorCode::InvalidSize, Some(json!("s"))).await;
        c.send(json!({"type": "create_room", "size": size, "id": "c"})).await;
        c.expect_error(ErrorCode::InvalidSize, Some(json!("c"))).await;
    }
    for (i, msg) in
        [json!({"type": "move", "row": 0, "col": 0}), json!({"type": "resign"}), json!({"type": "rematch"})]
            .into_iter()
            .enumerate()
    {
        let mut msg = msg;
        msg["id"] = json!(20 + i);
        c.send(msg).await;
        c.expect_error(ErrorCode::NotInGame, Some(json!(20 + i))).await;
    }
    c.send(json!({"type": "join_room", "room": "NOSUCHROOM", "id": 30})).await;
    c.expect_error(ErrorCode::RoomNotFound, Some(json!(30))).await;
    c.send(json!({"type": "spectate", "room": "NOSUCHROOM", "id": 31})).await;
    c.expect_error(ErrorCode::RoomNotFound, Some(json!(31))).await;
    c.send(json!({"type": "resume", "token": "nope", "id": 32})).await;
    c.expect_error(ErrorCode::InvalidToken, Some(json!(32))).await;

    // Queued: busy for another queue, not_in_game for moves; leave frees it.
    c.send(json!({"type": "quick_match", "size": 4, "id": 40})).await;
    assert_eq!(c.recv_type("queued").await["id"], 40);
    c.send(json!({"type": "quick_match", "size": 4, "id": 41})).await;
    c.expect_error(ErrorCode::Busy, Some(json!(41))).await;
    c.send(json!({"type": "move", "row": 0, "col": 0, "id": 42})).await;
    c.expect_error(ErrorCode::NotInGame, Some(json!(42))).await;
    c.send(json!({"type": "leave"})).await;
    c.send(json!({"type": "ping", "id": 43})).await;
    assert_eq!(c.recv_type("pong").await["id"], 43);

    // room_full: a third player for a private room; the room is unharmed.
    let mut pair = private_pair(&server, 3).await;
    c.send(json!({"type": "join_room", "room": pair.room.to_lowercase(), "id": 50})).await;
    c.expect_error(ErrorCode::RoomFull, Some(json!(50))).await;
    assert_eq!(pair.x.play(0, 0).await["seq"], 1);
    // After the refusal c is free again.
    c.send(json!({"type": "create_room", "id": 51})).await;
    assert_eq!(c.recv_type("room_created").await["id"], 51);
    server.shutdown().await;
}

/// On tokio's paused clock, which the limiter reads: the bucket's refills
/// are the time slept, not the machine's.
#[tokio::test(start_paused = true)]
async fn flooding_is_rate_limited_then_closed_with_1008() {
    let config = Config { max_messages_per_second: 10, ..test_config() };
    let server = TestServer::start(config).await;
    let mut p = quick_pair(&server, 3).await;
    // With a full bucket the burst (10 frames) passes; the 11th is refused
    // and not acted on.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let mut burst: Vec<_> = (0..10).map(|i| json!({"type": "ping", "id": i})).collect();
    burst.push(json!({"type": "move", "row": 0, "col": 0, "id": "flood"}));
    p.x.send_batch(burst).await;
    for i in 0..10 {
        assert_eq!(p.x.recv_type("pong").await["id"], i);
    }
    p.x.expect_error(ErrorCode::RateLimited, Some(json!("flood"))).await;
    // The refused move did not happen: O still sees nothing, and after the
    // bucket refills X's move is seq 1.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(p.x.play(0, 0).await["seq"], 1);
    assert_eq!(p.o.recv_type("moved").await["seq"], 1);
    // Keep flooding: closed with 1008 (policy).
    p.o.send_batch((0..40).map(|i| json!({"type": "ping", "id": i})).collect()).await;
    assert_eq!(p.o.expect_close().await, Some(CloseCode::Policy));
    // The flooder is gone before it moved: the game is aborted, and the
    // other player is told.
    let over = p.x.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(0), json!("aborted")));
    server.shutdown().await;
}

/// A client that meets the limit again and again but always waits the
/// `retry_after_ms` it was told is never closed; WebSocket pings count
/// toward the limit too, and a ping flood is closed with 1008. On tokio's
/// paused clock, which the limiter reads: it waits exactly what it is told.
#[tokio::test(start_paused = true)]
async fn a_client_that_waits_as_told_is_never_closed_and_a_ping_flood_is() {
    use tokio_tungstenite::tungstenite::Message;
    let config = Config { max_messages_per_second: 50, ..test_config() };
    let server = TestServer::start(config).await;
    let mut c = server.client().await;
    let (mut pongs, mut refusals) = (0, 0);
    let mut i = 0;
    while pongs < 150 {
        // Two at a time, so that it keeps meeting the limit.
        c.send_batch(vec![json!({"type": "ping", "id": i}), json!({"type": "ping", "id": i + 1})]).await;
        for _ in 0..2 {
            let v = c.recv_json().await;
            match v["type"].as_str() {
                Some("pong") => pongs += 1,
                Some("error") => {
                    assert_eq!(v["code"], "rate_limited", "{v}");
                    refusals += 1;
                    let wait = v["retry_after_ms"].as_u64().expect("retry_after_ms");
                    tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                }
                _ => panic!("unexpected {v}"),
            }
        }
        i += 2;
    }
    assert!(refusals > 10, "the limit was never met ({refusals} refusals)");
    // An obedient client stays connected: its next ping, sent when it may
    // be (the loop may have ended on an empty bucket), is answered.
    let mut still = Value::Null;
    for _ in 0..2 {
        c.send(json!({"type": "ping", "id": "still"})).await;
        still = c.recv_json().await;
        if still["type"] != "error" {
            break;
        }
        assert_eq!(still["code"], "rate_limited", "{still}");
        let wait = still["retry_after_ms"].as_u64().expect("retry_after_ms");
        tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
    }
    assert_eq!((still["type"].as_str(), still["id"].as_str()), (Some("pong"), Some("still")), "{still}");
    let mut flood = server.client().await;
    for _ in 0..200 {
        flood.send_raw(Message::Ping(vec![1, 2, 3].into())).await;
    }
    assert_eq!(flood.expect_close().await, Some(CloseCode::Policy));
    server.shutdown().await;
}
