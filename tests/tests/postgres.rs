//! What Postgres adds to the store's guarantees, against a real Postgres
//! (Debian's `postgresql`, started by the tests): Postgres crashing and
//! coming back mid-game, a newer schema refused, a second server taking
//! the games over (the database refuses the first one's writes to them
//! after that), and rating updates of one account serialised. The suites
//! that hold on both backends (records, restarts, challenges…) run on
//! Postgres with `TTT_TEST_DATABASE=postgres`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_server::store::Database;
use tictactoe_tests::postgres::{Postgres, as_holder_of, name_of, shared};
use tictactoe_tests::{Client, Pair, TempDir, TestServer, api, http_get, private_pair, test_config};

/// A server's configuration on database `url`; what a stop cannot write
/// goes to `spill` (never into the working directory, where the next
/// test's server would import it).
fn on(url: &str, spill: &TempDir) -> Config {
    Config { database: Database::Postgres(url.to_owned()), spill_dir: spill.path.clone(), ..test_config() }
}

/// Waits until `/healthz` answers `status`, for at most `within`; how long it took.
async fn health_turns(server: &TestServer, status: u16, within: Duration) -> Duration {
    let start = Instant::now();
    loop {
        let (got, body) = http_get(server.addr, "/healthz").await;
        if got == status {
            return start.elapsed();
        }
        assert!(start.elapsed() < within, "/healthz still {got} after {within:?}: {body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Resigns the pair's game as X; the game's id from both `game_over`s.
async fn resign(p: &mut Pair) -> String {
    p.x.send(json!({"type": "resign"})).await;
    let over = p.x.recv_type("game_over").await;
    assert_eq!(p.o.recv_type("game_over").await["game_id"], over["game_id"]);
    over["game_id"].as_str().expect("a game id").to_owned()
}

#[tokio::test]
async fn postgres_crashing_mid_games_is_noticed_the_games_go_on_and_no_record_is_lost() {
    let pg = Postgres::start();
    let url = pg.database("down");
    let spill = TempDir::new("pg-down");
    let server = TestServer::start(Config { reconnect_grace_ms: 60_000, ..on(&url, &spill) }).await;
    let mut ids = Vec::new();
    // Games that ended before the crash, and one in progress across it.
    for _ in 0..3 {
        let mut p = private_pair(&server, 3).await;
        ids.push(resign(&mut p).await);
    }
    // A rated game between two accounts, in progress across the crash.
    let (mut ann, mut bob) =
        (signed(&server, "ann", &mut None).await, signed(&server, "bob", &mut None).await);
    ann.send(json!({"type": "create_room", "size": 3})).await;
    let room = ann.recv_type("room_created").await["room"].clone();
    bob.send(json!({"type": "join_room", "room": room})).await;
    ann.recv_type("game_started").await;
    bob.recv_type("game_started").await;
    // Games in progress across the crash, each one move in.
    let mut going = Vec::new();
    for _ in 0..6 {
        let mut p = private_pair(&server, 3).await;
        p.x.play(0, 0).await;
        p.o.recv_type("moved").await;
        going.push(p);
    }
    let (status, body) = http_get(server.addr, "/healthz").await;
    assert_eq!(status, 200, "{body}");

    pg.crash();
    health_turns(&server, 503, Duration::from_secs(6)).await;
    let (_, body) = http_get(server.addr, "/healthz").await;
    let health: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(health["status"], "degraded", "{health}");
    let words = health["store"].as_str().expect("the store's words");
    for leak in ["db error", "SQLSTATE", "postgres", "connection refused", "tokio"] {
        assert!(!words.contains(leak), "{words}");
    }
    // No new game starts while the store cannot write…
    let mut c = server.client().await;
    c.send(json!({"type": "quick_match", "id": 1})).await;
    let refused = c.expect_error(ErrorCode::Unavailable, Some(json!(1))).await;
    assert!(refused["retry_after_ms"].as_u64().is_some(), "{refused}");
    // …but the games in progress go on and end as usual.
    for p in &mut going {
        p.o.play(1, 1).await;
        p.x.recv_type("moved").await;
        ids.push(resign(p).await);
    }

    // The rated game ends too, and is rated though the database cannot be
    // read: the writer knows both standings from their sign-ins.
    bob.send(json!({"type": "resign"})).await;
    let over = ann.recv_type("game_over").await;
    assert!(over["ratings"][0]["after"].as_i64().is_some(), "{over}");
    let rated = over["game_id"].as_str().expect("an id").to_owned();
    ids.push(rated.clone());

    pg.resume();
    health_turns(&server, 200, Duration::from_secs(11)).await;
    // Every game is recorded, the one that ended meanwhile too.
    for id in &ids {
        let mut found = None;
        for _ in 0..50 {
            let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
            if status == 200 {
                found = Some(record);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let record = found.unwrap_or_else(|| panic!("game {id} was lost"));
        assert_eq!(record["reason"], "resign", "{record}");
    }
    let (_, record) = api(server.addr, &format!("/api/games/{rated}")).await;
    assert_eq!(
        (record["rated"].clone(), record["ratings"].clone()),
        (json!(true), over["ratings"].clone()),
        "{record}"
    );
    let kept = pg.psql(name_of(&url), "SELECT count(*) FROM games");
    assert_eq!(kept.trim(), ids.len().to_string());
    // And new games start again.
    let mut p = private_pair(&server, 3).await;
    resign(&mut p).await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_database_with_a_newer_schema_stops_the_start() {
    let pg = shared();
    let url = pg.database("newer");
    let spill = TempDir::new("pg-newer");
    TestServer::start(on(&url, &spill)).await.shutdown().await;
    pg.psql(name_of(&url), "UPDATE ttt_schema SET version = 99");
    let text = TestServer::start(on(&url, &spill)).await.stop().await.expect_err("refused").to_string();
    assert!(text.contains("newer") && text.contains("99"), "{text}");
}

#[tokio::test]
async fn a_second_server_takes_the_games_over_and_the_database_refuses_the_first_ones_writes() {
    let pg = shared();
    let url = pg.database("takeover");
    let spill = TempDir::new("pg-takeover");
    let first = TestServer::start(Config { reconnect_grace_ms: 60_000, ..on(&url, &spill) }).await;
    let mut p = private_pair(&first, 3).await;
    p.x.play(0, 0).await;
    p.o.recv_type("moved").await;
    // Saved within 100 ms (waited past, not polled: that is the promise).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let epoch = |pg: &Postgres| pg.psql(name_of(&url), "SELECT epoch FROM live_games").trim().to_owned();
    let held = epoch(pg);
    assert!(!held.is_empty(), "the game is saved");

    let second = TestServer::start(Config { reconnect_grace_ms: 60_000, ..on(&url, &spill) }).await;
    // It answers once it has opened its store, and taken the game over.
    let (status, _) = http_get(second.addr, "/healthz").await;
    assert_eq!(status, 200);
    let taken = epoch(pg);
    assert!(taken.parse::<i64>().ok() > held.parse::<i64>().ok(), "{held} -> {taken}");
    // The first server's next write to that game carries the old epoch: the
    // database refuses it, and the first server gives that game up.
    p.o.play(1, 1).await;
    p.x.recv_type("moved").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let moves = pg.psql(name_of(&url), "SELECT coalesce(sum(length(cells)) / 4, 0) FROM live_moves");
    assert_eq!(moves.trim(), "1", "only the move made before the takeover is saved");
    // Its other games are saved as before: only the one taken over is given up.
    let mut q = private_pair(&first, 3).await;
    q.x.play(0, 0).await;
    q.o.recv_type("moved").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let games = pg.psql(name_of(&url), "SELECT count(*) FROM live_games");
    assert_eq!(games.trim(), "2", "the first server's new game is saved");
    // The refusal is the database's own, whoever writes: with no hold, or
    // with the holder's name and an old epoch.
    let owner = pg.psql(name_of(&url), &format!("SELECT owner FROM live_games WHERE epoch = {taken}"));
    let holds = format!("SET ttt.owner = '{}'; SET ttt.epoch = '{held}'; ", owner.trim());
    for writer in ["", holds.as_str()] {
        let stale = format!("{writer}DELETE FROM live_games");
        let refused = pg.try_psql(name_of(&url), &stale).expect_err("an old epoch's write is refused");
        assert!(refused.contains("is held by"), "{refused}");
    }
    assert_eq!(epoch(pg).lines().filter(|e| *e == taken).count(), 1, "still held by the second server");
    drop(q);
    drop(p);
    second.shutdown().await;
    // The first server cannot write any more: its shutdown would spend 10 s
    // trying before it spills. It is left to the end of the test.
    drop(first);
}

/// Signs `name` in on a new connection (registering it the first time).
async fn signed(server: &TestServer, name: &str, token: &mut Option<String>) -> Client {
    let mut c = server.client().await;
    if token.is_none() {
        *token = Some(c.register(name, false).await);
    }
    c.sign_in(name, token.as_deref().unwrap_or_default()).await;
    c
}

#[tokio::test]
async fn one_accounts_two_games_ending_at_once_both_move_its_rating() {
    let pg = shared();
    let url = pg.database("ratings");
    let spill = TempDir::new("pg-ratings");
    let server = TestServer::start(on(&url, &spill)).await;
    let mut ann_token = None;
    let mut pairs = Vec::new();
    for rival in ["bob", "cat"] {
        let mut ann = signed(&server, "ann", &mut ann_token).await;
        let mut other = signed(&server, rival, &mut None).await;
        ann.send(json!({"type": "create_room", "size": 3})).await;
        let room = ann.recv_type("room_created").await["room"].clone();
        other.send(json!({"type": "join_room", "room": room})).await;
        ann.recv_type("game_started").await;
        other.recv_type("game_started").await;
        pairs.push((ann, other));
    }
    // Both games end at once: each rival resigns.
    for (_, other) in &mut pairs {
        other.send(json!({"type": "resign"})).await;
    }
    let mut ratings = Vec::new();
    for (ann, _) in &mut pairs {
        let over = ann.recv_type("game_over").await;
        let id = over["game_id"].as_str().expect("an id").to_owned();
        let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
        assert_eq!(status, 200, "{record}");
        assert_eq!(record["rated"], true, "{record}");
        let seat = usize::from(record["players"][1]["name"] == "ann");
        ratings.push((record["ratings"][seat]["before"].clone(), record["ratings"][seat]["after"].clone()));
    }
    let (_, profile) = api(server.addr, "/api/players/ann").await;
    assert_eq!(profile["ratings"]["3"]["games"], 2, "{profile}");
    // One game was rated after the other: its "before" is the other's
    // "after", and its "after" is where the account stands.
    let later = match (ratings[1].0 == ratings[0].1, ratings[0].0 == ratings[1].1) {
        (true, _) => 1,
        (_, true) => 0,
        _ => panic!("neither game was rated from the other's result: {ratings:?}"),
    };
    assert_eq!(profile["ratings"]["3"]["rating"], ratings[later].1, "{profile}");
    let sql = "SELECT r.games FROM ratings r JOIN accounts a ON a.id = r.account WHERE a.name = 'ann'";
    assert_eq!(pg.psql(name_of(&url), sql).trim(), "2");
    server.shutdown().await;
}

#[tokio::test]
async fn a_stop_while_postgres_is_down_spills_the_records_and_the_next_start_puts_them_in() {
    let pg = Postgres::start();
    let url = pg.database("spill");
    let dir = TempDir::new("pg-spill");
    let config = || on(&url, &dir);
    let server = TestServer::start(config()).await;
    let mut p = private_pair(&server, 3).await;
    p.x.play(0, 0).await;
    p.o.recv_type("moved").await;
    // The game in progress is saved before Postgres goes.
    let saved = || pg.psql(name_of(&url), "SELECT count(*) FROM live_moves").trim().to_owned();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while saved() != "1" {
        assert!(std::time::Instant::now() < deadline, "the game was not saved");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pg.crash();
    health_turns(&server, 503, Duration::from_secs(6)).await;
    // A game that ends while Postgres is down: its record waits in memory.
    let id = resign(&mut p).await;
    let text = server.stop().await.expect_err("a stop with unsaved records fails").to_string();
    assert!(text.contains("ttt-unsaved-"), "{text}");
    pg.resume();
    // The next start imports the file before anything else, and renames it.
    let server = TestServer::start(config()).await;
    let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200, "{record}");
    assert_eq!(record["reason"], "resign");
    let left: Vec<_> = std::fs::read_dir(&dir.path)
        .expect("the spill directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.iter().all(|f| f.ends_with(".imported")) && !left.is_empty(), "{left:?}");
    // Its game ended: it is no longer saved as a game in progress.
    assert_eq!(pg.psql(name_of(&url), "SELECT count(*) FROM live_games").trim(), "0");
    server.shutdown().await;
}

#[tokio::test]
async fn saved_moves_after_a_gap_are_set_aside_at_start_not_replayed() {
    let pg = shared();
    let url = pg.database("gap");
    let spill = TempDir::new("pg-gap");
    let config = || Config { reconnect_grace_ms: 60_000, ..on(&url, &spill) };
    let server = TestServer::start(config()).await;
    let (mut a, mut b) = (server.client().await, server.client().await);
    a.send(json!({"type": "create_room", "size": 3})).await;
    let room = a.recv_type("room_created").await["room"].clone();
    b.send(json!({"type": "join_room", "room": room})).await;
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    let (mut x, mut o, token) =
        if sa["you"] == 1 { (a, b, sa["resume_token"].clone()) } else { (b, a, sb["resume_token"].clone()) };
    x.play(0, 0).await;
    o.recv_type("moved").await;
    // A graceful stop saves the game; then a chunk after a gap appears (a
    // move lost on a full queue leaves one).
    server.shutdown().await;
    let db = name_of(&url);
    let room = pg.psql(db, "SELECT room FROM live_games").trim().to_owned();
    let gap = format!(
        "{}INSERT INTO live_moves (room, seq, cells) VALUES ('{room}', 5, '\\x02000200')",
        as_holder_of(&room)
    );
    pg.psql(db, &gap);
    let server = TestServer::start(config()).await;
    let (status, _) = http_get(server.addr, "/healthz").await;
    assert_eq!(status, 200);
    let mut x = server.client().await;
    x.send(json!({"type": "resume", "token": token})).await;
    let state = x.recv_type("state").await;
    assert_eq!(state["moves"], json!([[0, 0]]), "{state}");
    let set_aside = pg.psql(db, "SELECT what || ' ' || key FROM quarantine");
    assert_eq!(set_aside.trim(), format!("live_moves {room}"));
    assert_eq!(pg.psql(db, "SELECT count(*) FROM live_moves WHERE seq = 5").trim(), "0");
    server.shutdown().await;
}

#[tokio::test]
async fn a_postgres_that_stops_answering_is_noticed_on_an_idle_server_within_5_s() {
    let pg = Postgres::start();
    let url = pg.database("hung");
    let spill = TempDir::new("pg-hung");
    let server = TestServer::start(on(&url, &spill)).await;
    let (status, _) = http_get(server.addr, "/healthz").await;
    assert_eq!(status, 200);
    // Nothing is written: only the server's own check can notice.
    pg.freeze();
    health_turns(&server, 503, Duration::from_millis(5_500)).await;
    let (_, body) = http_get(server.addr, "/healthz").await;
    assert!(body.contains("not answering") || body.contains("cannot write"), "{body}");
    pg.thaw();
    health_turns(&server, 200, Duration::from_secs(11)).await;
    let mut p = private_pair(&server, 3).await;
    let id = resign(&mut p).await;
    let (status, _) = api(server.addr, &format!("/api/games/{id}")).await;
    assert_eq!(status, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn one_accounts_games_on_two_servers_ending_at_once_both_move_its_rating() {
    let pg = shared();
    let url = pg.database("ratings-two");
    let spill = TempDir::new("pg-ratings-two");
    let first = TestServer::start(on(&url, &spill)).await;
    let second = TestServer::start(on(&url, &spill)).await;
    let (status, _) = http_get(second.addr, "/healthz").await;
    assert_eq!(status, 200);
    // Each server's writer learns ann's standing at her sign-in there: both
    // would rate her next game from the same one.
    let mut ann_token = None;
    let mut games = Vec::new();
    for (server, rival) in [(&first, "bob"), (&second, "cat")] {
        let mut ann = signed(server, "ann", &mut ann_token).await;
        let mut other = signed(server, rival, &mut None).await;
        ann.send(json!({"type": "create_room", "size": 3})).await;
        let room = ann.recv_type("room_created").await["room"].clone();
        other.send(json!({"type": "join_room", "room": room})).await;
        ann.recv_type("game_started").await;
        other.recv_type("game_started").await;
        games.push((server, ann, other));
    }
    for (_, _, other) in &mut games {
        other.send(json!({"type": "resign"})).await;
    }
    let mut ratings = Vec::new();
    for (server, ann, _) in &mut games {
        let id = ann.recv_type("game_over").await["game_id"].as_str().expect("an id").to_owned();
        let (status, record) = api(server.addr, &format!("/api/games/{id}")).await;
        assert_eq!(status, 200, "{record}");
        let seat = usize::from(record["players"][1]["name"] == "ann");
        ratings.push((record["ratings"][seat]["before"].clone(), record["ratings"][seat]["after"].clone()));
    }
    // The database rated one after the other, whichever server wrote it.
    let chained = ratings[1].0 == ratings[0].1 || ratings[0].0 == ratings[1].1;
    assert!(chained, "{ratings:?}");
    let sql = "SELECT r.games FROM ratings r JOIN accounts a ON a.id = r.account WHERE a.name = 'ann'";
    assert_eq!(pg.psql(name_of(&url), sql).trim(), "2");
    drop(games);
    second.shutdown().await;
    first.shutdown().await;
}

#[tokio::test]
async fn a_postgres_that_cannot_be_reached_stops_the_start_saying_so() {
    let spill = TempDir::new("pg-unreachable");
    let url = format!("postgres://ttt@/nowhere?host={}&port=5432", spill.path.display());
    let text = TestServer::start(on(&url, &spill)).await.stop().await.expect_err("refused").to_string();
    assert!(text.contains("cannot reach") && text.contains("check that Postgres runs"), "{text}");
}

#[tokio::test]
async fn a_saved_game_that_cannot_be_read_back_is_set_aside_and_the_others_resume() {
    let pg = shared();
    let url = pg.database("bad-row");
    let spill = TempDir::new("pg-bad-row");
    let config = || Config { reconnect_grace_ms: 60_000, ..on(&url, &spill) };
    let server = TestServer::start(config()).await;
    let mut games = Vec::new();
    for _ in 0..2 {
        let mut p = private_pair(&server, 3).await;
        p.x.play(0, 0).await;
        p.o.recv_type("moved").await;
        games.push(p);
    }
    server.shutdown().await;
    drop(games);
    let db = name_of(&url);
    // One saved game's resume token hash is cut short: it cannot be played on.
    let rooms = pg.psql(db, "SELECT room FROM live_games ORDER BY room");
    let rooms: Vec<&str> = rooms.lines().collect();
    assert_eq!(rooms.len(), 2);
    let damage = format!(
        "{}UPDATE live_games SET x_token = '\\x0102' WHERE room = '{}'",
        as_holder_of(rooms[0]),
        rooms[0]
    );
    pg.psql(db, &damage);
    let server = TestServer::start(config()).await;
    let (status, _) = http_get(server.addr, "/healthz").await;
    assert_eq!(status, 200, "a bad row never stops the start");
    let set_aside = pg.psql(db, "SELECT what || ' ' || key FROM quarantine ORDER BY what");
    assert_eq!(
        set_aside.lines().collect::<Vec<_>>(),
        [format!("live_games {}", rooms[0]), format!("live_moves {}", rooms[0])]
    );
    let left = pg.psql(db, "SELECT room FROM live_games");
    assert_eq!(left.trim(), rooms[1], "the other game is still saved, and held by this start");
    server.shutdown().await;
}
