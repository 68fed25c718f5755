//! The house bot over real sockets: `perfect` never loses on 3×3, every
//! level finishes games on 3×3, 4×4 and 10×10 (and plays the connect-k rule
//! it is given), and its games are unrated records.

use rand::seq::IndexedRandom;
use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{Client, TempDir, TestServer, api, assert_judged_k, test_config};

/// Plays the game just started (`started`) with random moves until it
/// ends; returns its `game_over`.
async fn play_randomly(c: &mut Client, started: &Value, rng: &mut impl rand::Rng) -> Value {
    let (n, me) = (started["size"].as_u64().unwrap() as usize, started["you"].clone());
    let mut free: Vec<[usize; 2]> = (0..n * n).map(|i| [i / n, i % n]).collect();
    if me == 1 {
        let [r, c0] = *free.choose(rng).unwrap();
        c.send(json!({"type": "move", "row": r, "col": c0})).await;
    }
    loop {
        let msg = c.recv_json().await;
        match msg["type"].as_str() {
            Some("moved") => {
                let cell = [msg["row"].as_u64().unwrap() as usize, msg["col"].as_u64().unwrap() as usize];
                free.retain(|&f| f != cell);
                if msg["next"] == me {
                    let [r, c0] = *free.choose(rng).unwrap();
                    c.send(json!({"type": "move", "row": r, "col": c0})).await;
                }
            }
            Some("game_over") => return msg,
            Some("error") => panic!("refused: {msg}"),
            _ => {}
        }
    }
}

/// A fast house: these tests are about its play, not its patience.
fn config() -> Config {
    Config { house_think_ms: 20, ..test_config() }
}

#[tokio::test]
async fn perfect_never_loses_thirty_games_on_3x3_against_random_play() {
    let server = TestServer::start(config()).await;
    let mut c = server.client().await;
    let mut rng = rand::rng();
    c.send(json!({"type": "play_house", "level": "perfect"})).await;
    let mut started = c.recv_type("game_started").await;
    let mut results = [0; 3];
    for _ in 0..30 {
        let players = started["players"].as_array().unwrap().clone();
        let house = if players[0]["name"] == "house" { 1 } else { 2 };
        assert_eq!(
            players[house - 1],
            json!({"name": "house", "account": false, "bot": true, "rating": null})
        );
        let over = play_randomly(&mut c, &started, &mut rng).await;
        assert_judged_k(3, 3, &over);
        let winner = over["winner"].as_u64().unwrap() as usize;
        assert!(winner == 0 || winner == house, "the house lost: {over}");
        results[usize::from(winner == house) + usize::from(winner == 0) * 2] += 1;
        // The house agrees to every rematch; seats swap.
        c.send(json!({"type": "rematch"})).await;
        started = c.recv_type("game_started").await;
        assert_ne!(started["players"][house - 1]["name"], "house");
    }
    assert_eq!(results[0], 0);
}

#[tokio::test]
async fn every_level_finishes_games_on_3x3_4x4_and_10x10() {
    let server = TestServer::start(config()).await;
    let mut rng = rand::rng();
    for level in ["random", "heuristic", "perfect"] {
        for (size, win) in [(3, 3), (4, 4), (10, 10), (10, 5)] {
            let mut c = server.client().await;
            c.send(json!({"type": "play_house", "size": size, "win": win, "level": level})).await;
            let started = c.recv_type("game_started").await;
            assert_eq!((started["size"].clone(), started["win"].clone()), (json!(size), json!(win)));
            let over = play_randomly(&mut c, &started, &mut rng).await;
            assert!(
                ["line", "draw"].contains(&over["reason"].as_str().unwrap()),
                "{level} {size}/{win}: {over}"
            );
            assert_judged_k(size, win, &over);
        }
    }
}

#[tokio::test]
async fn heuristic_and_perfect_play_the_connect_k_rule_they_are_given() {
    // On 7×7 with 3 in a row to win, a player who lets the house get an
    // open two loses quickly: the house must win against play that never
    // blocks (the random player here plays far from the house's marks).
    let server = TestServer::start(config()).await;
    for level in ["heuristic", "perfect"] {
        let mut c = server.client().await;
        c.send(json!({"type": "play_house", "size": 7, "win": 3, "level": level})).await;
        let started = c.recv_type("game_started").await;
        let me = started["you"].clone();
        // Our moves go down the last column, away from the centre, then
        // anywhere free: never a block.
        let mut taken = std::collections::HashSet::new();
        let next = |taken: &std::collections::HashSet<(u64, u64)>| {
            let order = (0..7).map(|r| (r, 6)).chain((0..49).map(|i| (i / 7, i % 7)));
            order.into_iter().find(|cell| !taken.contains(cell)).unwrap()
        };
        if me == 1 {
            let (r, col) = next(&taken);
            c.send(json!({"type": "move", "row": r, "col": col})).await;
        }
        let over = loop {
            let msg = c.recv_json().await;
            match msg["type"].as_str() {
                Some("moved") => {
                    taken.insert((msg["row"].as_u64().unwrap(), msg["col"].as_u64().unwrap()));
                    if msg["next"] == me {
                        let (r, col) = next(&taken);
                        c.send(json!({"type": "move", "row": r, "col": col})).await;
                    }
                }
                Some("game_over") => break msg,
                Some("error") => panic!("{msg}"),
                _ => {}
            }
        };
        let house = if me == 1 { 2 } else { 1 };
        assert_eq!(
            (over["winner"].clone(), over["reason"].clone()),
            (json!(house), json!("line")),
            "{level}: {over}"
        );
        assert_eq!(over["line"]["cells"].as_array().unwrap().len(), 3, "{over}");
    }
}

