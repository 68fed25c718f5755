//! The corrections to protocol 1 found by an independent bot author, each
//! over a real socket: string-only types, integers beyond 64 bits, `-0`,
//! refusals in our own words, 1007, `sync`, `retry_after_ms`, the new
//! limits, and names.

use std::time::Duration;

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{Client, TestServer, quick_pair, test_config};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};

/// Sends `text` as it is and expects `bad_message` naming `field`, in words
/// that say nothing of the server's programming language.
async fn expect_bad(client: &mut Client, text: &str, field: &str) -> Value {
    client.send_raw(Message::text(text)).await;
    let err = client.expect_error(ErrorCode::BadMessage, None).await;
    let message = err["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains(&format!("\"{field}\"")), "{text}: {message:?} should name {field}");
    for leak in ["variant", "untagged", "enum", "i64", "u64", "invalid type", "serde", "struct"] {
        assert!(!message.contains(leak), "{text}: {message:?} leaks {leak:?}");
    }
    err
}

#[tokio::test]
async fn a_type_that_is_not_a_string_is_refused_and_changes_nothing() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair(&server, 3).await;
    // What serde's derived enums used to accept as a move, a pong and a resign.
    for ty in ["5", "10", "6", "0", "5.0", "true", "null", "[\"move\"]", "{\"move\": 1}"] {
        let text = format!(r#"{{"type": {ty}, "row": 1, "col": 1, "id": 3}}"#);
        let err = expect_bad(&mut p.x, &text, "type").await;
        assert_eq!(err["id"], 3, "{text}");
    }
    // Nothing was played or resigned: the first real move is seq 1.
    assert_eq!(p.x.play(1, 1).await["seq"], 1);
    assert_eq!(p.o.recv_json().await["seq"], 1, "the opponent saw nothing before it");
    server.shutdown().await;
}

