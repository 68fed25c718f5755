//! The house moves within one second with the server's default think time,
//! even where its exact search cannot finish and it uses all of it. In a
//! file of its own, so that no other test's searches share the cores.

use std::time::{Duration, Instant};

use serde_json::json;
use tictactoe_server::Config;
use tictactoe_tests::{TestServer, test_config};

#[tokio::test]
async fn the_house_answers_within_a_second_at_the_default_think_time() {
    let config = Config { house_think_ms: Config::default().house_think_ms, ..test_config() };
    let server = TestServer::start(config).await;
    let mut c = server.client().await;
    c.send(json!({"type": "play_house", "size": 10, "level": "perfect"})).await;
    let started = c.recv_type("game_started").await;
    let me = started["you"].clone();
    let mut slowest = Duration::ZERO;
    let mut asked = Instant::now();
    let mut free: Vec<(u64, u64)> = (0..100).map(|i| (i / 10, i % 10)).collect();
    let mut house_moves = 0;
    if me == 1 {
        let (r, col) = free.remove(0);
        c.send(json!({"type": "move", "row": r, "col": col})).await;
    }
    while house_moves < 5 {
        let msg = c.recv_type("moved").await;
        free.retain(|&cell| cell != (msg["row"].as_u64().unwrap(), msg["col"].as_u64().unwrap()));
        if msg["player"] == me {
            // Ours: the house thinks from now.
            asked = Instant::now();
            continue;
        }
        slowest = slowest.max(asked.elapsed());
        house_moves += 1;
        let (r, col) = free.remove(0);
        c.send(json!({"type": "move", "row": r, "col": col})).await;
    }
    println!("slowest house move: {slowest:?}");
    assert!(slowest < Duration::from_secs(1), "the house took {slowest:?} for a move");
}
