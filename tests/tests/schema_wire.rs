//! Records a real session over the wire — every server message type and
//! every client request — and validates each frame against the committed
//! JSON Schemas in `protocol/schema/`.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use tictactoe_protocol::SERVER_TYPES;
use tictactoe_server::Config;
use tictactoe_tests::{TestServer, test_config};

fn validator(file: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../protocol/schema").join(file);
    let text = std::fs::read_to_string(&path).expect("committed schema");
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

#[tokio::test]
async fn every_frame_of_a_recorded_session_matches_the_schema() {
    let dir = tictactoe_tests::TempDir::new("schema-wire");
    let config = Config {
        turn_timeout_ms: 60_000,
        reconnect_grace_ms: 5_000,
        database: dir.database("ttt.db"),
        ..test_config()
    };
    let server = TestServer::start(config).await;
    let mut a = server.client().await;
    let mut b = server.client().await;
    a.send(json!({"type": "hello", "name": "ann", "protocol": 1})).await;
    b.send(json!({"type": "hello", "name": "bob"})).await;
    a.send(json!({"type": "create_room", "size": 3, "id": 1})).await;
    let room = a.recv_type("room_created").await["room"].clone();
    b.send(json!({"type": "join_room", "room": room})).await;
    let sa = a.recv_type("game_started").await;
    let sb = b.recv_type("game_started").await;
    let (mut x, mut o, o_token) =
        if sa["you"] == 1 { (a, b, sb["resume_token"].clone()) } else { (b, a, sa["resume_token"].clone()) };
    o.send(json!({"type": "move", "row": 0, "col": 0, "id": "early"})).await;
    o.recv_type("error").await;
    x.send(json!({"type": "ping", "id": 2})).await;
    x.recv_type("pong").await;
    x.play(1, 1).await;
    o.recv_type("moved").await;
    let mut watcher = server.client().await;
    watcher.send(json!({"type": "spectate", "room": room, "id": "w"})).await;
    watcher.recv_type("state").await;
    // O drops and resumes.
    let o_sent = std::mem::take(&mut o.sent);
    let o_received = std::mem::take(&mut o.received);
    drop(o);
    x.recv_type("opponent_disconnected").await;
    let mut o = server.client().await;
    o.sent = o_sent;
    o.received = o_received;
    o.send(json!({"type": "resume", "token": o_token})).await;
    o.recv_type("state").await;
    x.recv_type("opponent_reconnected").await;
    // Finish by resignation, then a rematch offer and a win on a line.
    o.send(json!({"type": "resign"})).await;
    x.recv_type("game_over").await;
    o.recv_type("game_over").await;
    watcher.recv_type("game_over").await;
    x.send(json!({"type": "rematch"})).await;
    o.recv_type("rematch_offered").await;
    o.send(json!({"type": "rematch"})).await;
    // Seats swapped: the old O is X now.
    o.recv_type("game_started").await;
    x.recv_type("game_started").await;
    for (i, (r, c)) in [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)].into_iter().enumerate() {
        let (m, n) = if i % 2 == 0 { (&mut o, &mut x) } else { (&mut x, &mut o) };
        m.play(r, c).await;
        n.recv_type("moved").await;
    }
    o.recv_type("game_over").await;
    x.recv_type("game_over").await;
    // Resynchronise, then X leaves: O and the watcher are told the room closed.
    o.send(json!({"type": "sync", "id": "s"})).await;
    o.recv_type("state").await;
    x.send(json!({"type": "leave"})).await;
    o.recv_type("room_closed").await;
    watcher.recv_type("room_closed").await;
    let mut q = server.client().await;
    q.send(json!({"type": "quick_match", "size": 4, "id": 3})).await;
    q.recv_type("queued").await;
    q.send(json!({"type": "leave"})).await;
    q.send(json!({"type": "ping"})).await;
    q.recv_type("pong").await;
    // Accounts, who, a challenge declined, and a game against the house.
    q.send(json!({"type": "register", "name": "wire-bot", "bot": true, "id": 4})).await;
    let token = q.recv_type("registered").await["token"].clone();
    q.send(json!({"type": "hello", "name": "wire-bot", "token": token, "id": 5})).await;
    q.recv_type("authenticated").await;
    // The resumed O says who it is again, as clients do on a new connection.
    o.send(json!({"type": "hello", "name": "ozzy"})).await;
    o.send(json!({"type": "who", "id": 6})).await;
    o.recv_type("online").await;
    o.send(json!({"type": "challenge", "name": "wire-bot", "size": 5, "win": 4, "id": 7})).await;
    o.recv_type("challenge_sent").await;
    let id = q.recv_type("challenged").await["challenge"].clone();
    q.send(json!({"type": "decline", "challenge": id, "reason": "not now"})).await;
    o.recv_type("challenge_ended").await;
    o.send(json!({"type": "challenge", "name": "wire-bot"})).await;
    let id = q.recv_type("challenged").await["challenge"].clone();
    q.send(json!({"type": "accept", "challenge": id})).await;
    q.recv_type("game_started").await;
    o.recv_type("game_started").await;
    q.send(json!({"type": "leave"})).await;
    o.recv_type("room_closed").await;
    o.send(json!({"type": "play_house", "size": 3, "win": 3, "level": "random", "id": 8})).await;
    o.recv_type("game_started").await;
    o.send(json!({"type": "resign"})).await;
    o.recv_type("game_over").await;
    // An arena tournament between two accounts: created, listed, joined,
    // paired, a berserk, and a pause.
    let clock = json!({"initial_ms": 60_000, "increment_ms": 0});
    q.send(json!({"type": "tournament_create", "name": "wire arena", "clock": clock, "duration_ms": 60_000}))
        .await;
    let tid = q.recv_type("tournament").await["id"].clone();
    q.send(json!({"type": "tournaments", "id": 9})).await;
    q.recv_type("tournaments").await;
    watcher.send(json!({"type": "register", "name": "wire-two", "bot": true})).await;
    let two = watcher.recv_type("registered").await["token"].clone();
    watcher.send(json!({"type": "hello", "name": "wire-two", "token": two})).await;
    watcher.recv_type("authenticated").await;
    for c in [&mut q, &mut watcher] {
        c.send(json!({"type": "tournament_join", "id": tid})).await;
        c.recv_type("tournament_update").await;
    }
    q.recv_type("game_started").await;
    watcher.recv_type("game_started").await;
    q.send(json!({"type": "berserk", "id": 10})).await;
    q.recv_type("berserked").await;
    watcher.recv_type("berserked").await;
    q.send(json!({"type": "tournament_leave", "id": tid})).await;
    q.recv_type("tournament_update").await;
    watcher.send(json!({"type": "tournament_watch", "tournament": tid})).await;
    watcher.recv_type("tournament_update").await;

    let server_schema = validator("server.schema.json");
    let client_schema = validator("client.schema.json");
    let mut kinds = BTreeSet::new();
    let mut frames = 0;
    for client in [&x, &o, &watcher, &q] {
        for frame in &client.received {
            let errors: Vec<String> = server_schema.iter_errors(frame).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "server frame {frame} breaks the schema: {errors:?}");
            kinds.insert(frame["type"].as_str().unwrap_or_default().to_owned());
            frames += 1;
        }
        for frame in &client.sent {
            let errors: Vec<String> = client_schema.iter_errors(frame).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "client frame {frame} breaks the schema: {errors:?}");
            frames += 1;
        }
    }
    let all: BTreeSet<String> = SERVER_TYPES.into_iter().map(String::from).collect();
    assert_eq!(kinds, all, "the session covers every server message");
    assert!(frames > 40);
    // The schema is not vacuous: a frame missing a field, or with a wrong type, fails.
    assert!(!server_schema.is_valid(&json!({"type": "moved", "room": "R", "row": 0})));
    assert!(!server_schema.is_valid(&json!({"type": "pong", "id": 1.5})));
    assert!(!client_schema.is_valid(&json!({"type": "move", "row": "a", "col": 0})));
    assert!(!client_schema.is_valid(&json!({"type": "dance"})));
    assert!(!client_schema.is_valid(&json!({"type": 5, "row": 0, "col": 0})));
    assert!(!server_schema.is_valid(&json!({"type": "room_closed", "room": "R", "reason": "bored"})));
    server.shutdown().await;
}
