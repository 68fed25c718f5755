//! Fischer clocks survive what a game survives (compete.md, "Time
//! controls"): after SIGTERM and SIGKILL of the real `ttt-server`, and after
//! a cluster instance dies or hands its games over, each side has the time
//! saved with its last move; the outage is charged to nobody; the clock of
//! the side to move runs again from the moment a server holds the game,
//! whether or not anyone resumed, and flags on time with nobody back; and
//! the record keeps both sides' time after every move, as the `moved`
//! messages said it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_tests::cluster::{ADOPTION, Two, resume_by, saved};
use tictactoe_tests::postgres::shared;
use tictactoe_tests::process::ServerProcess;
use tictactoe_tests::{Client, TempDir, assert_judged, http_get, record_of};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// 60+2: a minute each, two seconds added to every move once the clocks run.
fn clock() -> Value {
    json!({"initial_ms": 60_000, "increment_ms": 2_000})
}

/// O wins on row 1 with the sixth move.
const GAME: [[usize; 2]; 6] = [[0, 0], [1, 0], [0, 1], [1, 1], [2, 2], [1, 2]];

/// How long a player thinks before each move once the clocks run: long
/// enough that each side's time is its own, not the initial one.
const THINK: Duration = Duration::from_millis(150);

/// How long the server is gone: an outage charged to anyone would show.
const OUTAGE: Duration = Duration::from_secs(2);

/// How long nobody resumes after the restart: the running clock runs meanwhile.
const NOBODY_BACK: Duration = Duration::from_secs(1);

/// A Fischer game between two players: X then O, their resume tokens, its
/// room, and both sides' clocks after each move as `moved` said them.
struct Timed {
    terms: Value,
    players: [Client; 2],
    tokens: [Value; 2],
    room: String,
    clocks: Vec<[u64; 2]>,
}

impl Timed {
    /// A room on `server` with the 60+2 clock, joined, and played to its `n`th move.
    async fn start(server: &ServerProcess, n: usize) -> Timed {
        Timed::start_with(server, clock(), n).await
    }

    /// A room on `server` with the clock `terms`, joined, and played to its `n`th move.
    async fn start_with(server: &ServerProcess, terms: Value, n: usize) -> Timed {
        let (mut a, mut b) = (server.client().await, server.client().await);
        a.send(json!({"type": "create_room", "clock": terms})).await;
        let created = a.recv_type("room_created").await;
        assert_eq!(created["clock"], terms, "{created}");
        let room = created["room"].as_str().expect("a code").to_owned();
        b.send(json!({"type": "join_room", "room": room})).await;
        let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
        let before = (&terms, &json!([terms["initial_ms"], terms["initial_ms"]]), &Value::Null);
        for s in [&sa, &sb] {
            assert_eq!((&s["clock"], &s["clocks"], &s["running"]), before, "{s}");
        }
        let (players, tokens) = match sa["you"] == 1 {
            true => ([a, b], [sa["resume_token"].clone(), sb["resume_token"].clone()]),
            false => ([b, a], [sb["resume_token"].clone(), sa["resume_token"].clone()]),
        };
        let mut game = Timed { terms, players, tokens, room, clocks: Vec::new() };
        game.play_to(n).await;
        game
    }

    /// Plays on from the moves played so far to the `n`th, each player's
    /// `moved` and its opponent's checked against each other.
    async fn play_to(&mut self, n: usize) {
        for (i, &[r, c]) in GAME.iter().enumerate().take(n).skip(self.clocks.len()) {
            // The first move of each side is on its 30 s turn: no clock runs yet.
            if i >= 2 {
                tokio::time::sleep(THINK).await;
            }
            let own = self.players[i % 2].play(r, c).await;
            let seen = self.players[(i + 1) % 2].recv_type("moved").await;
            assert_eq!(own["seq"], i + 1, "{own}");
            assert_eq!(
                (&own["clocks"], &own["running"]),
                (&seen["clocks"], &seen["running"]),
                "{own} {seen}"
            );
            let clocks = pair(&own["clocks"]);
            let running = match (i, i + 1 == GAME.len()) {
                (0, _) | (_, true) => Value::Null,
                _ => json!(2 - i % 2),
            };
            assert_eq!(own["running"], running, "{own}");
            // The side that did not move has what it had.
            if let Some(before) = self.clocks.last() {
                let other = (i + 1) % 2;
                assert_eq!(clocks[other], before[other], "{own}");
            }
            self.clocks.push(clocks);
        }
    }