#[tokio::test]
async fn mistyped_and_missing_fields_are_named() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair(&server, 3).await;
    let cases = [
        (r#"{"type": "move", "row": 1}"#, "col"),
        (r#"{"type": "move", "row": "1", "col": 1}"#, "row"),
        (r#"{"type": "move", "row": 1, "col": 0.5}"#, "col"),
        (r#"{"type": "hello", "name": 5}"#, "name"),
        (r#"{"type": "quick_match", "size": "big"}"#, "size"),
        (r#"{"type": "resume"}"#, "token"),
        (r#"{"type": "ping", "id": {"a": 1}}"#, "id"),
        (r#"{"row": 1, "col": 1}"#, "type"),
        (r#"{"type": "dance"}"#, "dance"),
    ];
    for (text, field) in cases {
        expect_bad(&mut p.x, text, field).await;
    }
    server.shutdown().await;
}

#[tokio::test]
async fn integers_beyond_64_bits_are_out_of_range_not_malformed() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair(&server, 3).await;
    let big = "18446744073709551616";
    for (row, col) in
        [(big.to_owned(), "0".to_owned()), ("0".into(), format!("-{big}")), ("1e19".into(), "0".into())]
    {
        let text = format!(r#"{{"type": "move", "row": {row}, "col": {col}, "id": 1}}"#);
        p.x.send_raw(Message::text(text)).await;
        p.x.expect_error(ErrorCode::OutOfBounds, Some(json!(1))).await;
    }
    // -0 is 0.
    p.x.send_raw(Message::text(r#"{"type": "move", "row": -0, "col": -0}"#)).await;
    let moved = p.x.recv_type("moved").await;
    assert_eq!(
        (moved["row"].clone(), moved["col"].clone(), moved["seq"].clone()),
        (json!(0), json!(0), json!(1))
    );
    let mut lone = server.client().await;
    for request in ["quick_match", "create_room"] {
        for size in [big.to_owned(), format!("-{big}"), "1e19".into()] {
            let text = format!(r#"{{"type": "{request}", "size": {size}, "id": 2}}"#);
            lone.send_raw(Message::text(text)).await;
            lone.expect_error(ErrorCode::InvalidSize, Some(json!(2))).await;
        }
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_text_frame_that_is_not_utf8_closes_with_1007() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair(&server, 3).await;
    let bad = vec![b'{', b'"', 0xff, 0xfe, b'"', b'}'];
    p.x.send_raw(Message::Frame(Frame::message(bad, OpCode::Data(Data::Text), true))).await;
    assert_eq!(p.x.expect_close().await, Some(CloseCode::Invalid));
    // For the opponent it is a dropped player like any other (before any
    // move: the game is aborted).
    assert_eq!(p.o.recv_type("game_over").await["reason"], "aborted");
    server.shutdown().await;
}

#[tokio::test]
async fn sync_answers_seated_players_and_spectators_and_refuses_the_rest() {
    let server = TestServer::start(test_config()).await;
    let mut p = quick_pair(&server, 3).await;
    p.x.play(1, 1).await;
    p.o.recv_type("moved").await;
    let mut watcher = server.client().await;
    watcher.send(json!({"type": "spectate", "room": p.room})).await;
    watcher.recv_type("state").await;
    for (client, you) in [(&mut p.x, json!(1)), (&mut p.o, json!(2)), (&mut watcher, json!(null))] {
        client.send(json!({"type": "sync", "id": "s"})).await;
        let state = client.recv_json().await;
        assert_eq!(state["type"], "state", "{state}");
        assert_eq!((state["you"].clone(), state["id"].clone()), (you, json!("s")));
        assert_eq!((state["moves"].clone(), state["turn"].clone()), (json!([[1, 1]]), json!(2)));
        assert_eq!(state["board"], json!(["...", ".X.", "..."]));
    }
    // Neither seated nor watching; then waiting in the queue.
    let mut idle = server.client().await;
    idle.send(json!({"type": "sync", "id": 1})).await;
    idle.expect_error(ErrorCode::NotInGame, Some(json!(1))).await;
    idle.send(json!({"type": "quick_match", "size": 7})).await;
    idle.recv_type("queued").await;
    idle.send(json!({"type": "sync", "id": 2})).await;
    idle.expect_error(ErrorCode::NotInGame, Some(json!(2))).await;
    server.shutdown().await;
}

/// On tokio's paused clock, which the limiter reads: exactly the time told
/// passes, whatever the machine's load.
#[tokio::test(start_paused = true)]
async fn rate_limited_says_when_to_retry_and_that_time_is_enough() {
    let server = TestServer::start(Config { max_messages_per_second: 10, ..test_config() }).await;
    let mut c = server.client().await;
    c.send_batch((0..11).map(|i| json!({"type": "ping", "id": i})).collect()).await;
    for i in 0..10 {
        assert_eq!(c.recv_type("pong").await["id"], i);
    }
    let err = c.expect_error(ErrorCode::RateLimited, Some(json!(10))).await;
    let wait = err["retry_after_ms"].as_u64().expect("retry_after_ms is an integer");
    // 10 per second: one frame's worth of refill is at most 100 ms away.
    assert!((1..=100).contains(&wait), "{err}");
    tokio::time::sleep(Duration::from_millis(wait)).await;
    c.send(json!({"type": "ping", "id": "after"})).await;
    assert_eq!(c.recv_json().await, json!({"type": "pong", "id": "after"}));
    // Other errors carry no retry_after_ms.
    tokio::time::sleep(Duration::from_millis(150)).await;
    c.send(json!({"type": "resign", "id": "x"})).await;
    let other = c.expect_error(ErrorCode::NotInGame, Some(json!("x"))).await;
    assert!(other.get("retry_after_ms").is_none(), "{other}");
    server.shutdown().await;
}

#[tokio::test]
async fn welcome_announces_the_ping_interval_and_handshake_timeout() {
    let config = Config { ping_interval_ms: 12_345, handshake_timeout_ms: 2_345, ..test_config() };
    let server = TestServer::start(config).await;
    let c = server.client().await;
    assert_eq!(c.welcome["limits"]["ping_interval_ms"], 12_345);
    assert_eq!(c.welcome["limits"]["handshake_timeout_ms"], 2_345);
    server.shutdown().await;
}

#[tokio::test]
async fn names_are_trimmed_and_disguising_characters_refused() {
    let server = TestServer::start(test_config()).await;
    let mut a = server.client().await;
    let mut b = server.client().await;
    for (i, name) in
        ["ann\u{202E}nib", "\u{200B}", "a\u{200B}b", "bob\u{2066}", "   "].into_iter().enumerate()
    {
        a.send(json!({"type": "hello", "name": name, "id": i})).await;
        a.expect_error(ErrorCode::InvalidName, Some(json!(i))).await;
    }
    a.send(json!({"type": "hello", "name": "  spaced  "})).await;
    b.send(json!({"type": "hello", "name": "bea"})).await;
    a.send(json!({"type": "quick_match"})).await;
    a.recv_type("queued").await;
    b.send(json!({"type": "quick_match"})).await;
    let started = b.recv_type("game_started").await;
    let mut names: Vec<&str> =
        started["players"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["bea", "spaced"], "{started}");
    server.shutdown().await;
}
