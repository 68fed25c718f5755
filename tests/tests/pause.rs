//! An instance stalled past its lease (SIGSTOP, as a VM pause or a long
//! stall would) while another adopted its games, then let go (SIGCONT):
//! nothing it says contradicts the record — no `moved`, no `game_over` of
//! its own, its players sent on with 1012 — and the game is recorded and
//! rated once, by the instance that held it. And with no fault at all, the
//! ratings `game_over` shows are the ones the record keeps, also when one
//! account finishes games on two instances at once.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_tests::cluster::{ADOPTION, GAME, Two, both_resume, game_between, saved};
use tictactoe_tests::postgres::{name_of, shared};
use tictactoe_tests::process::ServerProcess;
use tictactoe_tests::{Client, api};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// A client of `server` signed in as a new account `name`.
async fn account(server: &ServerProcess, name: &str) -> Client {
    let mut c = server.client().await;
    let token = c.register(name, false).await;
    c.sign_in(name, &token).await;
    c
}

/// Waits until `server`'s log says it gave instance `gone` up.
async fn given_up(server: &ServerProcess, gone: &str, since: Instant) {
    let forgotten = ["an instance left the cluster", "an instance stopped answering on the bus"];
    let tag = format!("instance={gone}");
    while !server.log().iter().any(|l| l.contains(&tag) && forgotten.iter().any(|f| l.contains(f))) {
        assert!(since.elapsed() < ADOPTION, "{gone} was not given up: {:?}", server.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The record of game `id` on `server`, once it is there.
async fn record(server: &ServerProcess, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
        if status == 200 {
            return record;
        }
        assert!(Instant::now() < deadline, "no record of {id}: {status} {record}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_paused_instance_comes_back_saying_nothing_and_the_game_is_recorded_and_rated_once() {
    let pg = shared();
    let Two { a, b, url, redis: _redis, spill: _spill } = Two::start("cluster-pause");
    let players = [account(&a, "pause-x").await, account(&a, "pause-o").await];
    // X is one move from a win on `a`: the top row but its last cell.
    let (mut old, tokens, room) = game_between(players, &GAME[..4]).await;
    saved(pg, &url, &room, 4).await;
    a.signal("STOP");
    let frozen = Instant::now();
    // X's winning move waits in the frozen instance's socket.
    old[0].send(json!({"type": "move", "row": 0, "col": 2})).await;
    given_up(&b, "a", frozen).await;
    // On `b`, the adopter, the game ends otherwise: X resigns.
    let mut players = both_resume(&b, &tokens, frozen, &json!(GAME[..4])).await;
    players[0].send(json!({"type": "resign"})).await;
    let over = players[1].recv_type("game_over").await;
    assert_eq!((&over["winner"], &over["reason"]), (&json!(2), &json!("resign")), "{over}");
    let id = over["game_id"].as_str().expect("a game id").to_owned();
    // Back, `a` checks its lease before acting on the move it queued: the
    // game is b's (and over), so its copy is let go without a word.
    a.signal("CONT");
    for c in &mut old {
        let (before, close) = c.until_close().await;
        let said: Vec<&Value> =
            before.iter().filter(|m| m["type"] == "moved" || m["type"] == "game_over").collect();
        assert!(said.is_empty(), "the stale copy spoke: {said:?}");
        assert_eq!(close, Some(CloseCode::Restart));
    }
    // Its log says why (read from its stderr a moment after the close).
    let said = Instant::now();
    while !a.log().iter().any(|l| l.contains("they are let go")) {
        assert!(said.elapsed() < Duration::from_secs(5), "{:?}", a.log());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The record is b's, and each account was rated once.
    let kept = record(&b, &id).await;
    assert_eq!((&kept["winner"], &kept["reason"]), (&json!(2), &json!("resign")), "{kept}");
    assert_eq!(kept["ratings"], over["ratings"], "game_over shows what the record keeps");
    let db = name_of(&url);
    let rated =
        pg.psql(db, "SELECT string_agg(games::text, ',' ORDER BY account) FROM ratings WHERE games > 0");
    assert_eq!(rated.trim(), "1,1", "each account rated once");
    let games = pg.psql(db, &format!("SELECT count(*) FROM games WHERE room = '{room}'"));
    assert_eq!(games.trim(), "1");
    // `a`, asked, has the same record (one store).
    assert_eq!(record(&a, &id).await, kept);
    drop(a);
}

#[tokio::test]
async fn ratings_shown_are_the_ratings_recorded_when_one_account_ends_games_on_two_instances_at_once() {
    let Two { a, b, redis: _redis, spill: _spill, .. } = Two::start("cluster-ratings");
    let token = {
        let mut c = a.client().await;
        c.register("twice", false).await
    };
    let mut games = Vec::new();
    for (server, rival) in [(&a, "rival-a"), (&b, "rival-b")] {
        let mut me = server.client().await;
        me.sign_in("twice", &token).await;
        let them = account(server, rival).await;
        // `twice` creates the room; whoever is X, play to one move before X wins.
        games.push(game_between([me, them], &GAME[..4]).await);
    }
    // Both winning moves at once: X wins each game (`twice` is X in one, or both, or neither).
    for (players, _, _) in &mut games {
        players[0].send(json!({"type": "move", "row": 0, "col": 2})).await;
    }
    let mut shown = Vec::new();
    for ((players, _, _), server) in games.iter_mut().zip([&a, &b]) {
        let over = players[1].recv_type("game_over").await;
        let kept = record(server, over["game_id"].as_str().expect("an id")).await;
        assert_eq!(over["ratings"], kept["ratings"], "shown {over}, recorded {kept}");
        shown.push(kept);
    }
    // The two games were rated one after the other: each of `twice`'s
    // seats moved on from where the other game left it.
    let seat = |r: &Value| usize::from(r["players"][1]["name"] == "twice");
    let (one, two) = (&shown[0]["ratings"][seat(&shown[0])], &shown[1]["ratings"][seat(&shown[1])]);
    assert!(one["after"] == two["before"] || two["after"] == one["before"], "{one} {two}");
}
