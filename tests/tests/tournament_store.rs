//! The store's arena tournaments over real databases, a SQLite file and a
//! real Postgres: a tournament created, joined, paused, listed and read back
//! with its records (standings recomputed from them); a game in progress
//! keeps its tournament and berserk through a restart, and on Postgres
//! through another instance's adoption; `/api/tournaments` and
//! `/api/tournaments/{id}` over real HTTP.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use tictactoe_protocol::tournament::{ScoredGame, Terms, TournamentStatus};
use tictactoe_protocol::{EndReason, Fischer, Player, Rules};
use tictactoe_server::Config;
use tictactoe_server::core::account::Identity;
use tictactoe_server::store::record::{GameRecord, unix_ms};
use tictactoe_server::store::tournaments::{Entrant, TournamentRow, TournamentWrite};
use tictactoe_server::store::{
    Database, LiveGame, LiveWrite, Opened, Outcome, Query, QueryAnswer, Store, StoreError,
};
use tictactoe_tests::postgres::shared;
use tictactoe_tests::{TempDir, TestServer, api, test_config};

const CLOCK: Fischer = Fischer { initial_ms: 60_000, increment_ms: 1_000 };

fn terms(name: &str) -> Terms {
    Terms { name: name.into(), size: 3, win: 3, clock: CLOCK, duration_ms: 120_000 }
}

fn row(id: &str, name: &str, starts_at: i64) -> TournamentRow {
    TournamentRow { id: id.into(), terms: terms(name), created_by: "ann".into(), starts_at }
}

/// A signed-in player as records name it.
fn player(name: &str, account: i64) -> Arc<Identity> {
    Arc::new(Identity { name: name.into(), account: Some(account), bot: false, ratings: Box::default() })
}

/// A finished game of `tournament` (if any) between `x` and `o`.
fn game(
    id: &str,
    tournament: Option<&str>,
    players: [Arc<Identity>; 2],
    moves: Vec<[u16; 2]>,
    winner: Option<Player>,
    berserk: [bool; 2],
    ended_at_ms: i64,
) -> GameRecord {
    GameRecord {
        id: id.into(),
        room: format!("R{id}").into(),
        rules: Rules { clock: Some(CLOCK), size: 3, win: 3 },
        players,
        times: moves.iter().map(|_| 50_000).collect(),
        moves,
        opening: 0,
        host: None,
        winner,
        reason: if winner.is_some() { EndReason::Line } else { EndReason::Draw },
        line: None,
        ratings: None,
        started_at_ms: ended_at_ms - 10_000,
        tournament: tournament.map(Arc::from),
        berserk,
        ended_at_ms,
    }
}

/// Records `g` and waits until it is committed.
async fn recorded(store: &Store, g: GameRecord) {
    let answer = store.record(Box::new(g)).expect("queued").answer.expect("an answer");
    let outcome = answer.await.expect("answered");
    assert!(matches!(outcome, Outcome::Written(Some(_))), "{outcome:?}");
}

/// The record of game `id` as `/api/games/{id}` gives it, as JSON.
async fn api_game(store: &Store, id: &str) -> Value {
    let answer = store.query(Query::Game(id.into())).await.expect("read").expect("the game");
    serde_json::to_value(answer).expect("json")
}

