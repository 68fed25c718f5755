//! The real `ttt-server` binary without a database: it logs its address, and
//! on SIGTERM ends the game in progress with `shutdown`, closes with 1001 and
//! exits 0.

use std::time::Duration;

use serde_json::json;
use tictactoe_tests::process::ServerProcess;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

#[tokio::test]
async fn sigterm_ends_games_and_exits_cleanly() {
    let server = ServerProcess::start(&["--database", "none"]);
    let (mut a, mut b) = (server.client().await, server.client().await);
    for c in [&mut a, &mut b] {
        c.send(json!({"type": "quick_match"})).await;
    }
    a.recv_type("game_started").await;
    b.recv_type("game_started").await;

    server.signal("TERM");
    for c in [&mut a, &mut b] {
        let over = c.recv_type("game_over").await;
        assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(0), json!("shutdown")));
        assert_eq!(c.until_close().await.1, Some(CloseCode::Away));
    }
    let code = server.exits_within(Duration::from_secs(5)).await;
    assert!(code.success(), "exit status {code}");
}
