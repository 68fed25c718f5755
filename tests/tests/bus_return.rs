//! Redis dies while a game is played across two instances, and comes back:
//! a move the room accepted meanwhile is not lost for the player on the
//! other instance — within 10 s of Redis returning that player has the
//! room's `state` (or the move itself) — and the game goes on to its end;
//! a game that ended meanwhile is told by its `game_over`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_tests::cluster::{GAME, Two};
use tictactoe_tests::{Client, http_get};

/// The contract's bound on healing after Redis returns.
const HEALED: Duration = Duration::from_secs(10);

/// Waits until `/healthz` of the server at `addr` answers `status`.
async fn health(addr: std::net::SocketAddr, status: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while http_get(addr, "/healthz").await.0 != status {
        assert!(Instant::now() < deadline, "/healthz did not become {status}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether `m` tells of the game's move number `seq` (1-based): that move
/// itself, or a `state` that holds it.
fn tells(m: &Value, seq: usize) -> bool {
    (m["type"] == "moved" && m["seq"] == seq)
        || (m["type"] == "state" && m["moves"].as_array().is_some_and(|v| v.len() >= seq))
        || m["type"] == "game_over"
}

/// A game across the instances, played up to where the player on the
/// room's instance (`a`) is to move: the players (X first), the index of
/// the local one, and how many moves were played.
async fn across(
    a: &tictactoe_tests::process::ServerProcess,
    b: &tictactoe_tests::process::ServerProcess,
) -> ([Client; 2], usize, usize) {
    // The room is on `a`; one player is relayed to it from `b`.
    let (mut here, mut there) = (a.client().await, b.client().await);
    here.send(json!({"type": "create_room"})).await;
    let room = here.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    there.send(json!({"type": "join_room", "room": room})).await;
    let you = here.recv_type("game_started").await["you"].clone();
    there.recv_type("game_started").await;
    // Played up to where the player on `a` is to move.
    let (local, first): (usize, usize) = if you == 1 { (0, 2) } else { (1, 3) };
    let mut players: [Client; 2] = match local {
        0 => [here, there],
        _ => [there, here],
    };
    for (i, &[r, c]) in GAME[..first].iter().enumerate() {
        players[i % 2].play(r, c).await;
        players[(i + 1) % 2].recv_type("moved").await;
    }
    (players, local, first)
}

#[tokio::test]
async fn after_redis_returns_a_relayed_player_has_every_move_its_room_accepted() {
    let Two { a, b, mut redis, spill: _spill, .. } = Two::start("cluster-bus-back");
    let (mut players, local, first) = across(&a, &b).await;
    // Redis dies; before anyone notices, the room accepts the local
    // player's move, which cannot reach `b` any more.
    redis.kill();
    let [r, c] = GAME[first];
    players[local].play(r, c).await;
    health(a.addr, 503).await;
    health(b.addr, 503).await;
    redis.resume();
    let back = Instant::now();
    let relayed = &mut players[1 - local];
    loop {
        let m = tokio::time::timeout(HEALED.saturating_sub(back.elapsed()), relayed.recv_json())
            .await
            .unwrap_or_else(|_| panic!("no word of move {} within {HEALED:?} of Redis' return", first + 1));
        assert_ne!(m["type"], "error", "{m}");
        if tells(&m, first + 1) {
            break;
        }
    }
    // And the game goes on across the instances, to its end.
    health(a.addr, 200).await;
    health(b.addr, 200).await;
    for (i, &[r, c]) in GAME.iter().enumerate().skip(first + 1) {
        players[i % 2].play(r, c).await;
    }
    for p in &mut players {
        let over = p.recv_type("game_over").await;
        assert_eq!((&over["winner"], &over["reason"]), (&json!(1), &json!("line")), "{over}");
    }
}

#[tokio::test]
async fn a_game_that_ended_while_redis_was_down_is_told_to_its_relayed_player() {
    let Two { a, b, mut redis, spill: _spill, .. } = Two::start("cluster-bus-over");
    let (mut players, local, _) = across(&a, &b).await;
    // While Redis is down the local player resigns: the game ends on `a`,
    // and its `game_over` cannot reach `b`.
    redis.kill();
    health(a.addr, 503).await;
    players[local].send(json!({"type": "resign"})).await;
    let over = players[local].recv_type("game_over").await;
    assert_eq!(over["winner"], json!(2 - local), "the other seat wins: {over}");
    redis.resume();
    let back = Instant::now();
    let relayed = &mut players[1 - local];
    let told = tokio::time::timeout(HEALED, relayed.recv_type("game_over"))
        .await
        .unwrap_or_else(|_| panic!("the relayed player was not told the game ended within {HEALED:?}"));
    assert!(back.elapsed() < HEALED);
    assert_eq!(told["game_id"], over["game_id"], "{told}");
    assert_eq!(told["winner"], over["winner"]);
}
