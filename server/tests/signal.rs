//! The real `ttt-server` binary: it logs its address, and on SIGTERM ends the
//! game in progress with `shutdown`, closes with 1001 and exits 0.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn next_of(ws: &mut Ws, kind: &str) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("in time")
            .expect("open")
            .expect("frame");
        if let Message::Text(t) = msg {
            let v: Value = serde_json::from_str(&t).expect("json");
            if v["type"] == kind {
                return v;
            }
        }
    }
}

#[tokio::test]
async fn sigterm_ends_games_and_exits_cleanly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ttt-server"))
        .args(["--bind", "127.0.0.1:0", "--database", "none"])
        .env("RUST_LOG", "info")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start ttt-server");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let addr = loop {
        let line = lines.next().expect("a log line").expect("utf-8");
        if let Some(rest) = line.split("addr=").nth(1) {
            break rest.split_whitespace().next().unwrap_or_default().to_owned();
        }
    };
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));

    let url = format!("ws://{addr}/");
    let (mut a, _) = tokio_tungstenite::connect_async(&url).await.expect("connect a");
    let (mut b, _) = tokio_tungstenite::connect_async(&url).await.expect("connect b");
    for ws in [&mut a, &mut b] {
        ws.send(Message::text(json!({"type": "quick_match"}).to_string())).await.expect("send");
    }
    next_of(&mut a, "game_started").await;
    next_of(&mut b, "game_started").await;

    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill");
    assert!(status.success());
    for ws in [&mut a, &mut b] {
        let over = next_of(ws, "game_over").await;
        assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(0), json!("shutdown")));
        let close = loop {
            match tokio::time::timeout(Duration::from_secs(10), ws.next()).await.expect("close in time") {
                Some(Ok(Message::Close(frame))) => break frame.map(|f| f.code),
                Some(Ok(_)) => continue,
                _ => break None,
            }
        };
        assert_eq!(close, Some(CloseCode::Away));
    }
    let mut exited = None;
    for _ in 0..100 {
        if let Some(code) = child.try_wait().expect("wait") {
            exited = Some(code);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let Some(code) = exited else {
        let _ = child.kill();
        panic!("ttt-server did not exit within 5 s of SIGTERM");
    };
    assert!(code.success(), "exit status {code}");
}
