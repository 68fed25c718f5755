//! Accounts, records and ratings over real sockets and real HTTP: register,
//! `name_taken`, `auth_failed`, signed-in play, rated and unrated games,
//! every API route and its 404, a restart on the same file, `--database none`
//! and a database that cannot be opened.

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_server::store::Database;
use tictactoe_tests::{Pair, TempDir, TestServer, api, http_get, play_out, test_config};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

fn with_db(dir: &TempDir) -> Config {
    Config { database: dir.database("ttt.db"), ..test_config() }
}

/// X wins the top row on 3×3.
const X_WINS: [[usize; 2]; 5] = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];

/// Two clients signed in as `x` and `o` (their tokens), paired by quick match
/// for `size`/`win`; returns the pair and both `game_started`s (X's first).
async fn signed_pair(server: &TestServer, x: (&str, &str), o: (&str, &str), rules: Value) -> (Pair, Value) {
    let mut a = server.client().await;
    let mut b = server.client().await;
    a.sign_in(x.0, x.1).await;
    b.sign_in(o.0, o.1).await;
    let mut request = json!({"type": "quick_match"});
    request.as_object_mut().expect("object").extend(rules.as_object().cloned().unwrap_or_default());
    a.send(request.clone()).await;
    a.recv_type("queued").await;
    b.send(request).await;
    let sa = a.recv_type("game_started").await;
    let sb = b.recv_type("game_started").await;
    let room = sa["room"].as_str().unwrap_or_default().to_owned();
    if sa["you"] == 1 { (Pair { x: a, o: b, room }, sa) } else { (Pair { x: b, o: a, room }, sb) }
}

async fn registered(server: &TestServer, name: &str, bot: bool) -> String {
    let mut c = server.client().await;
    c.register(name, bot).await
}

#[tokio::test]
async fn register_and_sign_in_with_the_name_rules() {
    let dir = TempDir::new("register");
    let server = TestServer::start(with_db(&dir)).await;
    let mut c = server.client().await;
    c.send(json!({"type": "register", "name": "  Ann ", "id": 1})).await;
    let reg = c.recv_type("registered").await;
    assert_eq!(
        (reg["name"].clone(), reg["bot"].clone(), reg["id"].clone()),
        (json!("Ann"), json!(false), json!(1))
    );
    let token = reg["token"].as_str().expect("token").to_owned();
    // 128 bits or more, as hex after the prefix.
    assert!(token.len() >= 32 + 4, "{token}");

    // Unique ignoring case; names follow hello's rules.
    c.send(json!({"type": "register", "name": "ANN", "id": 2})).await;
    c.expect_error(ErrorCode::NameTaken, Some(json!(2))).await;
    c.send(json!({"type": "register", "name": "a\u{202E}b", "id": 3})).await;
    c.expect_error(ErrorCode::InvalidName, Some(json!(3))).await;
    c.send(json!({"type": "register", "name": "x", "bot": "yes", "id": 4})).await;
    c.expect_error(ErrorCode::BadMessage, Some(json!(4))).await;

    // A guest cannot take an account's name, in any case.
    c.send(json!({"type": "hello", "name": "aNN", "id": 5})).await;
    c.expect_error(ErrorCode::NameTaken, Some(json!(5))).await;
    // A wrong token, or the right token for another name, fails.
    c.send(json!({"type": "hello", "name": "Ann", "token": "ttt_0000", "id": 6})).await;
    c.expect_error(ErrorCode::AuthFailed, Some(json!(6))).await;
    let bob = registered(&server, "bob", true).await;
    c.send(json!({"type": "hello", "name": "Ann", "token": bob, "id": 7})).await;
    c.expect_error(ErrorCode::AuthFailed, Some(json!(7))).await;
    c.send(json!({"type": "hello", "name": "nobody", "token": bob, "id": 8})).await;
    c.expect_error(ErrorCode::AuthFailed, Some(json!(8))).await;
    // The right one, with the name in any case, signs in as the account.
    c.send(json!({"type": "hello", "name": "aNn", "token": token, "id": 9})).await;
    let auth = c.recv_type("authenticated").await;
    assert_eq!(auth, json!({"type": "authenticated", "name": "Ann", "bot": false, "id": 9}));
    let mut b = server.client().await;
    assert_eq!(b.sign_in("BOB", &bob).await["bot"], json!(true));
    server.shutdown().await;
}

