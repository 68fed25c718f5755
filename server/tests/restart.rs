//! Games in progress survive the server going away: SIGTERM saves them and
//! closes with 1012, SIGKILL loses no move older than 100 ms; started again
//! on the same database, the players resume with their tokens and finish,
//! and the record judges consistent.

mod common;

use std::time::Duration;

use futures::SinkExt;
use serde_json::{Value, json};
use tictactoe_protocol::{Verdict, judge};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use common::{Server, Ws, next_of, temp_dir, until_close};

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.expect("send");
}

async fn get_json(addr: &str, path: &str) -> Value {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    tcp.write_all(req.as_bytes()).await.expect("write");
    let mut text = String::new();
    tcp.read_to_string(&mut text).await.expect("read");
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    serde_json::from_str(body).expect("json body")
}

/// Plays a game to its third move, stops the server with `signal`, starts it
/// again on the same file, resumes both players and finishes the game.
async fn a_game_outlives(signal: &str) {
    let dir = temp_dir(&format!("restart-{signal}"));
    let db = format!("sqlite:{}", dir.join("ttt.db").display());
    let args = ["--database", &db, "--reconnect-grace-ms", "30000", "--turn-timeout-ms", "60000"];
    let server = Server::start(&args);
    let (mut a, mut b) = (server.client().await, server.client().await);
    send(&mut a, json!({"type": "quick_match"})).await;
    send(&mut b, json!({"type": "quick_match"})).await;
    let (sa, sb) = (next_of(&mut a, "game_started").await, next_of(&mut b, "game_started").await);
    let (mut x, mut o, tx, to) = if sa["you"] == 1 {
        (a, b, sa["resume_token"].clone(), sb["resume_token"].clone())
    } else {
        (b, a, sb["resume_token"].clone(), sa["resume_token"].clone())
    };
    for (who, cell) in [(0, [0, 0]), (1, [1, 0]), (0, [0, 1])] {
        let ws = if who == 0 { &mut x } else { &mut o };
        send(ws, json!({"type": "move", "row": cell[0], "col": cell[1]})).await;
        next_of(&mut x, "moved").await;
        next_of(&mut o, "moved").await;
    }

    if signal == "KILL" {
        // Past the 100 ms the contract allows a crash to lose.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    server.signal(signal);
    let want_close = if signal == "KILL" { None } else { Some(CloseCode::Restart) };
    for ws in [&mut x, &mut o] {
        let (before, close) = until_close(ws).await;
        assert!(!before.iter().any(|t| t == "game_over"), "{before:?}");
        assert_eq!(close, want_close);
    }
    let status = server.exits_within(Duration::from_secs(5)).await;
    if signal == "TERM" {
        assert!(status.success(), "exit status {status}");
    }

    let server = Server::start(&args);
    assert_eq!(server.restored, 1);
    let (mut x, mut o) = (server.client().await, server.client().await);
    send(&mut x, json!({"type": "resume", "token": tx})).await;
    send(&mut o, json!({"type": "resume", "token": to})).await;
    for (ws, you) in [(&mut x, 1), (&mut o, 2)] {
        let state = next_of(ws, "state").await;
        assert_eq!(state["moves"], json!([[0, 0], [1, 0], [0, 1]]));
        assert_eq!((state["you"].clone(), state["turn"].clone()), (json!(you), json!(2)));
        assert_eq!(state["clock_ms"].as_u64().map(|ms| ms > 50_000), Some(true), "{state}");
    }
    send(&mut o, json!({"type": "move", "row": 1, "col": 1})).await;
    let moved = next_of(&mut x, "moved").await;
    assert_eq!(moved["seq"], 4);
    send(&mut x, json!({"type": "move", "row": 0, "col": 2})).await;
    let over = next_of(&mut o, "game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")));
    let id = over["game_id"].as_str().expect("a game id");
    let record = get_json(&server.addr, &format!("/api/games/{id}")).await;
    let moves: Vec<[usize; 2]> = serde_json::from_value(record["moves"].clone()).expect("moves");
    assert_eq!(moves, [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]]);
    assert_eq!(judge(3, 3, &moves), Ok(Verdict::A));
    assert_eq!((record["winner"].clone(), record["reason"].clone()), (json!(1), json!("line")));
    // Finished, the game is no longer saved: the next start restores nothing.
    server.signal("TERM");
    server.exits_within(Duration::from_secs(5)).await;
    let server = Server::start(&args);
    assert_eq!(server.restored, 0);
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn sigterm_saves_the_game_closes_with_1012_and_it_goes_on_after_a_restart() {
    a_game_outlives("TERM").await;
}

#[tokio::test]
async fn sigkill_loses_no_move_older_than_100_ms() {
    a_game_outlives("KILL").await;
}
