//! Names and free text over real sockets: invisible, look-alike-building
//! and reordering characters are `invalid_name` for `hello` and `register`
//! and change nothing; a decline's reason reaches the challenger without
//! control or bidirectional characters.

use serde_json::json;
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_server::store::Database;
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

/// A server keeping accounts in `dir`.
async fn with_db(dir: &TempDir) -> TestServer {
    TestServer::start(Config { database: dir.database("ttt.db"), ..test_config() }).await
}

#[tokio::test]
async fn an_account_cannot_be_impersonated_by_a_look_alike_name() {
    let dir = TempDir::new("names-look-alike");
    let server = with_db(&dir).await;
    let mut c = server.client().await;
    let token = c.register("paypal", false).await;
    // Cyrillic а, a digit one for an l, capitals: all taken.
    for (i, name) in ["p\u{430}yp\u{430}l", "paypa1", "PAYPAL", "PayPaI"].into_iter().enumerate() {
        c.send(json!({"type": "register", "name": name, "id": i})).await;
        let err = c.expect_error(ErrorCode::NameTaken, Some(json!(i))).await;
        assert!(err["message"].as_str().is_some_and(|m| m.contains("looks like")), "{err}");
        c.send(json!({"type": "hello", "name": name, "id": 10 + i})).await;
        let err = c.expect_error(ErrorCode::NameTaken, Some(json!(10 + i))).await;
        assert!(err["message"].as_str().is_some_and(|m| m.contains("\"paypal\"")), "{err}");
    }
    // The token signs in under the name in any case, never under a look-alike.
    c.send(json!({"type": "hello", "name": "p\u{430}yp\u{430}l", "token": token, "id": 20})).await;
    c.expect_error(ErrorCode::AuthFailed, Some(json!(20))).await;
    assert_eq!(c.sign_in("PayPal", &token).await["name"], "paypal");
    // The house's name and its look-alikes are the house's.
    for (i, name) in ["h\u{43E}use", "H0USE"].into_iter().enumerate() {
        c.send(json!({"type": "hello", "name": name, "id": 30 + i})).await;
        c.expect_error(ErrorCode::NameTaken, Some(json!(30 + i))).await;
    }
    // Names that only resemble each other loosely are free.
    c.register("paypal2", false).await;
    server.shutdown().await;
}

#[tokio::test]
async fn accounts_made_before_look_alike_keys_get_them_and_old_look_alikes_keep_their_names() {
    let dir = TempDir::new("names-migrate");
    let path = dir.path.join("ttt.db");
    // A file as the server before look-alike keys left it (schema 4), with
    // two accounts that look alike.
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        for sql in [
            include_str!("../../server/migrations/0001_accounts_games_ratings.sql"),
            include_str!("../../server/migrations/0002_live_games.sql"),
            include_str!("../../server/migrations/0003_house_level.sql"),
            include_str!("../../server/migrations/0004_quarantine_heartbeat.sql"),
        ] {
            conn.execute_batch(sql).expect("old schema");
        }
        conn.pragma_update(None, "user_version", 4).expect("version");
        for (id, name) in [(1, "bob"), (2, "b0b")] {
            let hash = tictactoe_server::core::account::hash(&format!("ttt_{name}"));
            conn.execute(
                "INSERT INTO accounts (id, name, name_key, bot, token_hash, created_at) VALUES (?1, ?2, ?2, 0, ?3, 0)",
                rusqlite::params![id, name, &hash[..]],
            )
            .expect("insert");
        }
    }
    let server =
        TestServer::start(Config { database: Database::Sqlite(path.clone()), ..test_config() }).await;
    let mut c = server.client().await;
    // Both still sign in as themselves.
    assert_eq!(c.sign_in("bob", "ttt_bob").await["name"], "bob");
    assert_eq!(c.sign_in("B0B", "ttt_b0b").await["name"], "b0b");
    // The older one's key was filled in: a new look-alike is refused.
    c.send(json!({"type": "register", "name": "b\u{43E}b", "id": 1})).await;
    c.expect_error(ErrorCode::NameTaken, Some(json!(1))).await;
    c.send(json!({"type": "hello", "name": "BOB", "id": 2})).await;
    c.expect_error(ErrorCode::NameTaken, Some(json!(2))).await;
    server.shutdown().await;
    let conn = rusqlite::Connection::open(&path).expect("open");
    let keys: Vec<Option<String>> = conn
        .prepare("SELECT name_skeleton FROM accounts ORDER BY id")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("keys");
    assert!(keys[0].is_some() && keys[1].is_none(), "{keys:?}");
}
