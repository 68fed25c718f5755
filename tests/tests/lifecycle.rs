//! Game lifecycle over real sockets with short timers: turn timeout, drop and
//! resume, drop without resume, spectators, rematches, and random drops.

use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{
    TestServer, assert_judged, play_out, private_pair, quick_pair, random_game, test_config,
};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

fn timed(turn_ms: u64, grace_ms: u64) -> Config {
    Config { turn_timeout_ms: turn_ms, reconnect_grace_ms: grace_ms, ..test_config() }
}

#[tokio::test]
async fn the_player_to_move_loses_on_time() {
    // Long enough that a busy machine does not flag a side that moves at once.
    let server = TestServer::start(timed(1_500, 0)).await;
    let mut pair = quick_pair(&server, 3).await;
    // Each side moves once; then X, to move, runs out of time.
    pair.x.play(0, 0).await;
    pair.o.recv_type("moved").await;
    pair.o.play(1, 1).await;
    pair.x.recv_type("moved").await;
    let over = pair.o.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(2), json!("timeout")));
    assert_eq!((over["line"].clone(), over["moves"].clone()), (json!(null), json!([[0, 0], [1, 1]])));
    assert_eq!(pair.x.recv_type("game_over").await, over);
    server.shutdown().await;
}

#[tokio::test]
async fn the_clock_is_announced_with_every_move_and_snapshot() {
    let server = TestServer::start(timed(20_000, 0)).await;
    let mut pair = quick_pair(&server, 3).await;
    let moved = pair.x.play(1, 1).await;
    assert_eq!((moved["clock_ms"].clone(), moved["next"].clone()), (json!(20_000), json!(2)));
    let mut watcher = server.client().await;
    watcher.send(json!({"type": "spectate", "room": pair.room})).await;
    let state = watcher.recv_type("state").await;
    let left = state["clock_ms"].as_u64().unwrap_or(0);
    assert!(left > 0 && left <= 20_000, "{state}");
    assert_eq!(state["turn"], 2);
    server.shutdown().await;
}

