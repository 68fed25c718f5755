//! A room with a house seat keeps answering its human while the house
//! searches: the search runs on the blocking pool, not on the room's task or
//! the runtime's threads. In a file of its own, so that no other test's
//! searches share the machine's cores with it.

use std::time::{Duration, Instant};

use serde_json::json;
use tictactoe_server::Config;
use tictactoe_tests::{TestServer, test_config};

#[tokio::test]
async fn pings_and_syncs_are_answered_within_50_ms_while_the_house_thinks() {
    // 900 ms to think about a 10×10 board: the exact search cannot finish,
    // so the house uses all of it.
    let server = TestServer::start(Config { house_think_ms: 900, ..test_config() }).await;
    let mut c = server.client().await;
    c.send(json!({"type": "play_house", "size": 10, "level": "perfect"})).await;
    let started = c.recv_type("game_started").await;
    if started["you"] == 1 {
        c.play(4, 4).await;
    }
    // The house is thinking now.
    let thinking = Instant::now();
    let mut slowest = Duration::ZERO;
    for i in 0..5 {
        for (request, reply) in [("ping", "pong"), ("sync", "state")] {
            let asked = Instant::now();
            c.send(json!({"type": request, "id": i})).await;
            let answer = c.recv_json().await;
            slowest = slowest.max(asked.elapsed());
            assert_eq!((answer["type"].as_str(), answer["id"].as_i64()), (Some(reply), Some(i)), "{answer}");
        }
    }
    assert!(thinking.elapsed() < Duration::from_millis(900), "the answers came while the house thought");
    assert!(slowest < Duration::from_millis(50), "a request waited {slowest:?} while the house thought");
    // And the house does move.
    let moved = c.recv_type("moved").await;
    assert_ne!(moved["player"], started["you"]);
    assert!(thinking.elapsed() < Duration::from_secs(3), "the house took {:?}", thinking.elapsed());
}
