//! Names and free text over real sockets: invisible, look-alike-building
//! and reordering characters are `invalid_name` for `hello` and `register`
//! and change nothing; a decline's reason reaches the challenger without
//! control or bidirectional characters.

use serde_json::json;
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{Client, TempDir, TestServer, test_config};

/// Names the security review sent, and others like them: fillers and
/// blanks, joiners and variation selectors, lone combining marks,
/// bidirectional controls, controls, odd spaces.
const REFUSED: &[&str] = &[
    "\u{3164}",
    "\u{115F}",
    "\u{FFA0}",
    "\u{2800}",
    "\u{34F}",
    "\u{FE0F}",
    "\u{3164}\u{3164}x",
    "ann\u{2800}",
    "\u{301}",
    "\u{301}ann",
    "ann \u{301}",
    "\u{20DD}\u{20DD}",
    "ann\u{200B}",
    "an\u{200D}n",
    "ann\u{2060}",
    "ann\u{202E}nib",
    "\u{2067}ann",
    "ann\u{200F}",
    "ann\u{1B}[0m",
    "ann\u{9B}",
    "ann\u{A0}bob",
    "ann  bob",
    "ann\u{E0061}",
];

/// `who`'s names.
async fn who(c: &mut Client) -> Vec<String> {
    c.send(json!({"type": "who"})).await;
    let online = c.recv_type("online").await;
    online["players"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn invisible_and_disguising_names_are_refused_by_hello_and_change_nothing() {
    let server = TestServer::start(test_config()).await;
    let mut c = server.client().await;
    let mut watcher = server.client().await;
    for (i, name) in REFUSED.iter().enumerate() {
        c.send(json!({"type": "hello", "name": name, "id": i})).await;
        let err = c.expect_error(ErrorCode::InvalidName, Some(json!(i))).await;
        assert!(err["message"].as_str().is_some_and(|m| m.contains("name")), "{name:?}: {err}");
    }
    // Still nobody: not listed, and cannot challenge.
    assert_eq!(who(&mut watcher).await, ["house"]);
    c.send(json!({"type": "challenge", "name": "house2", "id": "c"})).await;
    c.expect_error(ErrorCode::InvalidName, Some(json!("c"))).await;
    // A good name after all that works, and a refused one later keeps it.
    c.send(json!({"type": "hello", "name": "Zoë 🤖"})).await;
    c.send(json!({"type": "hello", "name": "\u{3164}", "id": "again"})).await;
    c.expect_error(ErrorCode::InvalidName, Some(json!("again"))).await;
    assert_eq!(who(&mut watcher).await, ["house", "Zoë 🤖"]);
    server.shutdown().await;
}

#[tokio::test]
async fn invisible_and_disguising_names_cannot_be_registered() {
    let dir = TempDir::new("names-register");
    let server = TestServer::start(Config { database: dir.database("ttt.db"), ..test_config() }).await;
    let mut c = server.client().await;
    for (i, name) in REFUSED.iter().enumerate() {
        c.send(json!({"type": "register", "name": name, "id": i})).await;
        c.expect_error(ErrorCode::InvalidName, Some(json!(i))).await;
    }
    // None was created: the plain name is free, and the API knows only it.
    c.register("ann", false).await;
    let (status, _) = tictactoe_tests::api(server.addr, "/api/players/%E3%85%A4").await;
    assert_eq!(status, 404);
    let (status, body) = tictactoe_tests::api(server.addr, "/api/players/ann").await;
    assert_eq!((status, body["name"].clone()), (200, json!("ann")));
    server.shutdown().await;
}

#[tokio::test]
async fn a_decline_reason_reaches_the_challenger_without_controls() {
    let server = TestServer::start(test_config()).await;
    let mut ann = server.client().await;
    let mut bob = server.client().await;
    ann.send(json!({"type": "hello", "name": "ann"})).await;
    bob.send(json!({"type": "hello", "name": "bob"})).await;
    for c in [&mut ann, &mut bob] {
        c.send(json!({"type": "ping"})).await;
        c.recv_type("pong").await;
    }
    let reasons = [
        ("\u{1B}[2J\u{1B}]0;owned\u{7}not\ttoday\r\n", "ann declined: [2J]0;ownednot today"),
        ("\u{202E}yadot ton\u{202C}", "ann declined: yadot ton"),
        ("\u{9B}31mred\u{7F}", "ann declined: 31mred"),
        ("\u{0}\u{1B}\n", "ann declined"),
    ];
    for (reason, want) in reasons {
        bob.send(json!({"type": "challenge", "name": "ann"})).await;
        let offer = ann.recv_type("challenged").await;
        let id = offer["challenge"].clone();
        ann.send(json!({"type": "decline", "challenge": id, "reason": reason})).await;
        let ended = bob.recv_type("challenge_ended").await;
        assert_eq!(ended["reason"], "declined");
        assert_eq!(ended["message"], want, "{reason:?}");
    }
    server.shutdown().await;
}