/// Creates, joins, pauses, records, lists and reads a tournament on `db`.
async fn tournament_round_trip(db: Database, spill: &Path) {
    let Opened { store, thread, .. } = Store::open(&db, None, spill, "one", false).expect("open");
    let mut ids = Vec::new();
    for (i, name) in ["ann", "bob", "cid"].into_iter().enumerate() {
        ids.push(store.register(name, i == 1, [i as u8 + 1; 32]).await.expect("register").id);
    }
    let [ann, bob, cid] = [0, 1, 2].map(|i| player(["ann", "bob", "cid"][i], ids[i]));
    let now = unix_ms(SystemTime::now());
    let id = "0TourNament0001";
    let friday = row(id, "Friday arena", now - 1_000);
    let later = row("0TourNament0002", "Later", now + 3_600_000);
    let ended = row("0TourNament0003", "An hour ago", now - 3_600_000 - 120_000);
    let old = row("0TourNament0004", "Two days ago", now - 2 * 86_400_000);
    for t in [&friday, &later, &ended, &old] {
        store.tournament_write(TournamentWrite::Create(t.clone())).await.expect("created");
    }
    let join = |account: i64, name: &str| TournamentWrite::Join {
        tournament: id.into(),
        account,
        name: name.into(),
    };
    let pause = |account: i64| TournamentWrite::Pause { tournament: id.into(), account };
    for (account, name) in [(ids[0], "ann"), (ids[1], "bob"), (ids[2], "cid")] {
        store.tournament_write(join(account, name)).await.expect("joined");
    }
    store.tournament_write(pause(ids[1])).await.expect("paused");
    store.tournament_write(pause(ids[2])).await.expect("paused");
    // Back again: its pause is cleared, its place in the order kept.
    store.tournament_write(join(ids[2], "cid")).await.expect("joined again");
    // A game of ann's won berserk with 3 own moves (the bonus on 3×3), a
    // draw long enough to score, and a game of no tournament.
    let win = game(
        "G000000000001",
        Some(id),
        [ann.clone(), bob.clone()],
        vec![[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]],
        Some(Player::X),
        [true, false],
        now + 1,
    );
    let draw_moves = vec![[0, 0], [1, 1], [2, 2], [0, 2], [2, 0], [1, 0], [1, 2], [0, 1], [2, 1]];
    let draw =
        game("G000000000002", Some(id), [cid.clone(), ann.clone()], draw_moves, None, [false; 2], now + 2);
    let outside =
        game("G000000000003", None, [bob, cid], vec![[0, 0], [1, 1]], Some(Player::O), [false; 2], now);
    for g in [win.clone(), draw.clone(), outside] {
        recorded(&store, g).await;
    }

    let data = store.tournament(id).await.expect("read").expect("the tournament");
    assert_eq!(data.row, friday);
    let entrants: Vec<(String, bool)> =
        data.entrants.iter().map(|e| (e.name.to_string(), e.paused)).collect();
    let want = [("ann", false), ("bob", true), ("cid", false)].map(|(n, p)| (n.to_owned(), p));
    assert_eq!(entrants, want);
    assert_eq!(data.entrants[1], Entrant { account: ids[1], name: "bob".into(), paused: true });
    // Each game as its record has it: the ratings before are those the API shows.
    let mut games = data.games.clone();
    games.sort_by(|a, b| a.id.cmp(&b.id));
    let before = async |g: &GameRecord| -> [Option<i64>; 2] {
        let record = api_game(&store, &g.id).await;
        [0, 1].map(|i| record["ratings"][i]["before"].as_i64())
    };
    let scored = |g: &GameRecord, moves, ratings| ScoredGame {
        id: g.id.clone(),
        ended_at: g.ended_at_ms,
        players: [g.players[0].name.to_string(), g.players[1].name.to_string()],
        winner: g.winner,
        reason: g.reason,
        moves,
        berserk: g.berserk,
        ratings,
    };
    let want = vec![scored(&win, [3, 2], before(&win).await), scored(&draw, [5, 4], before(&draw).await)];
    assert_eq!(games, want);
    assert_eq!(games[0].ratings, [Some(1500), Some(1500)], "new accounts start at 1500");
    // ann: a berserk win (2 + 1) then a draw (1); cid: the draw; bob: the loss.
    let view = data.view(now);
    let table: Vec<(usize, &str, u32, &[u32])> =
        view.standings.iter().map(|s| (s.rank, s.name.as_str(), s.score, s.results.as_slice())).collect();
    assert_eq!(table, [(1, "ann", 4, &[3, 1][..]), (2, "cid", 1, &[1][..]), (3, "bob", 0, &[0][..])]);
    assert_eq!(view.games, [win.id.clone(), draw.id.clone()]);
    assert_eq!((view.summary.status, view.summary.players), (TournamentStatus::Running, 3));

    // The API: the records name their tournament, the lists and the views.
    let record = api_game(&store, &win.id).await;
    assert_eq!(
        (&record["tournament"], &record["berserk"]),
        (&Value::from(id), &serde_json::json!([true, false]))
    );
    let record = api_game(&store, "G000000000003").await;
    assert_eq!(
        (&record["tournament"], &record["berserk"]),
        (&Value::Null, &serde_json::json!([false, false]))
    );
    let answer = store.query(Query::Tournament { id: id.into(), now_ms: now }).await.expect("read");
    let json = serde_json::to_value(answer.expect("found")).expect("json");
    assert_eq!(json, serde_json::to_value(&view).expect("json"));
    assert_eq!(json["standings"][0]["name"], "ann");
    let unknown = Query::Tournament { id: "0NoSuchTourney".into(), now_ms: now };
    assert!(store.query(unknown).await.expect("read").is_none());
    let listed = store.query(Query::Tournaments { now_ms: now }).await.expect("read").expect("a list");
    let QueryAnswer::Tournaments { tournaments } = &listed else { panic!("{listed:?}") };
    let names: Vec<(&str, TournamentStatus, usize)> =
        tournaments.iter().map(|t| (t.name.as_str(), t.status, t.players)).collect();
    assert_eq!(
        names,
        [
            ("Later", TournamentStatus::Starting, 0),
            ("Friday arena", TournamentStatus::Running, 3),
            ("An hour ago", TournamentStatus::Finished, 0)
        ],
        "newest start first; one finished two days ago is not listed"
    );
    let json = serde_json::to_value(&listed).expect("json");
    assert_eq!(json["tournaments"][1]["id"], id);
    assert_eq!(store.tournaments(now).await.expect("read"), *tournaments);
    drop(store);
    thread.join().expect("everything written");
}

