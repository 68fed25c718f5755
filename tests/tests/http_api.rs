//! The HTTP API's answers to bad input over real HTTP: every malformed or
//! out-of-range query parameter is a 400 with `{"error": …}`, a path no
//! record could have is a 404, sizes follow the server's `--min-size` and
//! `--max-size` and win lengths the board — and nothing answers a 500 or
//! anything but JSON.

use serde_json::{Value, json};
use tictactoe_server::Config;
use tictactoe_tests::{TempDir, TestServer, api, test_config};

async fn server(dir: &TempDir, config: Config) -> TestServer {
    TestServer::start(Config { database: dir.database("ttt.db"), ..config }).await
}

/// Asks `path` and checks the status and that the body is `{"error": text}`
/// with words a person can act on and no database's own.
async fn refused(server: &TestServer, path: &str, status: u16) -> String {
    let (got, body) = api(server.addr, path).await;
    assert_eq!(got, status, "{path}: {body}");
    let text = body["error"].as_str().unwrap_or_else(|| panic!("{path}: no error text in {body}"));
    assert!(!text.is_empty(), "{path}");
    for leak in ["sql", "SQL", "rusqlite", "panicked", "overflow"] {
        assert!(!text.contains(leak), "{path}: {text}");
    }
    text.to_owned()
}

#[tokio::test]
async fn leaderboard_sizes_and_wins_are_checked_like_a_quick_match() {
    let dir = TempDir::new("api-sizes");
    let server = server(&dir, test_config()).await;
    for path in [
        "/api/leaderboard?size=0",
        "/api/leaderboard?size=1",
        "/api/leaderboard?size=101",
        "/api/leaderboard?size=-3",
        "/api/leaderboard?size=9223372036854775807",
        "/api/leaderboard?size=9223372036854775808",
        "/api/leaderboard?size=18446744073709551616",
        "/api/leaderboard?size=99999999999999999999999999999999",
    ] {
        let text = refused(&server, path, 400).await;
        assert_eq!(text, "size must be from 2 to 100", "{path}");
    }
    for path in ["/api/leaderboard?size=abc", "/api/leaderboard?size=3.0", "/api/leaderboard?size="] {
        assert_eq!(refused(&server, path, 400).await, "size must be an integer", "{path}");
    }
    for path in [
        "/api/leaderboard?win=2",
        "/api/leaderboard?size=3&win=4",
        "/api/leaderboard?size=15&win=2",
        "/api/leaderboard?size=15&win=16",
        "/api/leaderboard?size=15&win=-5",
        "/api/leaderboard?size=15&win=99999999999999999999",
    ] {
        assert!(refused(&server, path, 400).await.contains("win"), "{path}");
    }
    refused(&server, "/api/leaderboard?win=x", 400).await;
    // What a quick match accepts, the leaderboard answers (empty pools too).
    for (path, size, win) in [
        ("/api/leaderboard", 3, 3),
        ("/api/leaderboard?size=2", 2, 2),
        ("/api/leaderboard?size=100&win=3", 100, 3),
        ("/api/leaderboard?size=15&win=5", 15, 5),
        ("/api/leaderboard?size=04&size=9", 4, 4),
    ] {
        let (status, body) = api(server.addr, path).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!((body["size"].clone(), body["win"].clone()), (json!(size), json!(win)), "{path}");
        assert_eq!(body["players"], json!([]), "{path}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn the_size_range_is_the_servers_own() {
    let dir = TempDir::new("api-range");
    let server = server(&dir, Config { min_size: 4, max_size: 10, ..test_config() }).await;
    // The default size, 3, is out of this server's range too.
    for path in ["/api/leaderboard", "/api/leaderboard?size=3", "/api/leaderboard?size=11"] {
        assert_eq!(refused(&server, path, 400).await, "size must be from 4 to 10", "{path}");
    }
    for path in ["/api/leaderboard?size=4", "/api/leaderboard?size=10&win=7"] {
        assert_eq!(api(server.addr, path).await.0, 200, "{path}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn limits_and_cursors_are_checked_and_a_well_formed_unknown_cursor_is_an_empty_page() {
    let dir = TempDir::new("api-limits");
    let server = server(&dir, test_config()).await;
    server.client().await.register("ann", false).await;
    for path in [
        "/api/leaderboard?limit=0",
        "/api/leaderboard?limit=-1",
        "/api/leaderboard?limit=abc",
        "/api/leaderboard?limit=",
        "/api/leaderboard?limit=1.5",
        "/api/players/ann/games?limit=0",
        "/api/players/ann/games?limit=-99999999999999999999",
    ] {
        assert!(refused(&server, path, 400).await.starts_with("limit must be a positive integer"), "{path}");
    }
    // More than 100 is capped, however many digits it has.
    for path in ["/api/leaderboard?limit=101", "/api/leaderboard?limit=99999999999999999999999"] {
        assert_eq!(api(server.addr, path).await.0, 200, "{path}");
    }
    for cursor in ["zzzz", "", "abcdefghi", "abc-efgh", "abc%00efg", "%C3%A9bcdefg", "ZZZZZZZ%20"] {
        let path = format!("/api/players/ann/games?before={cursor}");
        assert!(refused(&server, &path, 400).await.starts_with("before must be a game id"), "{path}");
    }
    let (status, body) = api(server.addr, "/api/players/ann/games?before=ZZZZZZZZ").await;
    assert_eq!((status, body), (200, json!({"games": []})));
    let (status, body) = api(server.addr, "/api/players/ann/games?limit=3").await;
    assert_eq!((status, body), (200, json!({"games": []})));
    server.shutdown().await;
}

#[tokio::test]
async fn absurd_names_and_ids_are_404s_in_json() {
    let dir = TempDir::new("api-names");
    let server = server(&dir, test_config()).await;
    let long = "a".repeat(5000);
    let paths: Vec<String> = vec![
        format!("/api/players/{long}"),
        format!("/api/players/{long}/games"),
        "/api/players/%00".into(),
        "/api/players/%FF%FE".into(),
        "/api/players/%E3%85%A4".into(),
        "/api/players/..%2F..%2Fetc".into(),
        "/api/players/'%20OR%201=1--".into(),
        "/api/players/%".into(),
        "/api/games/zzzz".into(),
        "/api/games/'%20OR%201=1".into(),
        format!("/api/games/{long}"),
        "/api/games/%00%00%00%00%00%00%00%00".into(),
    ];
    for path in &paths {
        refused(&server, path, 404).await;
    }
    // Odd parameters beside good ones change nothing.
    let (status, body) = api(server.addr, "/api/leaderboard?size=3&&=&x=%FF&limit=5").await;
    assert_eq!((status, body["players"].clone()), (200, Value::Array(Vec::new())));
    server.shutdown().await;
}
