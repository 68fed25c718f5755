//! What the cluster's tests share: two instances of the real binary on one
//! Postgres and one Redis, a game between two players on one of them, and
//! the steps of an adoption (saved moves, resumes, the game finished).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_protocol::{Verdict, judge};

use crate::postgres::{Postgres, name_of, shared};
use crate::process::ServerProcess;
use crate::redis::{Redis, instance};
use crate::{Client, TempDir, api, assert_judged};

/// The contract's bound on adopting a dead instance's games.
pub const ADOPTION: Duration = Duration::from_secs(10);

/// Two instances, `a` and `b`, on a database of their own (`name`) in the
/// shared Postgres and on a Redis of their own.
pub struct Two {
    /// The instances.
    pub a: ServerProcess,
    /// The second.
    pub b: ServerProcess,
    /// The database's URL.
    pub url: String,
    /// Their Redis.
    pub redis: Redis,
    /// Where they spill.
    pub spill: TempDir,
}

impl Two {
    /// Starts both.
    pub fn start(name: &str) -> Two {
        let url = shared().database(name);
        let redis = Redis::start();
        let spill = TempDir::new(name);
        let a = instance(&url, &redis, "a", &spill);
        let b = instance(&url, &redis, "b", &spill);
        Two { a, b, url, redis, spill }
    }
}

/// A game between two players on `server`, played to its `moves`th move:
/// the players (X first) and their resume tokens.
pub async fn game_on(server: &ServerProcess, moves: &[[usize; 2]]) -> ([Client; 2], [Value; 2], String) {
    game_between([server.client().await, server.client().await], moves).await
}

/// A game between `a` (who creates the room) and `b`, as [`game_on`].
pub async fn game_between(
    [mut a, mut b]: [Client; 2],
    moves: &[[usize; 2]],
) -> ([Client; 2], [Value; 2], String) {
    a.send(json!({"type": "create_room"})).await;
    let room = a.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    b.send(json!({"type": "join_room", "room": room})).await;
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    let (mut players, tokens) = match sa["you"] == 1 {
        true => ([a, b], [sa["resume_token"].clone(), sb["resume_token"].clone()]),
        false => ([b, a], [sb["resume_token"].clone(), sa["resume_token"].clone()]),
    };
    for (i, &[r, c]) in moves.iter().enumerate() {
        players[i % 2].play(r, c).await;
        players[(i + 1) % 2].recv_type("moved").await;
    }
    (players, tokens, room)
}

/// Waits until `n` moves of the game in `room` are saved in database `url` of `pg`.
pub async fn saved(pg: &Postgres, url: &str, room: &str, n: usize) {
    let sql = format!("SELECT coalesce(sum(length(cells)) / 4, 0) FROM live_moves WHERE room = '{room}'");
    let deadline = Instant::now() + Duration::from_secs(5);
    while pg.psql(name_of(url), &sql).trim() != n.to_string() {
        assert!(Instant::now() < deadline, "{n} moves of {room} were not saved");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Resumes `token` on `server` by `deadline`, once, as a client that takes
/// `invalid_token` for the end of its game would: the instance holds the
/// `resume` while the game may still come to it. The client and its `state`.
pub async fn resume_by(server: &ServerProcess, token: &Value, deadline: Instant) -> (Client, Value) {
    let mut c = server.client().await;
    c.send(json!({"type": "resume", "token": token})).await;
    let got = c.recv_any(&["state", "error"]).await;
    assert_eq!(got["type"], "state", "{got}");
    assert!(Instant::now() < deadline, "the game was not adopted in time");
    (c, got)
}

/// Both players resume on `server` (within [`ADOPTION`] of `since`) and
/// see `moves`, the clock paused at more than 50 of its 60 s.
pub async fn both_resume(
    server: &ServerProcess,
    tokens: &[Value; 2],
    since: Instant,
    moves: &Value,
) -> [Client; 2] {
    let deadline = since + ADOPTION;
    let (x, sx) = resume_by(server, &tokens[0], deadline).await;
    let (o, so) = resume_by(server, &tokens[1], deadline).await;
    for (state, you) in [(&sx, 1), (&so, 2)] {
        assert_eq!(&state["moves"], moves, "{state}");
        assert_eq!(state["you"], you);
        assert!(state["clock_ms"].as_u64().is_some_and(|ms| ms > 50_000), "the clock was paused: {state}");
    }
    [x, o]
}

/// Plays `moves` on from move `from` (0-based) to a win by X, and checks
/// the record on `server` against every move of the game.
pub async fn finish(server: &ServerProcess, players: &mut [Client; 2], from: usize, all: &[[usize; 2]]) {
    for (i, &[r, c]) in all.iter().enumerate().skip(from) {
        let own = players[i % 2].play(r, c).await;
        assert_eq!(own["seq"], i + 1, "{own}");
        if i + 1 < all.len() {
            players[(i + 1) % 2].recv_type("moved").await;
        }
    }
    let over = players[1].recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")), "{over}");
    assert_judged(3, &over);
    let id = over["game_id"].as_str().expect("a game id").to_owned();
    let deadline = Instant::now() + Duration::from_secs(5);
    let record = loop {
        let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
        if status == 200 {
            break record;
        }
        assert!(Instant::now() < deadline, "no record of {id}: {status} {record}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let moves: Vec<[usize; 2]> = serde_json::from_value(record["moves"].clone()).expect("moves");
    assert_eq!(moves, all);
    assert_eq!(judge(3, 3, &moves), Ok(Verdict::A));
}

/// X wins on the top row.
pub const GAME: [[usize; 2]; 5] = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];