#[tokio::test]
async fn a_dropped_player_resumes_and_finishes_the_game() {
    let server = TestServer::start(timed(0, 3000)).await;
    let mut a = server.client().await;
    let mut b = server.client().await;
    a.send(json!({"type": "quick_match"})).await;
    b.send(json!({"type": "quick_match"})).await;
    let sa = a.recv_type("game_started").await;
    let sb = b.recv_type("game_started").await;
    let ((mut x, sx), (mut o, _)) = if sa["you"] == 1 { ((a, sa), (b, sb)) } else { ((b, sb), (a, sa)) };
    x.play(0, 0).await;
    o.recv_type("moved").await;
    o.play(1, 0).await;
    x.recv_type("moved").await;
    // X's connection drops.
    drop(x);
    let note = o.recv_type("opponent_disconnected").await;
    assert_eq!(note["grace_ms"], 3000);
    // Moving for the absent player is still O's mistake: it is X's turn.
    o.send(json!({"type": "move", "row": 2, "col": 2, "id": 1})).await;
    o.expect_error(ErrorCode::NotYourTurn, Some(json!(1))).await;
    // A wrong token is refused.
    let mut x2 = server.client().await;
    x2.send(json!({"type": "resume", "token": "AAAAAAAAAA0000", "id": 2})).await;
    x2.expect_error(ErrorCode::InvalidToken, Some(json!(2))).await;
    // The right one restores the seat with the board intact.
    x2.send(json!({"type": "resume", "token": sx["resume_token"], "id": 3})).await;
    let state = x2.recv_type("state").await;
    assert_eq!(state["id"], 3);
    assert_eq!(state["you"], 1);
    assert_eq!(state["turn"], 1);
    assert_eq!(state["board"], json!(["X..", "O..", "..."]));
    assert_eq!(state["moves"], json!([[0, 0], [1, 0]]));
    assert_eq!(state["players"].as_array().map(Vec::len), Some(2));
    o.recv_type("opponent_reconnected").await;
    // The game finishes normally: X takes row 0.
    let moved = x2.play(0, 1).await;
    assert_eq!(moved["seq"], 3);
    o.recv_type("moved").await;
    o.play(2, 2).await;
    x2.recv_type("moved").await;
    x2.play(0, 2).await;
    let over = o.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")));
    assert_eq!(x2.recv_type("game_over").await, over);
    assert_judged(3, &over);
    // The token does not outlive its game.
    let mut x3 = server.client().await;
    x3.send(json!({"type": "resume", "token": sx["resume_token"], "id": 4})).await;
    x3.expect_error(ErrorCode::InvalidToken, Some(json!(4))).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_dropped_player_who_does_not_return_loses_by_disconnect() {
    let server = TestServer::start(timed(0, 300)).await;
    let mut pair = quick_pair(&server, 3).await;
    pair.x.play(0, 0).await;
    pair.o.recv_type("moved").await;
    pair.o.play(1, 1).await;
    pair.x.recv_type("moved").await;
    drop(pair.o);
    assert_eq!(pair.x.recv_type("opponent_disconnected").await["grace_ms"], 300);
    let over = pair.x.recv_type("game_over").await;
    assert_eq!(
        (over["winner"].clone(), over["reason"].clone(), over["line"].clone()),
        (json!(1), json!("disconnect"), json!(null))
    );
    assert_eq!(over["moves"], json!([[0, 0], [1, 1]]));
    drop(pair.x);
    server.wait_idle().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_spectator_joining_mid_game_sees_the_same_end() {
    let server = TestServer::start(test_config()).await;
    let mut pair = quick_pair(&server, 3).await;
    pair.x.play(0, 0).await;
    pair.o.recv_type("moved").await;
    pair.o.play(1, 1).await;
    pair.x.recv_type("moved").await;
    let mut watcher = server.client().await;
    watcher.send(json!({"type": "spectate", "room": pair.room, "id": "w"})).await;
    let state = watcher.recv_type("state").await;
    assert_eq!(state["id"], "w");
    assert_eq!(state["you"], json!(null));
    assert_eq!(state["turn"], 1);
    assert_eq!(state["board"], json!(["X..", ".O.", "..."]));
    // Spectators cannot play.
    watcher.send(json!({"type": "move", "row": 2, "col": 2, "id": 1})).await;
    watcher.expect_error(ErrorCode::NotInGame, Some(json!(1))).await;
    // X wins column 0; the spectator sees each move and the same game_over.
    for (i, (r, c)) in [(1, 0), (2, 2), (2, 0)].into_iter().enumerate() {
        let (m, o) = if i % 2 == 0 { (&mut pair.x, &mut pair.o) } else { (&mut pair.o, &mut pair.x) };
        let own = m.play(r, c).await;
        o.recv_type("moved").await;
        let seen = watcher.recv_type("moved").await;
        assert_eq!(seen["seq"], own["seq"]);
        assert!(seen.get("id").is_none());
    }
    let over = pair.x.recv_type("game_over").await;
    assert_eq!(over["line"], json!({"kind": "col", "index": 0, "cells": [[0, 0], [1, 0], [2, 0]]}));
    assert_eq!(watcher.recv_type("game_over").await, over);
    server.shutdown().await;
}

#[tokio::test]
async fn two_rematches_in_a_row_swap_the_seats() {
    let server = TestServer::start(test_config()).await;
    let mut pair = private_pair(&server, 3).await;
    let row = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];
    for round in 0..3 {
        let over = play_out(&mut pair, &row).await;
        assert_eq!(over["winner"], 1, "round {round}");
        if round == 2 {
            break;
        }
        // The loser asks first; the winner is offered, then accepts.
        pair.o.send(json!({"type": "rematch"})).await;
        pair.x.recv_type("rematch_offered").await;
        pair.x.send(json!({"type": "rematch"})).await;
        let so = pair.o.recv_type("game_started").await;
        let sx = pair.x.recv_type("game_started").await;
        // Seats swap: the former player 2 is now player 1 and moves first.
        assert_eq!((so["you"].clone(), so["mark"].clone()), (json!(1), json!("X")));
        assert_eq!((sx["you"].clone(), sx["mark"].clone()), (json!(2), json!("O")));
        assert_eq!(so["room"], json!(pair.room));
        assert_ne!(so["resume_token"], sx["resume_token"]);
        std::mem::swap(&mut pair.x, &mut pair.o);
    }
    assert_eq!(server.stats.games_finished.load(std::sync::atomic::Ordering::Relaxed), 3);
    server.shutdown().await;
}

#[tokio::test]
async fn resuming_replaces_a_half_open_connection() {
    let server = TestServer::start(timed(0, 3000)).await;
    let mut a = server.client().await;
    let mut b = server.client().await;
    a.send(json!({"type": "create_room"})).await;
    let room = a.recv_type("room_created").await["room"].clone();
    b.send(json!({"type": "join_room", "room": room})).await;
    let sa = a.recv_type("game_started").await;
    b.recv_type("game_started").await;
    // The same player reconnects while the server still holds the old socket.
    let mut a2 = server.client().await;
    a2.send(json!({"type": "resume", "token": sa["resume_token"]})).await;
    let state = a2.recv_type("state").await;
    assert_eq!(state["you"], sa["you"]);
    // The old connection is closed with 4000 "replaced": it does not linger, cut off.
    assert_eq!(a.expect_close_frame().await, Some((CloseCode::Library(4000), "replaced".to_owned())));
    // The new one does; the opponent never saw a disconnect.
    a2.send(json!({"type": "resign"})).await;
    let over = b.recv_json().await;
    assert_eq!(over["type"], "game_over", "no opponent_disconnected before it: {over}");
    assert_eq!(over["reason"], "resign");
    assert_eq!(over["winner"], if sa["you"] == 1 { 2 } else { 1 });
    server.shutdown().await;
}

/// A player's view of one game, for the random-drop test.
async fn play_or_drop(mut pair: tictactoe_tests::Pair, seed: u64) -> Vec<Value> {
    let mut rng = StdRng::seed_from_u64(seed);
    let moves = random_game(3, &mut rng);
    let drop_at = rng.random_range(0..moves.len() + 2);
    let drop_x = rng.random_bool(0.5);
    for (i, &[r, c]) in moves.iter().enumerate() {
        if i == drop_at {
            let (gone, stays) = if drop_x { (pair.x, pair.o) } else { (pair.o, pair.x) };
            drop(gone);
            let mut stays = stays;
            let over = stays.recv_type("game_over").await;
            // Before each side has moved, a drop aborts the game.
            assert_eq!(over["reason"], if i < 2 { "aborted" } else { "disconnect" });
            return vec![over];
        }
        let (m, o) = if i % 2 == 0 { (&mut pair.x, &mut pair.o) } else { (&mut pair.o, &mut pair.x) };
        m.play(r, c).await;
        o.recv_type("moved").await;
    }
    let a = pair.x.recv_type("game_over").await;
    let b = pair.o.recv_type("game_over").await;
    assert_eq!(a, b);
    assert_judged(3, &a);
    vec![a, b]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_started_game_ends_even_when_connections_drop_at_random() {
    let server = TestServer::start(timed(0, 0)).await;
    let mut tasks = Vec::new();
    for seed in 0..60u64 {
        let pair = private_pair(&server, 3).await;
        tasks.push(tokio::spawn(play_or_drop(pair, seed)));
    }
    for t in tasks {
        let overs = t.await.expect("game task");
        assert!(!overs.is_empty());
    }
    server.wait_idle().await;
    let started = server.stats.games_started.load(std::sync::atomic::Ordering::Relaxed);
    let finished = server.stats.games_finished.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!((started, finished), (60, 60));
    // And with a grace period: drops are forfeited when it runs out.
    let server2 = TestServer::start(timed(0, 100)).await;
    let mut tasks = Vec::new();
    for seed in 100..130u64 {
        let pair = quick_pair_sequential(&server2).await;
        tasks.push(tokio::spawn(play_or_drop(pair, seed)));
    }
    for t in tasks {
        t.await.expect("game task");
    }
    server2.wait_idle().await;
    assert_eq!(server2.stats.games_finished.load(std::sync::atomic::Ordering::Relaxed), 30);
    server.shutdown().await;
    server2.shutdown().await;
}

async fn quick_pair_sequential(server: &TestServer) -> tictactoe_tests::Pair {
    tokio::time::timeout(Duration::from_secs(10), quick_pair(server, 3)).await.expect("paired")
}

/// A client that closes cleanly gets the close handshake back, with its own
/// code (RFC 6455 §5.5.1), idle or mid-game; the opponent of one that closed
/// mid-game hears it as a disconnect.
#[tokio::test]
async fn a_clients_close_frame_is_answered_with_its_code() {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    let server = TestServer::start(timed(30_000, 5_000)).await;
    let mut pair = private_pair(&server, 3).await;
    for code in [CloseCode::Normal, CloseCode::Library(4321)] {
        let (mut ws, _) = tokio_tungstenite::connect_async(server.url()).await.expect("connect");
        ws.next().await.expect("welcome").expect("frame");
        ws.send(Message::Close(Some(CloseFrame { code, reason: "bye".into() }))).await.expect("close");
        let answer = loop {
            match tokio::time::timeout(Duration::from_secs(5), ws.next()).await.expect("an answer in time") {
                Some(Ok(Message::Close(frame))) => break frame,
                Some(Ok(_)) => continue,
                other => panic!("no close frame back: {other:?}"),
            }
        };
        assert_eq!(answer.map(|f| f.code), Some(code));
    }
    // Mid-game: the same answer, and the opponent is told.
    pair.x.close_with(CloseFrame { code: CloseCode::Normal, reason: "".into() }).await;
    assert_eq!(pair.x.expect_close().await, Some(CloseCode::Normal));
    pair.o.recv_type("opponent_disconnected").await;
    server.shutdown().await;
}
