//! Graceful shutdown with games in progress: every player gets
//! `game_over(shutdown)` and a 1001 close, and `serve` returns.

use serde_json::json;
use tictactoe_tests::{TestServer, quick_pair, test_config};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

#[tokio::test]
async fn shutdown_ends_every_game_and_closes_with_1001() {
    let server = TestServer::start(test_config()).await;
    let mut pairs = Vec::new();
    for size in [3, 4, 5] {
        let mut pair = quick_pair(&server, size).await;
        pair.x.play(0, 0).await;
        pair.o.recv_type("moved").await;
        pairs.push(pair);
    }
    let mut queued = server.client().await;
    queued.send(json!({"type": "quick_match", "size": 7})).await;
    queued.recv_type("queued").await;
    let mut idle = server.client().await;

    let stats = server.stats.clone();
    let stopping = tokio::spawn(server.shutdown());
    for pair in &mut pairs {
        for client in [&mut pair.x, &mut pair.o] {
            let over = client.recv_type("game_over").await;
            assert_eq!(over["winner"], 0);
            assert_eq!(over["reason"], "shutdown");
            assert_eq!(over["line"], json!(null));
            assert_eq!(over["moves"], json!([[0, 0]]));
            assert_eq!(client.expect_close().await, Some(CloseCode::Away));
        }
    }
    assert_eq!(queued.expect_close().await, Some(CloseCode::Away));
    assert_eq!(idle.expect_close().await, Some(CloseCode::Away));
    stopping.await.expect("serve returned");
    assert_eq!(stats.connections(), 0);
    assert_eq!(stats.rooms(), 0);
    assert_eq!(stats.games_started.load(std::sync::atomic::Ordering::Relaxed), 3);
    assert_eq!(stats.games_finished.load(std::sync::atomic::Ordering::Relaxed), 3);
}
