//! A room closing is announced: `room_closed` to everyone still attached,
//! with `left` or `disconnect`, for each way a room closes; the player who
//! caused it is not told; a later `rematch` is `not_in_game`.

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{Client, Pair, TestServer, play_out, quick_pair, test_config};

/// X wins the top row of a 3×3 game.
const X_WINS: [[usize; 2]; 5] = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];

/// A quick-match pair with a spectator, their game played to its end.
async fn finished(server: &TestServer) -> (Pair, Client) {
    let mut pair = quick_pair(server, 3).await;
    let mut watcher = server.client().await;
    watcher.send(json!({"type": "spectate", "room": pair.room})).await;
    watcher.recv_type("state").await;
    play_out(&mut pair, &X_WINS).await;
    watcher.recv_type("game_over").await;
    (pair, watcher)
}

/// Reads the next message and checks it is `room_closed` for `room` with `reason`.
async fn expect_closed(client: &mut Client, room: &str, reason: &str) {
    let msg = client.recv_json().await;
    assert_eq!(msg, json!({"type": "room_closed", "room": room, "reason": reason}));
}

/// The next message is the answer to a ping: nothing else was queued before it.
async fn expect_nothing_pending(client: &mut Client) {
    client.send(json!({"type": "ping", "id": "quiet"})).await;
    assert_eq!(client.recv_json().await, json!({"type": "pong", "id": "quiet"}));
}

/// `rematch` after the room closed is `not_in_game`, with the id echoed.
async fn expect_no_rematch(client: &mut Client) {
    client.send(json!({"type": "rematch", "id": "late"})).await;
    client.expect_error(ErrorCode::NotInGame, Some(json!("late"))).await;
}

#[tokio::test]
async fn leave_after_the_game_tells_the_opponent_and_spectators() {
    let server = TestServer::start(test_config()).await;
    let (mut p, mut watcher) = finished(&server).await;
    p.x.send(json!({"type": "leave"})).await;
    expect_closed(&mut p.o, &p.room, "left").await;
    expect_closed(&mut watcher, &p.room, "left").await;
    expect_nothing_pending(&mut p.x).await;
    expect_no_rematch(&mut p.o).await;
    expect_no_rematch(&mut p.x).await;
    server.shutdown().await;
}

#[tokio::test]
async fn leave_after_a_rematch_request_ends_the_wait() {
    let server = TestServer::start(test_config()).await;
    let (mut p, mut watcher) = finished(&server).await;
    p.o.send(json!({"type": "rematch"})).await;
    p.x.recv_type("rematch_offered").await;
    p.x.send(json!({"type": "leave"})).await;
    // The player who asked is not left waiting for ever.
    expect_closed(&mut p.o, &p.room, "left").await;
    expect_closed(&mut watcher, &p.room, "left").await;
    expect_no_rematch(&mut p.o).await;
    server.shutdown().await;
}

#[tokio::test]
async fn every_request_that_leaves_implicitly_closes_the_room() {
    let server = TestServer::start(test_config()).await;
    // A room waiting for a second player, to join or watch.
    let mut host = server.client().await;
    host.send(json!({"type": "create_room"})).await;
    let other = host.recv_type("room_created").await["room"].as_str().unwrap_or_default().to_owned();
    let requests: Vec<(Value, &str)> = vec![
        (json!({"type": "quick_match", "size": 4}), "queued"),
        (json!({"type": "create_room"}), "room_created"),
        (json!({"type": "spectate", "room": other}), "state"),
        (json!({"type": "resume", "token": "NOSUCHTOKEN0000000"}), "error"),
        // Last: it fills the waiting room.
        (json!({"type": "join_room", "room": other}), "game_started"),
    ];
    for (request, reply) in requests {
        let (mut p, mut watcher) = finished(&server).await;
        p.x.send(request.clone()).await;
        assert_eq!(p.x.recv_json().await["type"], reply, "{request}");
        expect_closed(&mut p.o, &p.room, "left").await;
        expect_closed(&mut watcher, &p.room, "left").await;
        expect_no_rematch(&mut p.o).await;
        // The player who moved on is where it asked to be, not told of the old room.
        if reply != "game_started" {
            expect_nothing_pending(&mut p.x).await;
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_drop_after_the_game_closes_with_disconnect() {
    let server = TestServer::start(test_config()).await;
    let (p, mut watcher) = finished(&server).await;
    let Pair { x, mut o, room } = p;
    drop(x);
    expect_closed(&mut o, &room, "disconnect").await;
    expect_closed(&mut watcher, &room, "disconnect").await;
    expect_no_rematch(&mut o).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_player_who_does_not_come_back_loses_and_then_the_room_closes() {
    let server = TestServer::start(Config { reconnect_grace_ms: 300, ..test_config() }).await;
    let Pair { mut x, mut o, room } = quick_pair(&server, 3).await;
    x.play(1, 1).await;
    o.recv_type("moved").await;
    o.play(0, 0).await;
    x.recv_type("moved").await;
    drop(x);
    o.recv_type("opponent_disconnected").await;
    let over = o.recv_json().await;
    assert_eq!((over["type"].clone(), over["reason"].clone()), (json!("game_over"), json!("disconnect")));
    expect_closed(&mut o, &room, "disconnect").await;
    expect_no_rematch(&mut o).await;
    server.shutdown().await;
}

#[tokio::test]
async fn the_creator_leaving_or_dropping_from_a_waiting_room_tells_its_spectators() {
    let server = TestServer::start(test_config()).await;
    for leave in [true, false] {
        let mut host = server.client().await;
        host.send(json!({"type": "create_room"})).await;
        let room = host.recv_type("room_created").await["room"].as_str().unwrap_or_default().to_owned();
        let mut watcher = server.client().await;
        watcher.send(json!({"type": "spectate", "room": room})).await;
        watcher.recv_type("state").await;
        if leave {
            host.send(json!({"type": "leave"})).await;
            expect_closed(&mut watcher, &room, "left").await;
            expect_nothing_pending(&mut host).await;
        } else {
            drop(host);
            expect_closed(&mut watcher, &room, "disconnect").await;
        }
        // The code is gone with the room.
        watcher.send(json!({"type": "join_room", "room": room, "id": 1})).await;
        watcher.expect_error(ErrorCode::RoomNotFound, Some(json!(1))).await;
    }
    server.shutdown().await;
}

#[tokio::test]
async fn leaving_mid_game_resigns_then_closes_the_room() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair(&server, 3).await;
    p.x.play(1, 1).await;
    p.o.recv_type("moved").await;
    p.o.play(0, 0).await;
    p.x.recv_type("moved").await;
    p.o.send(json!({"type": "leave"})).await;
    let over = p.x.recv_json().await;
    assert_eq!((over["reason"].clone(), over["winner"].clone()), (json!("resign"), json!(1)));
    expect_closed(&mut p.x, &p.room, "left").await;
    expect_no_rematch(&mut p.x).await;
    server.shutdown().await;
}
