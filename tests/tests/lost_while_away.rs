//! A player who comes back with the resume token of a game that ended
//! while it was away (lost on its grace running out, or won by the other
//! while it was elsewhere) is refused with `invalid_token` and told the
//! game's `game_id`, whose record at `/api/games/{game_id}` says how it
//! ended: whether its room is still open, or has closed and only the
//! lobby remembers the token.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_server::Config;
use tictactoe_tests::{Client, TempDir, TestServer, record_of, test_config};

/// Two players in a private room: X and O, with their `game_started`s.
async fn pair(server: &TestServer) -> ([Client; 2], [Value; 2]) {
    let (mut a, mut b) = (server.client().await, server.client().await);
    a.send(json!({"type": "create_room", "size": 3})).await;
    let room = a.recv_type("room_created").await["room"].clone();
    b.send(json!({"type": "join_room", "room": room})).await;
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    match sa["you"] == 1 {
        true => ([a, b], [sa, sb]),
        false => ([b, a], [sb, sa]),
    }
}

/// Resumes with `token` on a new connection: the refusal, once the room
/// that closed has handed its tokens to the lobby (until then a resume
/// may hear that the room is closing, which says to try again).
async fn refused_resume(server: &TestServer, token: &Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let mut c = server.client().await;
        c.send(json!({"type": "resume", "token": token, "id": 9})).await;
        let got = c.recv_any(&["state", "error"]).await;
        assert_eq!(got["type"], "error", "the game is over, yet: {got}");
        if got["code"] != "room_not_found" {
            assert_eq!((got["code"].clone(), got["id"].clone()), (json!("invalid_token"), json!(9)), "{got}");
            return got;
        }
        assert!(Instant::now() < deadline, "the room stayed closing: {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_player_whose_grace_ran_out_is_told_the_game_id_when_it_comes_back() {
    let dir = TempDir::new("lost-away");
    let config = Config { reconnect_grace_ms: 300, database: dir.database("ttt.db"), ..test_config() };
    let server = TestServer::start(config).await;
    let ([mut x, mut o], [sx, _]) = pair(&server).await;
    x.play(0, 0).await;
    o.recv_type("moved").await;
    o.play(1, 1).await;
    x.recv_type("moved").await;
    // X is gone on its turn, and does not come back in time: O wins.
    drop(x);
    o.recv_type("opponent_disconnected").await;
    let over = o.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(2), json!("disconnect")), "{over}");
    let id = over["game_id"].as_str().expect("a recorded game").to_owned();
    // The room closes (X cannot rematch); its tokens are the lobby's now.
    o.recv_type("room_closed").await;
    let refusal = refused_resume(&server, &sx["resume_token"]).await;
    assert_eq!(refusal["game_id"], json!(id), "{refusal}");
    assert!(
        refusal["message"].as_str().is_some_and(|m| m.contains(&format!("/api/games/{id}"))),
        "{refusal}"
    );
    let ended = record_of(server.addr, &id).await;
    assert_eq!((ended["winner"].clone(), ended["reason"].clone()), (json!(2), json!("disconnect")));
    // A token that never was one says nothing of any game.
    let mut c = server.client().await;
    let made_up = format!("{}{}", &sx["resume_token"].as_str().unwrap_or_default()[..10], "0".repeat(32));
    c.send(json!({"type": "resume", "token": made_up})).await;
    let unknown = c.recv_type("error").await;
    assert_eq!(
        (unknown["code"].clone(), unknown.get("game_id")),
        (json!("invalid_token"), None),
        "{unknown}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_token_of_a_game_that_ended_in_a_room_still_open_is_told_the_game_id() {
    let dir = TempDir::new("lost-open");
    let server = TestServer::start(Config { database: dir.database("ttt.db"), ..test_config() }).await;
    let ([mut x, mut o], [_, so]) = pair(&server).await;
    // X wins the top row; both stay, the room open for a rematch.
    for (i, [r, c]) in [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]].into_iter().enumerate() {
        let (mover, other) = if i % 2 == 0 { (&mut x, &mut o) } else { (&mut o, &mut x) };
        mover.play(r, c).await;
        other.recv_type("moved").await;
    }
    let over = o.recv_type("game_over").await;
    let id = over["game_id"].as_str().expect("a recorded game").to_owned();
    // O's other device comes with the token of the game that just ended.
    let refusal = refused_resume(&server, &so["resume_token"]).await;
    assert_eq!(refusal["game_id"], json!(id), "{refusal}");
    let ended = record_of(server.addr, &id).await;
    assert_eq!((ended["winner"].clone(), ended["reason"].clone()), (json!(1), json!("line")));
    // The room is still open: the players rematch there.
    x.send(json!({"type": "rematch"})).await;
    o.send(json!({"type": "rematch"})).await;
    o.recv_type("game_started").await;
    server.shutdown().await;
}