    /// After the last move: the game ends on O's line, and its record (on
    /// `server`) has the clock and both sides' time after every move, as
    /// the `moved` messages said them.
    async fn finish(mut self, server: &ServerProcess) {
        self.play_to(GAME.len()).await;
        let over = self.players[0].recv_type("game_over").await;
        assert_eq!((&over["winner"], &over["reason"]), (&json!(2), &json!("line")), "{over}");
        assert_judged(3, &over);
        assert_eq!(pair(&over["clocks"]), self.clocks[GAME.len() - 1], "{over}");
        let id = over["game_id"].as_str().expect("a game id");
        let record = record_of(server.addr, id).await;
        assert_eq!(record["moves"], json!(GAME), "{record}");
        assert_eq!(record["clock"], self.terms, "{record}");
        assert_eq!(record["clocks"], json!(self.clocks), "{record}");
    }

    /// Checks `state` (sent to `you`) of the game restored as of its last
    /// move: the side to move runs, and has lost at least `at_least` of the
    /// time its last `moved` said it had, and at most the time since
    /// `since` (an instant before the server that holds the game now took
    /// it); the other side has exactly its time as of its own last move.
    /// Returns how much the running side lost.
    fn restored(&self, state: &Value, you: u64, at_least: Duration, since: Instant) -> u64 {
        let bound = since.elapsed().as_millis() as u64 + 1;
        let (moves, saved) = (self.clocks.len(), self.clocks[self.clocks.len() - 1]);
        let side = moves % 2;
        assert_eq!(state["moves"], json!(GAME[..moves]), "{state}");
        assert_eq!(state["you"], you, "{state}");
        let terms = (&state["clock"], &state["turn"], &state["running"]);
        assert_eq!(terms, (&self.terms, &json!(side + 1), &json!(side + 1)), "{state}");
        let clocks = pair(&state["clocks"]);
        assert_eq!(clocks[1 - side], saved[1 - side], "the side not to move has its saved time: {state}");
        assert_eq!(state["clock_ms"], clocks[side], "{state}");
        let lost =
            saved[side].checked_sub(clocks[side]).unwrap_or_else(|| panic!("more than saved: {state}"));
        let since_restart = at_least.as_millis() as u64;
        assert!(lost >= since_restart, "the clock did not run since the restart: lost {lost} ms: {state}");
        let charged = "the outage was charged";
        assert!(
            lost <= bound,
            "lost {lost} ms, more than the {bound} ms since the restart: {charged}: {state}"
        );
        lost
    }
}

/// `[ms, ms]` from a message's `clocks`.
fn pair(clocks: &Value) -> [u64; 2] {
    serde_json::from_value(clocks.clone()).unwrap_or_else(|e| panic!("clocks {clocks}: {e}"))
}

