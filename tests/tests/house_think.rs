//! A room with a house seat keeps answering its human while the house
//! searches: the search runs on the blocking pool, not on the room's task or
//! the runtime's threads. In a file of its own, so that no other test's
//! searches share the machine's cores with it.

use serde_json::json;
use tictactoe_server::Config;
use tictactoe_tests::{TestServer, test_config};

#[tokio::test]
async fn pings_and_syncs_are_answered_while_the_house_thinks() {
    // 900 ms to think about a 10×10 board: the exact search cannot finish,
    // so the house uses all of it.
    let server = TestServer::start(Config { house_think_ms: 900, ..test_config() }).await;
    let mut c = server.client().await;
    c.send(json!({"type": "play_house", "size": 10, "level": "perfect"})).await;
    let started = c.recv_type("game_started").await;
    let me = started["you"].clone();
    let house = if me == 1 { 2 } else { 1 };
    let mut before = 0;
    if me == 1 {
        c.play(4, 4).await;
        before = 1;
    }
    // The house is thinking now: every request is answered before its move,
    // each answer the very next message, and every state still waits for it.
    for i in 0..5 {
        for (request, reply) in [("ping", "pong"), ("sync", "state")] {
            c.send(json!({"type": request, "id": i})).await;
            let answer = c.recv_json().await;
            assert_eq!((answer["type"].as_str(), answer["id"].as_i64()), (Some(reply), Some(i)), "{answer}");
            if reply == "state" {
                let moves = answer["moves"].as_array().map(Vec::len);
                assert_eq!((moves, answer["turn"].clone()), (Some(before), json!(house)), "{answer}");
            }
        }
    }
    // And the house does move, after all of them.
    let moved = c.recv_json().await;
    assert_eq!((moved["type"].as_str(), moved["player"].clone()), (Some("moved"), json!(house)), "{moved}");
    assert_eq!(moved["seq"], before + 1);
}
