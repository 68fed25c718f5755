//! The real `ttt-server` binary without a database: it logs its address, and
//! on SIGTERM ends the game in progress with `shutdown`, closes with 1001 and
//! exits 0.

mod common;

use std::time::Duration;

use futures::SinkExt;
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use common::{Server, next_of, until_close};

#[tokio::test]
async fn sigterm_ends_games_and_exits_cleanly() {
    let server = Server::start(&["--database", "none"]);
    let (mut a, mut b) = (server.client().await, server.client().await);
    for ws in [&mut a, &mut b] {
        ws.send(Message::text(json!({"type": "quick_match"}).to_string())).await.expect("send");
    }
    next_of(&mut a, "game_started").await;
    next_of(&mut b, "game_started").await;

    server.signal("TERM");
    for ws in [&mut a, &mut b] {
        let over = next_of(ws, "game_over").await;
        assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(0), json!("shutdown")));
        assert_eq!(until_close(ws).await.1, Some(CloseCode::Away));
    }
    let code = server.exits_within(Duration::from_secs(5)).await;
    assert!(code.success(), "exit status {code}");
}
