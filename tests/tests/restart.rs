//! A restart with a database, in process: a player who does not come back
//! within the fresh grace loses by `disconnect`, and the one who did wins;
//! the game's record is kept. (The real binary under SIGTERM and SIGKILL is
//! `restart_process.rs`.)

use serde_json::json;
use tictactoe_server::Config;
use tictactoe_tests::{TempDir, TestServer, api, test_config};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

#[tokio::test]
async fn after_a_restart_the_player_who_does_not_come_back_loses_by_disconnect() {
    let dir = TempDir::new("restart-grace");
    let config = Config { reconnect_grace_ms: 2_000, database: dir.database("ttt.db"), ..test_config() };
    let server = TestServer::start(config.clone()).await;
    let (mut a, mut b) = (server.client().await, server.client().await);
    a.send(json!({"type": "quick_match"})).await;
    b.send(json!({"type": "quick_match"})).await;
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    let (mut x, mut o, o_token) =
        if sa["you"] == 1 { (a, b, sb["resume_token"].clone()) } else { (b, a, sa["resume_token"].clone()) };
    x.play(1, 1).await;
    o.recv_type("moved").await;
    o.play(0, 0).await;
    x.recv_type("moved").await;
    let server = server.restart(config).await;
    for client in [&mut x, &mut o] {
        assert_eq!(client.expect_close().await, Some(CloseCode::Restart));
    }
    // Only O comes back.
    let mut o = server.client().await;
    o.send(json!({"type": "resume", "token": o_token})).await;
    let state = o.recv_type("state").await;
    assert_eq!(state["moves"], json!([[1, 1], [0, 0]]));
    let away = o.recv_type("opponent_disconnected").await;
    assert!(away["grace_ms"].as_u64().is_some_and(|ms| ms <= 2_000), "{away}");
    let over = o.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(2), json!("disconnect")));
    let id = over["game_id"].as_str().expect("an id");
    let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
    assert_eq!(
        (status, record["reason"].clone(), record["moves"].clone()),
        (200, json!("disconnect"), json!([[1, 1], [0, 0]]))
    );
    server.shutdown().await;
}

/// A restart keeps games in progress only: a private room still waiting for
/// its second player is gone (its code is `room_not_found`), and nothing
/// else is held open.
#[tokio::test]
async fn a_private_room_still_waiting_is_not_kept_across_a_restart() {
    let dir = TempDir::new("restart-waiting");
    let config = Config { database: dir.database("ttt.db"), ..test_config() };
    let server = TestServer::start(config.clone()).await;
    let mut host = server.client().await;
    host.send(json!({"type": "create_room"})).await;
    let code = host.recv_type("room_created").await["room"].clone();
    let mut queued = server.client().await;
    queued.send(json!({"type": "quick_match", "size": 5})).await;
    queued.recv_type("queued").await;
    let server = server.restart(config).await;
    for client in [&mut host, &mut queued] {
        assert_eq!(client.expect_close().await, Some(CloseCode::Restart));
    }
    assert_eq!(server.stats.rooms(), 0, "no room was restored");
    let mut guest = server.client().await;
    guest.send(json!({"type": "join_room", "room": code})).await;
    guest.expect_error(tictactoe_protocol::ErrorCode::RoomNotFound, None).await;
    server.shutdown().await;
}

/// A game against the house survives a restart too: the house is back in
/// its seat at once, at its level, and moves when it is its turn.
#[tokio::test]
async fn a_game_against_the_house_goes_on_after_a_restart() {
    let dir = TempDir::new("restart-house");
    let config = Config {
        reconnect_grace_ms: 5_000,
        house_think_ms: 20,
        database: dir.database("ttt.db"),
        ..test_config()
    };
    let server = TestServer::start(config.clone()).await;
    let mut c = server.client().await;
    c.send(json!({"type": "play_house", "size": 4, "level": "heuristic"})).await;
    let started = c.recv_type("game_started").await;
    let me = started["you"].clone();
    if me == 2 {
        c.recv_type("moved").await;
    }
    // Our move, then the restart before or after the house's answer.
    let mine = c.play(0, 0).await;
    let seq = mine["seq"].as_u64().unwrap();
    let server = server.restart(config).await;
    assert_eq!(c.expect_close().await, Some(CloseCode::Restart));
    let mut c = server.client().await;
    c.send(json!({"type": "resume", "token": started["resume_token"]})).await;
    let state = c.recv_type("state").await;
    assert_eq!(state["you"], me);
    let moves = state["moves"].as_array().unwrap().len() as u64;
    assert!(moves == seq || moves == seq + 1, "{state}");
    // The house has moved, or moves now; then it is our turn and the game goes on.
    let mut taken: Vec<serde_json::Value> = state["moves"].as_array().unwrap().clone();
    if moves == seq {
        let house = c.recv_type("moved").await;
        assert_eq!(house["seq"], seq + 1);
        taken.push(json!([house["row"], house["col"]]));
    }
    let free = (0..16u64).map(|i| json!([i / 4, i % 4])).find(|cell| !taken.contains(cell)).unwrap();
    let next = c.play(free[0].as_u64().unwrap() as usize, free[1].as_u64().unwrap() as usize).await;
    assert_eq!(next["seq"], seq + 2);
    server.shutdown().await;
}