#[tokio::test]
async fn games_between_accounts_are_rated_and_recorded_and_the_api_shows_them() {
    let dir = TempDir::new("rated");
    let server = TestServer::start(with_db(&dir)).await;
    let ann = registered(&server, "ann", false).await;
    let bot = registered(&server, "botty", true).await;

    let (mut p, started) = signed_pair(&server, ("ann", &ann), ("botty", &bot), json!({})).await;
    for player in started["players"].as_array().expect("players") {
        assert_eq!((player["account"].clone(), player["rating"].clone()), (json!(true), json!(1500)));
    }
    let x_name = started["players"][0]["name"].as_str().expect("name").to_owned();
    let over = play_out(&mut p, &X_WINS).await;
    let id = over["game_id"].as_str().expect("a game id").to_owned();
    let [x, o] = [&over["ratings"][0], &over["ratings"][1]];
    assert_eq!((x["before"].clone(), o["before"].clone()), (json!(1500), json!(1500)));
    let (xa, oa) = (x["after"].as_i64().expect("int"), o["after"].as_i64().expect("int"));
    assert!(xa > 1500 && oa < 1500 && xa - 1500 == 1500 - oa, "{over}");

    // The record, as the game ended.
    let (status, game) = api(server.addr, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(game["id"], json!(id));
    assert_eq!((game["size"].clone(), game["win"].clone()), (json!(3), json!(3)));
    assert_eq!(game["moves"], json!(X_WINS));
    assert_eq!((game["winner"].clone(), game["reason"].clone()), (json!(1), json!("line")));
    assert_eq!(game["line"], over["line"]);
    assert_eq!((game["rated"].clone(), game["ratings"].clone()), (json!(true), over["ratings"].clone()));
    assert_eq!(game["players"][0]["name"], json!(x_name));
    assert_eq!(game["room"], json!(p.room));
    for t in ["started_at", "ended_at"] {
        let s = game[t].as_str().expect("a time");
        assert!(s.len() >= 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T', "{s}");
    }

    // The players, their games and the pool's leaderboard.
    let (status, profile) = api(server.addr, "/api/players/ANN").await;
    assert_eq!(status, 200);
    assert_eq!((profile["name"].clone(), profile["bot"].clone()), (json!("ann"), json!(false)));
    assert_eq!(profile["ratings"]["3"]["games"], json!(1));
    let ann_won = x_name == "ann";
    let results = if ann_won {
        json!({"wins": 1, "draws": 0, "losses": 0, "aborted": 0, "interrupted": 0})
    } else {
        json!({"wins": 0, "draws": 0, "losses": 1, "aborted": 0, "interrupted": 0})
    };
    assert_eq!(profile["results"], results);
    let (_, games) = api(server.addr, "/api/players/ann/games?limit=5").await;
    assert_eq!(games["games"].as_array().map(Vec::len), Some(1));
    assert_eq!(games["games"][0]["id"], json!(id));
    let (_, older) = api(server.addr, &format!("/api/players/ann/games?before={id}")).await;
    assert_eq!(older, json!({"games": []}));
    let (_, board) = api(server.addr, "/api/leaderboard?size=3").await;
    assert_eq!((board["size"].clone(), board["win"].clone()), (json!(3), json!(3)));
    let names: Vec<_> =
        board["players"].as_array().expect("players").iter().map(|p| p["name"].clone()).collect();
    let winner = if ann_won { ["ann", "botty"] } else { ["botty", "ann"] };
    assert_eq!(names, winner.map(|n| json!(n)));
    assert_eq!(board["players"][if ann_won { 1 } else { 0 }]["bot"], json!(true));

    // A guest against an account: recorded, not rated; the guest has no rating.
    let mut guest = server.client().await;
    guest.send(json!({"type": "hello", "name": "walk-in"})).await;
    let mut acct = server.client().await;
    acct.sign_in("ann", &ann).await;
    guest.send(json!({"type": "quick_match"})).await;
    guest.recv_type("queued").await;
    acct.send(json!({"type": "quick_match"})).await;
    let started = guest.recv_type("game_started").await;
    acct.recv_type("game_started").await;
    let g = started["players"].as_array().expect("players").iter().find(|p| p["name"] == "walk-in").cloned();
    assert_eq!(g.map(|g| (g["account"].clone(), g["rating"].clone())), Some((json!(false), json!(null))));
    guest.send(json!({"type": "resign"})).await;
    let over = guest.recv_type("game_over").await;
    assert_eq!(over["ratings"], json!(null));
    let (_, game) = api(server.addr, &format!("/api/games/{}", over["game_id"].as_str().expect("id"))).await;
    assert_eq!((game["rated"].clone(), game["reason"].clone()), (json!(false), json!("resign")));
    let (_, profile) = api(server.addr, "/api/players/ann").await;
    assert_eq!(profile["ratings"]["3"]["games"], json!(1), "the unrated game moved nothing");
    server.shutdown().await;
}

/// Reads `path`'s body as `T` and checks that writing it back gives the
/// very bytes the server sent: the protocol's types are the answers.
async fn typed<T: serde::de::DeserializeOwned + serde::Serialize>(server: &TestServer, path: &str) -> T {
    let (status, body) = http_get(server.addr, path).await;
    assert_eq!(status, 200, "{path}: {body}");
    let value: T = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    assert_eq!(serde_json::to_string(&value).expect("serialize"), body, "{path}");
    value
}

#[tokio::test]
async fn a_running_servers_answers_are_the_protocols_types_byte_for_byte() {
    use tictactoe_protocol::api::{GameRecord, Leaderboard, PlayerGames, PlayerProfile};
    let dir = TempDir::new("typed");
    let server = TestServer::start(with_db(&dir)).await;
    let ann = registered(&server, "ann", false).await;
    let bot = registered(&server, "botty", true).await;
    let (mut p, _) = signed_pair(&server, ("ann", &ann), ("botty", &bot), json!({})).await;
    let over = play_out(&mut p, &X_WINS).await;
    let rated = over["game_id"].as_str().expect("a game id").to_owned();
    // And an unrated one, with no line: a guest resigns.
    let mut guest = server.client().await;
    guest.send(json!({"type": "hello", "name": "walk-in"})).await;
    let mut acct = server.client().await;
    acct.sign_in("ann", &ann).await;
    guest.send(json!({"type": "quick_match"})).await;
    guest.recv_type("queued").await;
    acct.send(json!({"type": "quick_match"})).await;
    guest.recv_type("game_started").await;
    acct.recv_type("game_started").await;
    guest.send(json!({"type": "resign"})).await;
    let unrated = guest.recv_type("game_over").await["game_id"].as_str().expect("id").to_owned();

    let game: GameRecord = typed(&server, &format!("/api/games/{rated}")).await;
    assert_eq!((game.id.as_str(), game.rated, game.winner), (rated.as_str(), true, 1));
    assert_eq!(serde_json::to_value(game.line).expect("line"), over["line"]);
    assert_eq!(serde_json::to_value(game.ratings).expect("ratings"), over["ratings"]);
    let game: GameRecord = typed(&server, &format!("/api/games/{unrated}")).await;
    assert_eq!((game.rated, game.ratings, game.line), (false, None, None));
    assert_eq!(game.players.iter().filter(|p| p.name == "walk-in" && !p.account).count(), 1);
    let profile: PlayerProfile = typed(&server, "/api/players/ANN").await;
    assert_eq!((profile.name.as_str(), profile.ratings["3"].games), ("ann", 1));
    let games: PlayerGames = typed(&server, "/api/players/ann/games?limit=5").await;
    assert_eq!(games.games.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(), [&*unrated, &*rated]);
    let games: PlayerGames = typed(&server, &format!("/api/players/ann/games?before={rated}")).await;
    assert!(games.games.is_empty());
    let board: Leaderboard = typed(&server, "/api/leaderboard?size=3").await;
    assert_eq!((board.size, board.win, board.players.len()), (3, 3, 2));
    server.shutdown().await;
}

#[tokio::test]
async fn connect_k_games_are_rated_in_their_own_pool() {
    let dir = TempDir::new("pools");
    let server = TestServer::start(with_db(&dir)).await;
    let a = registered(&server, "a1", false).await;
    let b = registered(&server, "b1", false).await;
    let (mut p, started) = signed_pair(&server, ("a1", &a), ("b1", &b), json!({"size": 6, "win": 4})).await;
    assert_eq!(started["win"], json!(4));
    let over = play_out(&mut p, &[[0, 0], [5, 0], [0, 1], [5, 1], [0, 2], [5, 2], [0, 3]]).await;
    assert!(over["ratings"].is_array());
    let (_, profile) = api(server.addr, "/api/players/a1").await;
    assert_eq!(profile["ratings"]["6/4"]["games"], json!(1));
    assert_eq!(profile["ratings"].get("6"), None);
    let (_, board) = api(server.addr, "/api/leaderboard?size=6&win=4&limit=1").await;
    assert_eq!(board["players"].as_array().map(Vec::len), Some(1));
    let (_, classic) = api(server.addr, "/api/leaderboard?size=6").await;
    assert_eq!(classic["players"], json!([]));
    server.shutdown().await;
}

#[tokio::test]
async fn every_route_has_its_404_and_bad_parameters_are_400() {
    let dir = TempDir::new("routes");
    let server = TestServer::start(with_db(&dir)).await;
    for path in
        ["/api/games/nope", "/api/players/nobody", "/api/players/nobody/games", "/api/nothing", "/other"]
    {
        let (status, body) = api(server.addr, path).await;
        assert_eq!(status, 404, "{path}");
        assert!(body["error"].as_str().is_some_and(|e| !e.is_empty()), "{path}: {body}");
    }
    for path in ["/api/leaderboard?limit=abc", "/api/leaderboard?size=x", "/api/players/x/games?limit=0"] {
        let (status, body) = api(server.addr, path).await;
        assert_eq!(status, 400, "{path}");
        assert!(body["error"].is_string(), "{path}");
    }
    let (status, body) = api(server.addr, "/api/leaderboard?limit=100000").await;
    assert_eq!((status, body["players"].clone()), (200, json!([])));
    assert_eq!(http_get(server.addr, "/healthz").await.0, 200);
    // Refusals are counted by code on /metrics.
    let mut c = server.client().await;
    c.send(json!({"type": "move", "row": 0, "col": 0})).await;
    c.expect_error(ErrorCode::NotInGame, None).await;
    let (status, page) = http_get(server.addr, "/metrics").await;
    assert_eq!(status, 200);
    for metric in [
        "ttt_connections",
        "ttt_moves_total",
        "ttt_store_queue_depth",
        "ttt_refusals_total{code=\"not_in_game\"}",
    ] {
        assert!(page.contains(metric), "{metric} missing from:\n{page}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn accounts_records_and_ratings_survive_a_restart_on_the_same_file() {
    let dir = TempDir::new("restart");
    let server = TestServer::start(with_db(&dir)).await;
    let a = registered(&server, "keeper", false).await;
    let b = registered(&server, "other", false).await;
    let (mut p, started) = signed_pair(&server, ("keeper", &a), ("other", &b), json!({})).await;
    let x_name = started["players"][0]["name"].clone();
    let over = play_out(&mut p, &X_WINS).await;
    let id = over["game_id"].as_str().expect("id").to_owned();
    let after = over["ratings"][0]["after"].clone();
    drop(p);
    server.shutdown().await;

    let server = TestServer::start(with_db(&dir)).await;
    let (status, game) = api(server.addr, &format!("/api/games/{id}")).await;
    assert_eq!((status, game["ratings"].clone()), (200, over["ratings"].clone()));
    let mut c = server.client().await;
    c.send(json!({"type": "register", "name": "Keeper"})).await;
    c.expect_error(ErrorCode::NameTaken, None).await;
    // The tokens still sign in, and the winner starts the next game from
    // the rating the last one left.
    let (_, started) = signed_pair(&server, ("keeper", &a), ("other", &b), json!({})).await;
    let players = started["players"].as_array().expect("players");
    let winner = players.iter().find(|p| p["name"] == x_name).expect("the last winner");
    assert_eq!(winner["rating"], after);
    server.shutdown().await;
}

#[tokio::test]
async fn with_database_none_nothing_is_kept_and_the_api_answers_404() {
    let server = TestServer::start(Config { database: Database::None, ..test_config() }).await;
    let mut c = server.client().await;
    c.send(json!({"type": "register", "name": "ann", "id": 1})).await;
    let err = c.expect_error(ErrorCode::AuthFailed, Some(json!(1))).await;
    assert!(err["message"].as_str().is_some_and(|m| m.contains("--database none")), "{err}");
    c.send(json!({"type": "hello", "name": "ann", "token": "ttt_00", "id": 2})).await;
    c.expect_error(ErrorCode::AuthFailed, Some(json!(2))).await;
    let mut p = tictactoe_tests::quick_pair(&server, 3).await;
    let over = play_out(&mut p, &X_WINS).await;
    assert_eq!((over["game_id"].clone(), over["ratings"].clone()), (json!(null), json!(null)));
    assert_eq!(api(server.addr, "/api/leaderboard").await.0, 404);
    assert_eq!(api(server.addr, "/api/players/ann").await.0, 404);
    assert_eq!(http_get(server.addr, "/healthz").await.0, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn a_database_that_cannot_be_opened_stops_the_server_naming_the_file() {
    let dir = TempDir::new("garbage");
    let file = dir.path.join("broken.db");
    std::fs::write(&file, vec![0x42u8; 8192]).expect("write garbage");
    let server =
        TestServer::start(Config { database: Database::Sqlite(file.clone()), ..test_config() }).await;
    let err = server.stop().await.expect_err("the server refuses to start");
    let text = err.to_string();
    assert!(text.contains("broken.db"), "{text}");
    // And a file newer than this server's schema is refused, not rewritten.
    let newer = dir.path.join("newer.db");
    let server =
        TestServer::start(Config { database: Database::Sqlite(newer.clone()), ..test_config() }).await;
    server.shutdown().await;
    let conn = rusqlite::Connection::open(&newer).expect("open");
    conn.pragma_update(None, "user_version", 99).expect("bump the version");
    drop(conn);
    let server = TestServer::start(Config { database: Database::Sqlite(newer), ..test_config() }).await;
    let text = server.stop().await.expect_err("refused").to_string();
    assert!(text.contains("newer") && text.contains("99"), "{text}");
}

#[tokio::test]
async fn a_full_disk_fails_writes_but_every_game_still_ends_for_its_players() {
    let dir = TempDir::new("full");
    // The file may not grow past its size after migration: a full disk
    // (SQLite's; on Postgres, a database that is down is `postgres.rs`'s).
    let config = Config {
        database: Database::Sqlite(dir.path.join("ttt.db")),
        database_max_pages: Some(1),
        spill_dir: dir.path.clone(),
        ..test_config()
    };
    let server = TestServer::start(config).await;
    // A rated game between two accounts, started before the disk fills.
    let ann = registered(&server, "ann", false).await;
    let bob = registered(&server, "bob", false).await;
    let (mut rated, _) = signed_pair(&server, ("ann", &ann), ("bob", &bob), json!({})).await;
    // A game that stays in progress while the disk fills.
    let mut waiting = tictactoe_tests::private_pair(&server, 3).await;
    let mut p = tictactoe_tests::private_pair(&server, 3).await;
    let mut ids = std::collections::HashSet::new();
    let mut refused = None;
    for _ in 0..400 {
        p.x.send(json!({"type": "resign"})).await;
        let over = p.x.recv_type("game_over").await;
        assert_eq!(over["reason"], json!("resign"));
        ids.insert(over["game_id"].as_str().expect("an id even when it cannot be written").to_owned());
        p.o.recv_type("game_over").await;
        // Asked by both at once; a refusal (the store failed) comes to each.
        p.x.send(json!({"type": "rematch", "id": 7})).await;
        p.o.send(json!({"type": "rematch"})).await;
        let answer = p.x.recv_json().await;
        if answer["type"] == "error" {
            refused = Some(answer);
            break;
        }
        let a = answer;
        assert_eq!(a["type"], "game_started", "{a}");
        p.o.recv_type("game_started").await;
        // Seats swap at a rematch: keep `x` the one to resign.
        if a["you"] != 1 {
            std::mem::swap(&mut p.x, &mut p.o);
        }
    }
    // Once the store cannot write, a rematch (a new game) is refused.
    let refused = refused.expect("the disk never filled");
    assert_eq!(
        (refused["code"].clone(), refused["id"].clone()),
        (json!("unavailable"), json!(7)),
        "{refused}"
    );
    let (status, body) = http_get(server.addr, "/healthz").await;
    assert_eq!(status, 503, "{body}");
    let page = http_get(server.addr, "/metrics").await.1;
    let failures = page
        .lines()
        .find_map(|l| l.strip_prefix("ttt_store_write_failures_total "))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(failures > 0.0, "no write failure counted");
    assert!(page.contains("ttt_store_up 0"), "{page}");
    let (status, _) = api(server.addr, "/api/leaderboard").await;
    assert_eq!(status, 200, "reads still work");
    // The rated game ends now: a store that cannot write still rates it.
    let over = play_out(&mut rated, &X_WINS).await;
    let [x, o] = [&over["ratings"][0], &over["ratings"][1]];
    assert_eq!((x["before"].clone(), o["before"].clone()), (json!(1500), json!(1500)), "{over}");
    assert!(x["after"].as_i64().is_some_and(|r| r > 1500), "{over}");
    // The game in progress cannot be saved, so the shutdown ends it plainly
    // rather than promise a restore.
    let stopping = tokio::spawn(server.stop());
    for client in [&mut waiting.x, &mut waiting.o] {
        let over = client.recv_type("game_over").await;
        assert_eq!(over["reason"], json!("shutdown"));
        assert_eq!(client.expect_close().await, Some(CloseCode::Away));
    }
    // The stop could not write what waited: it says so (and spilled it).
    let stopped = stopping.await.expect("serve returned");
    let text = stopped.expect_err("a stop with unsaved games fails").to_string();
    assert!(text.contains("ttt-unsaved-"), "{text}");
}

/// `game_over` waits for its record's commit: the record is in the API as
/// soon as it arrives, and rematches go on as before.
#[tokio::test]
async fn game_over_arrives_with_its_record_committed_and_rematches_go_on() {
    let dir = TempDir::new("held");
    let server = TestServer::start(with_db(&dir)).await;
    let mut p = tictactoe_tests::private_pair(&server, 3).await;
    for round in 0..5 {
        p.x.send(json!({"type": "resign"})).await;
        let over = p.o.recv_type("game_over").await;
        p.x.recv_type("game_over").await;
        let id = over["game_id"].as_str().expect("id");
        let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
        assert_eq!((status, record["reason"].clone()), (200, json!("resign")), "round {round}");
        p.x.send(json!({"type": "rematch"})).await;
        p.o.send(json!({"type": "rematch"})).await;
        p.x.recv_type("game_started").await;
        p.o.recv_type("game_started").await;
    }
    server.shutdown().await;
}

/// Registrations per address: a burst of 20, then one a second; a taken
/// name does not count; over the limit, `rate_limited` with when to retry.
#[tokio::test]
async fn registrations_are_limited_per_address_after_a_burst() {
    let dir = TempDir::new("register-limit");
    let server = TestServer::start(with_db(&dir)).await;
    let mut c = server.client().await;
    let burst = std::time::Instant::now();
    for i in 0..20 {
        c.send(json!({"type": "register", "name": format!("burst{i}"), "id": i})).await;
        assert_eq!(c.recv_type("registered").await["id"], i);
    }
    // A taken name is refused as taken, and costs nothing.
    for _ in 0..3 {
        c.send(json!({"type": "register", "name": "BURST0"})).await;
        c.expect_error(ErrorCode::NameTaken, None).await;
    }
    // Past the burst, refused; a slow machine may have taken over a second
    // for the burst, and earned one more registration per second of it.
    let mut more = 0;
    let refused = loop {
        c.send(json!({"type": "register", "name": format!("onemore{more}"), "id": 99})).await;
        let answer = c.recv_json().await;
        if answer["type"] != "registered" {
            assert_eq!((&answer["code"], &answer["id"]), (&json!("rate_limited"), &json!(99)), "{answer}");
            break answer;
        }
        more += 1;
        assert!(f64::from(more) <= burst.elapsed().as_secs_f64() + 1.0, "{more} past the burst of 20");
    };
    let wait = refused["retry_after_ms"].as_u64().expect("retry_after_ms");
    assert!((1..=1000).contains(&wait), "{refused}");
    tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
    c.send(json!({"type": "register", "name": "onelater", "id": 100})).await;
    assert_eq!(c.recv_type("registered").await["id"], 100);
    server.shutdown().await;
}

/// A game between accounts that ends before each side has moved (on time,
/// by a drop, by leaving) is aborted: no winner, unrated, recorded as
/// `aborted`; nobody's rating moves.
#[tokio::test]
async fn a_game_nobody_played_is_aborted_and_moves_no_rating() {
    let dir = TempDir::new("aborted");
    let server = TestServer::start(Config { turn_timeout_ms: 1_500, ..with_db(&dir) }).await;
    let (ta, tb) = (registered(&server, "farmer", false).await, registered(&server, "absent", false).await);
    for end in ["timeout", "leave", "drop"] {
        let (mut p, _) = signed_pair(&server, ("farmer", &ta), ("absent", &tb), json!({})).await;
        let over = match end {
            "timeout" => p.o.recv_type("game_over").await,
            "leave" => {
                p.x.play(0, 0).await;
                p.o.recv_type("moved").await;
                p.o.send(json!({"type": "leave"})).await;
                p.x.recv_type("game_over").await
            }
            _ => {
                drop(p.o);
                p.x.recv_type("game_over").await
            }
        };
        assert_eq!(
            (over["winner"].clone(), over["reason"].clone(), over["ratings"].clone()),
            (json!(0), json!("aborted"), json!(null)),
            "{end}: {over}"
        );
        let id = over["game_id"].as_str().expect("an aborted game is recorded");
        let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
        assert_eq!(
            (status, record["reason"].clone(), record["rated"].clone()),
            (200, json!("aborted"), json!(false))
        );
    }
    // And one played out, which X wins.
    let (mut p, _) = signed_pair(&server, ("farmer", &ta), ("absent", &tb), json!({})).await;
    let over = play_out(&mut p, &X_WINS).await;
    let (_, record) =
        api(server.addr, &format!("/api/games/{}", over["game_id"].as_str().unwrap_or("?"))).await;
    let won = json!({"wins": 1, "draws": 0, "losses": 0, "aborted": 3, "interrupted": 0});
    let lost = json!({"wins": 0, "draws": 0, "losses": 1, "aborted": 3, "interrupted": 0});
    let x = record["players"][0]["name"].as_str().expect("X's name").to_owned();
    let o = record["players"][1]["name"].as_str().expect("O's name").to_owned();
    // Each player's results count every game its list holds, aborted ones too.
    for (name, results) in [(x, won), (o, lost)] {
        let (_, profile) = api(server.addr, &format!("/api/players/{name}")).await;
        assert_eq!(profile["ratings"]["3"]["games"], json!(1), "{name}: {profile}");
        assert_eq!(profile["results"], results, "{name}: {profile}");
        let (_, list) = api(server.addr, &format!("/api/players/{name}/games?limit=100")).await;
        let listed = list["games"].as_array().map_or(0, Vec::len) as u64;
        let counted: u64 =
            profile["results"].as_object().map_or(0, |r| r.values().filter_map(Value::as_u64).sum());
        assert_eq!((listed, counted), (4, 4), "{name}: {profile} {list}");
    }
    server.shutdown().await;
}

/// A player who leaves a rated game mid-way (a resignation) is rated, hears
/// `game_over` with the ratings on the opponent's side, and shows the new
/// rating from then on: in the next game's `game_started` and in a
/// challenge it sends.
#[tokio::test]
async fn a_player_who_leaves_a_rated_game_shows_the_new_rating_afterwards() {
    let dir = TempDir::new("left-rated");
    let server = TestServer::start(with_db(&dir)).await;
    let ann = registered(&server, "ann", false).await;
    let bob = registered(&server, "bob", false).await;
    let (mut p, first) = signed_pair(&server, ("ann", &ann), ("bob", &bob), json!({})).await;
    let x_name = first["players"][0]["name"].as_str().expect("name").to_owned();
    let o_name = first["players"][1]["name"].as_str().expect("name").to_owned();
    p.x.play(0, 0).await;
    p.o.recv_type("moved").await;
    p.o.play(1, 0).await;
    p.x.recv_type("moved").await;
    // X leaves: its seat (and room) are gone before the record's ratings come back.
    p.x.send(json!({"type": "leave"})).await;
    let over = p.o.recv_type("game_over").await;
    assert_eq!((over["reason"].clone(), over["winner"].clone()), (json!("resign"), json!(2)), "{over}");
    let (x_after, o_after) = (over["ratings"][0]["after"].clone(), over["ratings"][1]["after"].clone());
    assert!(
        x_after.as_i64().is_some_and(|r| r < 1500) && o_after.as_i64().is_some_and(|r| r > 1500),
        "{over}"
    );
    // The next game shows both new ratings.
    p.x.send(json!({"type": "quick_match"})).await;
    p.x.recv_type("queued").await;
    p.o.send(json!({"type": "quick_match"})).await;
    let started = p.x.recv_type("game_started").await;
    for player in started["players"].as_array().expect("players") {
        let want = if player["name"] == x_name { &x_after } else { &o_after };
        assert_eq!(&player["rating"], want, "{started}");
    }
    // And a challenge from the one who left shows its new rating (leaving
    // this game before anyone moved aborts it: unrated).
    p.x.send(json!({"type": "leave"})).await;
    let aborted = p.o.recv_type("game_over").await;
    assert_eq!(aborted["reason"], json!("aborted"), "{aborted}");
    p.x.send(json!({"type": "challenge", "name": o_name})).await;
    let offer = p.o.recv_type("challenged").await;
    assert_eq!(offer["from"]["rating"], x_after, "{offer}");
    server.shutdown().await;
}