/// A Fischer game played to its `n`th move, the server stopped with
/// `signal` and started again on the same database after [`OUTAGE`];
/// nobody resumes for [`NOBODY_BACK`]; then both do, see the clocks as
/// saved less the time since the restart, and finish the game.
async fn clocks_outlive(signal: &str, n: usize) {
    let dir = TempDir::new(&format!("clock-restore-{signal}"));
    let db = dir.database("ttt.db").to_string();
    let args = ["--database", &db, "--reconnect-grace-ms", "30000"];
    let server = ServerProcess::start(&args);
    let mut game = Timed::start(&server, n).await;
    if signal == "KILL" {
        // The contract lets a crash lose the last 100 ms: this waits past
        // them (the time is what is tested, not a condition to wait for).
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    server.signal(signal);
    let want_close = if signal == "KILL" { None } else { Some(CloseCode::Restart) };
    for c in &mut game.players {
        let (before, close) = c.until_close().await;
        assert!(!before.iter().any(|m| m["type"] == "game_over"), "{before:?}");
        assert_eq!(close, want_close);
    }
    server.exits_within(Duration::from_secs(5)).await;
    tokio::time::sleep(OUTAGE).await;

    let restarted = Instant::now();
    let server = ServerProcess::start(&args);
    assert_eq!(server.restored, 1);
    tokio::time::sleep(NOBODY_BACK).await;
    let mut back = Vec::new();
    let mut lost = 0;
    for (token, you) in game.tokens.iter().zip([1, 2]) {
        let mut c = server.client().await;
        c.send(json!({"type": "resume", "token": token})).await;
        let state = c.recv_type("state").await;
        // The second sees the running clock at least where the first did.
        lost = game.restored(&state, you, NOBODY_BACK.max(Duration::from_millis(lost)), restarted);
        back.push(c);
    }
    game.players = back.try_into().unwrap_or_else(|_| panic!("two players"));
    game.finish(&server).await;
}

#[tokio::test]
async fn after_sigterm_the_clocks_are_as_saved_and_the_outage_is_charged_to_nobody() {
    clocks_outlive("TERM", 4).await;
}

#[tokio::test]
async fn after_sigkill_the_clocks_are_as_saved_and_the_outage_is_charged_to_nobody() {
    clocks_outlive("KILL", 3).await;
}

#[tokio::test]
async fn after_a_failover_the_clocks_are_as_saved_and_the_game_plays_on_to_its_record() {
    let pg = shared();
    let Two { a, b, url, redis: _redis, spill: _spill } = Two::start("clock-failover");
    let n = 3;
    let mut game = Timed::start(&a, n).await;
    // The contract lets a crash lose the last 100 ms: this waits for them.
    saved(pg, &url, &game.room, n).await;
    a.signal("KILL");
    let killed = Instant::now();
    for c in &mut game.players {
        let (_, close) = c.until_close().await;
        assert_eq!(close, None, "a killed instance sends no close frame");
    }
    // `b` holds each resume until the game is its own, and answers it then:
    // the running clock has run only since.
    let mut back = Vec::new();
    for (token, you) in game.tokens.iter().zip([1, 2]) {
        let (c, state) = resume_by(&b, token, killed + ADOPTION).await;
        let outage = killed.elapsed();
        let lost = game.restored(&state, you, Duration::ZERO, killed);
        assert!(lost < 1_000, "lost {lost} ms of an outage of {outage:?}: {state}");
        // Adoption waits for the dead instance's lease: the outage is long
        // enough that charging it would show.
        assert!(outage > Duration::from_secs(2), "adopted after only {outage:?}");
        back.push(c);
    }
    game.players = back.try_into().unwrap_or_else(|_| panic!("two players"));
    game.finish(&b).await;
    drop(a);
}

#[tokio::test]
async fn a_game_handed_over_at_sigterm_keeps_its_clocks() {
    let Two { a, b, redis: _redis, spill: _spill, .. } = Two::start("clock-handover");
    let n = 4;
    let mut game = Timed::start(&a, n).await;
    a.signal("TERM");
    let stopped = Instant::now();
    for c in &mut game.players {
        let (before, close) = c.until_close().await;
        assert!(!before.iter().any(|m| m["type"] == "game_over"), "{before:?}");
        assert_eq!(close, Some(CloseCode::Restart));
    }
    // Handed over before the close, the game is `b`'s at once, its clock
    // running there since.
    let mut back = Vec::new();
    for (token, you) in game.tokens.iter().zip([1, 2]) {
        let (c, state) = resume_by(&b, token, stopped + ADOPTION).await;
        game.restored(&state, you, Duration::ZERO, stopped);
        back.push(c);
    }
    game.players = back.try_into().unwrap_or_else(|_| panic!("two players"));
    game.finish(&b).await;
}

/// Whether `server`'s `/metrics` has counted a flag that lost a game.
async fn flagged(server: &ServerProcess) -> bool {
    let (_, metrics) = http_get(server.addr, "/metrics").await;
    metrics.lines().any(|l| l.starts_with("ttt_flags_total{result=\"loss\"}") && l.ends_with(" 1"))
}

#[tokio::test]
async fn after_a_restart_the_running_clock_flags_on_time_with_nobody_back() {
    let dir = TempDir::new("clock-restore-flag");
    let db = dir.database("ttt.db").to_string();
    let args = ["--database", &db, "--reconnect-grace-ms", "30000"];
    let server = ServerProcess::start(&args);
    // O's clock starts with X's second move, at its whole 3 s.
    let mut game = Timed::start_with(&server, json!({"initial_ms": 3_000, "increment_ms": 0}), 3).await;
    let left = Duration::from_millis(game.clocks[2][1]);
    server.signal("TERM");
    for c in &mut game.players {
        assert_eq!(c.until_close().await.1, Some(CloseCode::Restart));
    }
    server.exits_within(Duration::from_secs(5)).await;
    tokio::time::sleep(OUTAGE).await;

    // Nobody comes back: the restored room flags by its own deadline, as
    // of the restart (the metrics are read over HTTP, which no room hears).
    let restarted = Instant::now();
    let server = ServerProcess::start(&args);
    let listening = Instant::now();
    while !flagged(&server).await {
        assert!(listening.elapsed() < left + Duration::from_secs(2), "no flag {left:?} after the restart");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (seen, bound) = (restarted.elapsed(), listening.elapsed());
    assert!(seen >= left, "flagged {seen:?} after the restart, with {left:?} left: the outage was charged");
    let late = bound.saturating_sub(left);
    assert!(late <= Duration::from_millis(100 + 50), "flagged {late:?} late (of 100 ms, and a 50 ms poll)");
    // At once: the room that ended may still be committing its record.
    let mut x = server.client().await;
    x.send(json!({"type": "resume", "token": game.tokens[0]})).await;
    let refused = x.expect_error(ErrorCode::InvalidToken, None).await;
    let id = refused["game_id"].as_str().unwrap_or_else(|| panic!("the ended game's id: {refused}"));
    let record = record_of(server.addr, id).await;
    let ended = (&record["winner"], &record["reason"], &record["moves"]);
    assert_eq!(ended, (&json!(1), &json!("timeout"), &json!(GAME[..3])), "{record}");
    assert_eq!((&record["clock"], &record["clocks"]), (&game.terms, &json!(game.clocks)), "{record}");
}
