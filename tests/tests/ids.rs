//! Which replies echo a request's `id`: exactly the direct replies PROTOCOL.md
//! lists (`error`, `queued`, `room_created`, `state`, `registered`,
//! `authenticated`, `challenge_sent`, `online`, `pong`, the mover's `moved`);
//! no other message carries one, whatever the request had.

use serde_json::{Value, json};
use tictactoe_server::Config;
use tictactoe_tests::{Client, TempDir, TestServer, test_config};

/// The replies that may carry an id.
const DIRECT: [&str; 10] = [
    "error",
    "queued",
    "room_created",
    "state",
    "registered",
    "authenticated",
    "challenge_sent",
    "online",
    "pong",
    "moved",
];

/// Sends `request` with `id` and returns the first message of type `kind`.
async fn ask(c: &mut Client, mut request: Value, id: Value, kind: &str) -> Value {
    request["id"] = id;
    c.send(request).await;
    c.recv_type(kind).await
}

#[tokio::test]
async fn every_direct_reply_echoes_the_id_and_nothing_else_carries_one() {
    let dir = TempDir::new("ids");
    let server = TestServer::start(Config { database: dir.database("ttt.db"), ..test_config() }).await;
    let (mut ann, mut bob) = (server.client().await, server.client().await);
    let reg = ask(&mut ann, json!({"type": "register", "name": "ann"}), json!(1), "registered").await;
    assert_eq!(reg["id"], 1);
    let token = reg["token"].clone();
    let auth =
        ask(&mut ann, json!({"type": "hello", "name": "ann", "token": token}), json!("a"), "authenticated");
    assert_eq!(auth.await["id"], "a");
    // A guest's hello has no reply at all.
    bob.send(json!({"type": "hello", "name": "bob", "id": 2})).await;
    assert_eq!(ask(&mut ann, json!({"type": "ping"}), json!(3), "pong").await["id"], 3);
    assert_eq!(ask(&mut ann, json!({"type": "who"}), json!(4), "online").await["id"], 4);
    let sent = ask(&mut bob, json!({"type": "challenge", "name": "ann"}), json!(5), "challenge_sent").await;
    assert_eq!(sent["id"], 5);
    let challenge = ann.recv_type("challenged").await;
    assert_eq!(challenge.get("id"), None);
    ann.send(json!({"type": "accept", "challenge": challenge["challenge"], "id": 6})).await;
    let started = ann.recv_type("game_started").await;
    assert_eq!(started.get("id"), None, "game_started is no direct reply");
    bob.recv_type("game_started").await;
    let (x, o) = if started["you"] == 1 { (&mut ann, &mut bob) } else { (&mut bob, &mut ann) };
    let own = ask(x, json!({"type": "move", "row": 0, "col": 0}), json!(7), "moved").await;
    assert_eq!(own["id"], 7);
    assert_eq!(o.recv_type("moved").await.get("id"), None, "the opponent's moved has none");
    assert_eq!(ask(o, json!({"type": "sync"}), json!(8), "state").await["id"], 8);
    assert_eq!(ask(o, json!({"type": "move", "row": 9, "col": 9}), json!(9), "error").await["id"], 9);
    ask(x, json!({"type": "resign"}), json!(10), "game_over").await;
    let mut queued = server.client().await;
    assert_eq!(ask(&mut queued, json!({"type": "quick_match"}), json!(11), "queued").await["id"], 11);
    let mut host = server.client().await;
    assert_eq!(ask(&mut host, json!({"type": "create_room"}), json!(12), "room_created").await["id"], 12);
    // Nothing outside the list ever had an id.
    for c in [&ann, &bob, &queued, &host] {
        for m in &c.received {
            let kind = m["type"].as_str().unwrap_or_default();
            assert!(m.get("id").is_none() || DIRECT.contains(&kind), "{m}");
        }
    }
    server.shutdown().await;
}
