//! Many games at once on one server: all complete, all judge-consistent, and
//! the server's rooms and connections return to zero.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

use rand::{SeedableRng, rngs::StdRng};
use serde_json::json;
use tictactoe_tests::{Pair, TestServer, assert_judged, play_out, private_pair, random_game, test_config};

/// Plays a random game to its end; returns the room its `game_over` names
/// and how many moves were played.
async fn play_random(mut pair: Pair, size: usize, seed: u64) -> (String, usize) {
    let moves = random_game(size, &mut StdRng::seed_from_u64(seed));
    let over = play_out(&mut pair, &moves).await;
    assert_judged(size, &over);
    assert_eq!(over["moves"], json!(moves), "the record is the game played, every move once");
    assert_eq!(over["room"], pair.room, "game_over names the game's room");
    (pair.room, moves.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_games_complete() {
    let server = TestServer::start(test_config()).await;
    // 100 games by quick match: 200 clients queue at once; pair them by room.
    let mut clients = Vec::new();
    for _ in 0..200 {
        let mut c = server.client().await;
        c.send(json!({"type": "quick_match", "size": 4})).await;
        clients.push(c);
    }
    let mut rooms: HashMap<String, Vec<(u64, tictactoe_tests::Client)>> = HashMap::new();
    for mut c in clients {
        let started = c.recv_type("game_started").await;
        let room = started["room"].as_str().unwrap_or_default().to_owned();
        rooms.entry(room).or_default().push((started["you"].as_u64().unwrap_or(0), c));
    }
    assert_eq!(rooms.len(), 100, "200 clients form 100 games");
    let mut tasks = Vec::new();
    for (seed, (room, mut seats)) in rooms.into_iter().enumerate() {
        seats.sort_by_key(|(you, _)| *you);
        let (Some((2, o)), Some((1, x))) = (seats.pop(), seats.pop()) else {
            panic!("seats 1 and 2 in {room}")
        };
        tasks.push(tokio::spawn(play_random(Pair { x, o, room }, 4, seed as u64)));
    }
    // And 100 games in private rooms, opened concurrently.
    for g in 0..100u64 {
        let server_pair = private_pair(&server, 3 + (g % 3) as usize).await;
        tasks.push(tokio::spawn(play_random(server_pair, 3 + (g % 3) as usize, 1000 + g)));
    }
    // Every game ends in its own room, and the server counts each move played once.
    let (mut ended, mut moves) = (HashSet::new(), 0);
    for t in tasks {
        let (room, played) = t.await.expect("game task");
        assert!(ended.insert(room.clone()), "two games ended in room {room}");
        moves += played as u64;
    }
    assert_eq!(ended.len(), 200);
    // Every client is dropped by now: nothing is left behind. A room counts
    // its game after delivering `game_over`, so the counts are read once
    // every room has closed.
    server.wait_idle().await;
    assert_eq!(server.stats.games_finished.load(Ordering::Relaxed), 200);
    assert_eq!(server.stats.games_started.load(Ordering::Relaxed), 200);
    assert_eq!(server.stats.moves.load(Ordering::Relaxed), moves, "moves the server counted");
    server.shutdown().await;
}
