//! A cluster behind one address: two instances of the real `ttt-server`
//! (on one Postgres and one Redis) behind Debian's `haproxy`, as
//! `scripts/cluster.sh` runs them and OPERATIONS.md sets them up. Two
//! players connect through the balancer's one URL and start a game; the
//! instance that holds it is SIGKILLed; each player reconnects through the
//! same URL, lands on the instance that is left, resumes with its token,
//! and the game is finished there.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_protocol::{Verdict, judge};
use tictactoe_tests::haproxy::Haproxy;
use tictactoe_tests::postgres::{name_of, shared};
use tictactoe_tests::redis::{Redis, instance};
use tictactoe_tests::{Client, TempDir, http_get, record_of};

/// X wins on the top row.
const GAME: [[usize; 2]; 5] = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];

/// The contract's bound on adopting a dead instance's games, and a few
/// seconds more for the balancer to find the dead one down.
const BACK_WITHIN: Duration = Duration::from_secs(15);

/// Resumes `token` through the balancer as a client of the protocol would:
/// a `resume` the instance holds until the game comes to it is answered
/// `state`; `unavailable` is asked again after its `retry_after_ms`. The
/// client, the instance it is on, and its `state`.
async fn come_back(lb: &Haproxy, token: &Value, survivor: &str, deadline: Instant) -> (Client, Value) {
    loop {
        assert!(Instant::now() < deadline, "not back within {BACK_WITHIN:?}");
        let (mut c, on) = lb.client().await;
        assert_eq!(on, survivor, "the balancer sent a player to the dead instance");
        c.send(json!({"type": "resume", "token": token})).await;
        let got = c.recv_any(&["state", "error"]).await;
        if got["type"] == "state" {
            return (c, got);
        }
        assert_eq!(got["code"], "unavailable", "resume refused: {got}");
        let wait = got["retry_after_ms"].as_u64().unwrap_or(500);
        tokio::time::sleep(Duration::from_millis(wait)).await;
    }
}

#[tokio::test]
async fn a_player_whose_instance_dies_comes_back_through_the_balancer_and_finishes_the_game() {
    let pg = shared();
    let url = pg.database("balancer-kill");
    let redis = Redis::start();
    let spill = TempDir::new("balancer-kill");
    let a = instance(&url, &redis, "a", &spill);
    let b = instance(&url, &redis, "b", &spill);
    // Both healthy before the balancer starts (it takes them as up): its
    // round robin then alternates from the first connection on.
    let deadline = Instant::now() + Duration::from_secs(10);
    for server in [&a, &b] {
        while http_get(server.addr, "/healthz").await.0 != 200 {
            assert!(Instant::now() < deadline, "an instance is not healthy");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let lb = Haproxy::start(&[("a", a.addr), ("b", b.addr)]);
    // Round robin: one player on each instance, the game relayed between them.
    let (mut first, on_first) = lb.client().await;
    let (mut second, on_second) = lb.client().await;
    assert_ne!(on_first, on_second, "the balancer spreads the players");
    first.send(json!({"type": "create_room"})).await;
    let room = first.recv_type("room_created").await["room"].as_str().expect("a code").to_owned();
    second.send(json!({"type": "join_room", "room": room})).await;
    let (s1, s2) = (first.recv_type("game_started").await, second.recv_type("game_started").await);
    let (mut players, tokens) = match s1["you"] == 1 {
        true => ([first, second], [s1["resume_token"].clone(), s2["resume_token"].clone()]),
        false => ([second, first], [s2["resume_token"].clone(), s1["resume_token"].clone()]),
    };
    for (i, &[r, c]) in GAME[..3].iter().enumerate() {
        players[i % 2].play(r, c).await;
        players[(i + 1) % 2].recv_type("moved").await;
    }
    // The contract lets a crash lose the last 100 ms: this waits for them.
    let db = name_of(&url);
    let sql = format!("SELECT coalesce(sum(length(cells)) / 4, 0) FROM live_moves WHERE room = '{room}'");
    let deadline = Instant::now() + Duration::from_secs(5);
    while pg.psql(db, &sql).trim() != "3" {
        assert!(Instant::now() < deadline, "the moves were not saved");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The instance that holds the game dies.
    let owner = pg.psql(db, &format!("SELECT owner FROM live_games WHERE room = '{room}'")).trim().to_owned();
    let (dead, survivor) = match owner.as_str() {
        "a" => (&a, "b"),
        "b" => (&b, "a"),
        other => panic!("the game's owner is {other:?}"),
    };
    dead.signal("KILL");
    let killed = Instant::now();
    // Its player's connection drops; the other's, relayed to it, is told
    // to come back (1012) once its instance gives the dead one up.
    for c in &mut players {
        c.until_close().await;
    }
    let deadline = killed + BACK_WITHIN;
    let (x, sx) = come_back(&lb, &tokens[0], survivor, deadline).await;
    let (o, so) = come_back(&lb, &tokens[1], survivor, deadline).await;
    for (state, you) in [(&sx, 1), (&so, 2)] {
        assert_eq!(state["moves"], json!(GAME[..3]), "{state}");
        assert_eq!(state["you"], you, "{state}");
    }
    // The game goes on through the balancer to its end.
    let mut players = [x, o];
    for (i, &[r, c]) in GAME.iter().enumerate().skip(3) {
        players[i % 2].play(r, c).await;
        if i + 1 < GAME.len() {
            players[(i + 1) % 2].recv_type("moved").await;
        }
    }
    let over = players[1].recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")), "{over}");
    let id = over["game_id"].as_str().expect("a game id").to_owned();
    let alive = if survivor == "a" { &a } else { &b };
    let record = record_of(alive.addr, &id).await;
    let moves: Vec<[usize; 2]> = serde_json::from_value(record["moves"].clone()).expect("moves");
    assert_eq!(moves, GAME);
    assert_eq!(judge(3, 3, &moves), Ok(Verdict::A));
}