/// A tournament game in progress, berserk on player 2's side after a move.
fn live_game(room: &str) -> (LiveGame, [LiveWrite; 3]) {
    let game = LiveGame {
        id: format!("G{room}").into(),
        room: room.into(),
        rules: Rules { clock: Some(CLOCK), size: 3, win: 3 },
        turn_timeout: None,
        players: [Identity::guest("ann"), Identity::guest("bob")],
        tokens: [[1; 32], [2; 32]],
        moves: Vec::new(),
        times: Vec::new(),
        opening: 0,
        clock_left: None,
        started_at_ms: unix_ms(SystemTime::now()),
        house: None,
        tournament: Some("0TourNament0001".into()),
        berserk: [false; 2],
    };
    let room: Arc<str> = room.into();
    let writes = [
        LiveWrite::Start(Box::new(game.clone())),
        LiveWrite::Move { room: room.clone(), seq: 1, cell: [1, 1], left: Some(59_000), at: Instant::now() },
        LiveWrite::Berserk { room, player: Player::O },
    ];
    let played = LiveGame { moves: vec![[1, 1]], times: vec![59_000], berserk: [false, true], ..game };
    (played, writes)
}

/// Saves a tournament game in progress on `db`, stops, and opens `db` again.
async fn live_game_restarts(db: Database, spill: &Path) {
    let (want, writes) = live_game("TOURN1");
    let Opened { store, thread, .. } = Store::open(&db, None, spill, "one", false).expect("open");
    for w in writes {
        store.save(w);
    }
    assert!(store.flush().await, "written");
    drop(store);
    thread.join().expect("everything written");
    let Opened { store, thread, restored, .. } = Store::open(&db, None, spill, "one", false).expect("reopen");
    assert_eq!(restored.games, [want]);
    drop(store);
    thread.join().expect("everything written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_round_trips_through_sqlite() {
    let dir = TempDir::new("tournament-sqlite");
    tournament_round_trip(Database::Sqlite(dir.path.join("ttt.db")), &dir.path).await;
    live_game_restarts(Database::Sqlite(dir.path.join("live.db")), &dir.path).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_round_trips_through_postgres() {
    let dir = TempDir::new("tournament-postgres");
    tournament_round_trip(Database::Postgres(shared().database("tournament_round_trip")), &dir.path).await;
    live_game_restarts(Database::Postgres(shared().database("tournament_restart")), &dir.path).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_database_no_tournament_can_be_made() {
    let dir = TempDir::new("tournament-none");
    let Opened { store, thread, .. } =
        Store::open(&Database::None, None, &dir.path, "one", false).expect("open");
    let create = TournamentWrite::Create(row("0TourNament0001", "Nowhere", 0));
    assert_eq!(store.tournament_write(create).await, Err(StoreError::Disabled));
    assert_eq!(store.tournaments(0).await, Err(StoreError::Disabled));
    thread.join().expect("nothing to write");
}

/// An instance that lets its games go (it stopped) has its tournament game
/// adopted by another, tournament and berserk included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adopted_tournament_game_keeps_its_tournament_and_berserk() {
    let dir = TempDir::new("tournament-adoption");
    let db = Database::Postgres(shared().database("tournament_adoption"));
    let (want, writes) = live_game("TOURN2");
    let first = Store::open(&db, None, &dir.path, "first", true).expect("open the first");
    for w in writes {
        first.store.save(w);
    }
    assert!(first.store.flush().await, "written");
    let mut leases = first.leases.expect("a cluster's leases");
    tokio::task::spawn_blocking(move || leases.release()).await.expect("task").expect("let go");
    let second = Store::open(&db, None, &dir.path, "second", true).expect("open the second");
    let mut leases = second.leases.expect("a cluster's leases");
    let adopted = tokio::task::spawn_blocking(move || {
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let dead = leases.dead().expect("dead instances");
            if let Some(adopted) = leases.adopt(dead).expect("adopt") {
                return adopted;
            }
            assert!(Instant::now() < until, "the first instance's games were never adopted");
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .expect("task");
    assert_eq!(adopted.from, ["first"]);
    assert_eq!(adopted.restored.games, [want]);
    drop((first.store, second.store));
    first.thread.join().expect("everything written");
    second.thread.join().expect("everything written");
}

/// `/api/tournaments` lists what the store holds and `/api/tournaments/{id}`
/// gives its standings and games; an unknown id is a 404 with the API's
/// error body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_lists_tournaments_and_gives_their_standings() {
    let dir = TempDir::new("tournament-api");
    let db = dir.database("ttt.db");
    let id = "0TourNament0001";
    let now = unix_ms(SystemTime::now());
    {
        let Opened { store, thread, .. } = Store::open(&db, None, &dir.path, "one", false).expect("open");
        let ann = store.register("ann", false, [1; 32]).await.expect("ann").id;
        let bob = store.register("bob", true, [2; 32]).await.expect("bob").id;
        store
            .tournament_write(TournamentWrite::Create(row(id, "Friday arena", now - 1_000)))
            .await
            .expect("made");
        for (account, name) in [(ann, "ann"), (bob, "bob")] {
            let join = TournamentWrite::Join { tournament: id.into(), account, name: name.into() };
            store.tournament_write(join).await.expect("joined");
        }
        let moves = vec![[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];
        let players = [player("ann", ann), player("bob", bob)];
        recorded(&store, game("G000000000001", Some(id), players, moves, Some(Player::X), [false; 2], now))
            .await;
        drop(store);
        thread.join().expect("everything written");
    }
    let server = TestServer::start(Config { database: db, ..test_config() }).await;
    let (status, list) = api(server.addr, "/api/tournaments").await;
    assert_eq!(status, 200, "{list}");
    let listed = &list["tournaments"];
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(
        (&listed[0]["id"], &listed[0]["status"], &listed[0]["players"]),
        (&id.into(), &"running".into(), &2.into())
    );
    let (status, view) = api(server.addr, &format!("/api/tournaments/{id}")).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(
        (&view["name"], &view["games"]),
        (&"Friday arena".into(), &serde_json::json!(["G000000000001"]))
    );
    let table: Vec<(&str, u64)> = view["standings"]
        .as_array()
        .expect("standings")
        .iter()
        .map(|s| (s["name"].as_str().unwrap_or_default(), s["score"].as_u64().unwrap_or(99)))
        .collect();
    assert_eq!(table, [("ann", 2), ("bob", 0)]);
    for path in ["/api/tournaments/0NoSuchTourney", "/api/tournaments/not-an-id!"] {
        let (status, body) = api(server.addr, path).await;
        assert_eq!((status, &body["error"]), (404, &"no tournament has that id".into()), "{path}");
    }
    server.stop().await.expect("stopped");
}