#[tokio::test]
async fn a_house_game_is_an_unrated_record_and_play_house_is_checked_like_quick_match() {
    let dir = TempDir::new("house-record");
    let server = TestServer::start(Config { database: dir.database("h.db"), ..config() }).await;
    let mut c = server.client().await;
    c.send(json!({"type": "play_house", "size": 1000, "id": 1})).await;
    c.expect_error(ErrorCode::InvalidSize, Some(json!(1))).await;
    c.send(json!({"type": "play_house", "size": 4, "win": 2, "id": 2})).await;
    c.expect_error(ErrorCode::InvalidWin, Some(json!(2))).await;
    c.send(json!({"type": "play_house", "level": "godlike", "id": 3})).await;
    c.expect_error(ErrorCode::BadMessage, Some(json!(3))).await;
    c.send(json!({"type": "play_house", "level": "random"})).await;
    c.recv_type("game_started").await;
    // Busy in a game (the house's first move may come in between).
    c.send(json!({"type": "play_house", "id": 4})).await;
    let refused = c.recv_type("error").await;
    assert_eq!((refused["code"].as_str(), refused["id"].as_i64()), (Some("busy"), Some(4)), "{refused}");
    c.send(json!({"type": "resign"})).await;
    let over = c.recv_type("game_over").await;
    assert_eq!(over["ratings"], Value::Null);
    let id = over["game_id"].as_str().unwrap().to_owned();
    let mut record = Value::Null;
    for _ in 0..100 {
        let (status, body) = api(server.addr, &format!("/api/games/{id}")).await;
        if status == 200 {
            record = body;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(record["rated"], false, "{record}");
    assert!(record["players"].as_array().unwrap().iter().any(|p| p["name"] == "house" && p["bot"] == true));
}

#[tokio::test]
async fn a_player_nobody_pairs_within_house_after_ms_plays_the_house() {
    let server = TestServer::start(config()).await;
    let mut lone = server.client().await;
    lone.send(json!({"type": "quick_match", "size": 4, "house_after_ms": 200, "level": "random", "id": 1}))
        .await;
    assert_eq!(lone.recv_type("queued").await["id"], 1);
    let started = lone.recv_type("game_started").await;
    assert_eq!(started["size"], 4);
    assert!(started["players"].as_array().unwrap().iter().any(|p| p["name"] == "house"), "{started}");
    // With someone to play, the wait ends in a pairing as usual.
    let (mut a, mut b) = (server.client().await, server.client().await);
    a.send(json!({"type": "quick_match", "house_after_ms": 60000})).await;
    a.recv_type("queued").await;
    b.send(json!({"type": "quick_match"})).await;
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    assert_eq!(sa["room"], sb["room"]);
    // A negative wait is refused and queues nobody.
    let mut c = server.client().await;
    c.send(json!({"type": "quick_match", "house_after_ms": -5, "id": 2})).await;
    c.expect_error(ErrorCode::BadMessage, Some(json!(2))).await;
}

#[tokio::test]
async fn a_connection_plays_one_house_game_at_a_time() {
    let server = TestServer::start(config()).await;
    let mut c = server.client().await;
    c.send(json!({"type": "hello", "name": "greedy"})).await;
    c.send(json!({"type": "play_house", "size": 3, "level": "perfect"})).await;
    let first = c.recv_type("game_started").await;
    // Every way to a second house game is refused while the first is live
    // (the house's first move may come in between).
    let second = [
        json!({"type": "play_house", "size": 100, "id": 1}),
        json!({"type": "quick_match", "size": 100, "house_after_ms": 0, "id": 2}),
        json!({"type": "challenge", "name": "house", "size": 100, "id": 3}),
    ];
    for (i, request) in second.into_iter().enumerate() {
        c.send(request).await;
        let refused = c.recv_type("error").await;
        assert_eq!((refused["code"].as_str(), refused["id"].as_u64()), (Some("busy"), Some(i as u64 + 1)));
        assert!(refused["message"].as_str().is_some_and(|m| m.contains("leave first")), "{refused}");
    }
    // The first game goes on: the house answers a move there.
    c.send(json!({"type": "sync", "id": 9})).await;
    let state = c.recv_type("state").await;
    assert_eq!(state["room"], first["room"]);
    let me = first["you"].as_u64().unwrap();
    let board: Vec<String> = serde_json::from_value(state["board"].clone()).unwrap();
    if state["turn"] == me {
        let (r, col) =
            (0..9).map(|i| (i / 3, i % 3)).find(|&(r, col)| board[r].as_bytes()[col] == b'.').unwrap();
        c.send(json!({"type": "move", "row": r, "col": col})).await;
    }
    loop {
        let moved = c.recv_type("moved").await;
        if moved["player"] != me {
            assert_eq!(moved["room"], first["room"]);
            break;
        }
    }
    // Over, it is left for the next one.
    c.send(json!({"type": "resign"})).await;
    c.recv_type("game_over").await;
    c.send(json!({"type": "play_house", "size": 4, "level": "random"})).await;
    let next = c.recv_type("game_started").await;
    assert_ne!(next["room"], first["room"]);
    assert_eq!(next["size"], 4);
}
