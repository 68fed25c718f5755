//! Fischer clocks over real sockets: the increment's arithmetic over a whole
//! game against a reference kept here, the flag within 100 ms with nobody
//! connected, the timeout draw when the opponent can complete no line
//! (3×3 and 15×15 five in a row), the lag credit's cap, `invalid_clock`
//! for each bad field, and quick match pairing only equal clocks.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tictactoe_protocol::ErrorCode;
use tictactoe_server::Config;
use tictactoe_tests::{Client, Pair, TempDir, TestServer, record_of, test_config};

/// Two players paired by quick match on `size`/`win` with `clock`.
async fn timed_pair(server: &TestServer, size: usize, win: usize, clock: Value) -> (Pair, [Value; 2]) {
    let ask = json!({"type": "quick_match", "size": size, "win": win, "clock": clock});
    let (mut a, mut b) = (server.client().await, server.client().await);
    a.send(ask.clone()).await;
    let queued = a.recv_type("queued").await;
    assert_eq!(queued["clock"], clock, "queued echoes the clock: {queued}");
    b.send(ask).await;
    let (sa, sb) = (a.recv_type("game_started").await, b.recv_type("game_started").await);
    let room = sa["room"].as_str().unwrap_or_default().to_owned();
    if sa["you"] == 1 { (Pair { x: a, o: b, room }, [sa, sb]) } else { (Pair { x: b, o: a, room }, [sb, sa]) }
}

fn clocks(msg: &Value) -> [u64; 2] {
    let c = &msg["clocks"];
    [c[0].as_u64().unwrap_or_else(|| panic!("clocks in {msg}")), c[1].as_u64().unwrap_or_default()]
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

fn unix_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// The mover of move `i` (0-based) in `pair`, and the other player.
fn sides(pair: &mut Pair, i: usize) -> (&mut Client, &mut Client) {
    if i % 2 == 0 { (&mut pair.x, &mut pair.o) } else { (&mut pair.o, &mut pair.x) }
}

#[tokio::test]
async fn the_increment_is_added_to_the_mover_over_a_whole_game_as_a_reference_computes() {
    let server = TestServer::start(test_config()).await;
    let (initial, increment) = (5_000u64, 700u64);
    let clock = json!({"initial_ms": initial, "increment_ms": increment});
    let (mut pair, started) = timed_pair(&server, 3, 3, clock.clone()).await;
    for s in &started {
        assert_eq!(
            (s["clock"].clone(), s["clocks"].clone()),
            (clock.clone(), json!([initial, initial])),
            "{s}"
        );
        assert_eq!((s["running"].clone(), s["turn_timeout_ms"].clone()), (Value::Null, json!(0)), "{s}");
    }
    // X wins on the left column after thinking a different time each move.
    let moves = [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0]];
    let waits = [40u64, 60, 250, 120, 330];
    let mut reference = [initial, initial];
    // When the previous move was sent, and when it was seen: the mover's
    // turn began on the server between the two.
    let (mut prev_sent, mut prev_seen) = (Instant::now(), Instant::now());
    for (i, (&[r, c], &wait)) in moves.iter().zip(&waits).enumerate() {
        let (mover, other) = sides(&mut pair, i);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let sent = Instant::now();
        let own = mover.play(r, c).await;
        let seen = Instant::now();
        assert_eq!(other.recv_type("moved").await, own, "both see the same clocks");
        let side = i % 2;
        let got = clocks(&own);
        match i {
            // Each side's first move: no clock runs and no increment is added.
            0 | 1 => {
                assert_eq!(got, [initial, initial], "move {}: {own}", i + 1);
                if i == 0 {
                    assert_eq!(own["clock_ms"], json!(30_000), "O's first move has 30 s: {own}");
                }
            }
            _ => {
                // Spent on the server: after this move was sent less the
                // time since the last was seen, before it was seen less
                // the time since the last was sent.
                let least = ms(sent - prev_seen);
                let most = ms(seen - prev_sent);
                // Each figure is whole milliseconds: a millisecond each way.
                let low = reference[side] + increment - most - 1;
                let high = reference[side] + increment - least + 1;
                assert!(
                    (low..=high).contains(&got[side]),
                    "move {}: {} not in {low}..={high}",
                    i + 1,
                    got[side]
                );
                reference[side] = got[side];
            }
        }
        assert_eq!(got[1 - side], reference[1 - side], "the other side's clock is untouched: {own}");
        let over = i + 1 == moves.len();
        let running = if over || i == 0 { Value::Null } else { json!(2 - side) };
        assert_eq!(own["running"], running, "move {}: {own}", i + 1);
        if i >= 1 && !over {
            assert_eq!(own["clock_ms"], json!(got[1 - side]), "clock_ms is the next mover's time: {own}");
        }
        (prev_sent, prev_seen) = (sent, seen);
    }
    let over = pair.x.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")), "{over}");
    assert_eq!((clocks(&over), over["running"].clone()), (reference, Value::Null), "{over}");
}

#[tokio::test]
async fn the_flag_falls_within_100_ms_with_nobody_connected_and_the_record_keeps_the_times() {
    let dir = TempDir::new("clock-flag");
    let config = Config { database: dir.database("ttt.db"), reconnect_grace_ms: 60_000, ..test_config() };
    let server = TestServer::start(config).await;
    let clock = json!({"initial_ms": 1_000, "increment_ms": 0});
    let (mut pair, started) = timed_pair(&server, 3, 3, clock.clone()).await;
    pair.x.play(1, 1).await;
    pair.o.recv_type("moved").await;
    let sent = unix_ms();
    let second = pair.o.play(0, 0).await;
    let seen = unix_ms();
    assert_eq!((second["running"].clone(), second["clock_ms"].clone()), (json!(1), json!(1_000)), "{second}");
    // Both players go: X's clock runs on, and falls with nobody there.
    drop(pair);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let mut back = server.client().await;
    back.send(json!({"type": "resume", "token": started[0]["resume_token"]})).await;
    let refused = back.expect_error(ErrorCode::InvalidToken, None).await;
    let id = refused["game_id"].as_str().unwrap_or_else(|| panic!("the ended game's id: {refused}"));
    let record = record_of(server.addr, id).await;
    assert_eq!(
        (record["winner"].clone(), record["reason"].clone()),
        (json!(2), json!("timeout")),
        "{record}"
    );
    assert_eq!(
        (record["clock"].clone(), record["clocks"].clone()),
        (clock, json!([[1_000, 1_000], [1_000, 1_000]]))
    );
    let ended = rfc3339_ms(record["ended_at"].as_str().unwrap_or_default());
    // The flag's instant is 1 s after O's move was accepted, which was
    // between its sending and its echo.
    assert!(ended >= sent + 1_000, "ended at {ended}, before the flag ({sent} + 1000)");
    assert!(ended <= seen + 1_000 + 100, "ended at {ended}, more than 100 ms after the flag ({seen} + 1000)");
}

/// Milliseconds since the epoch of an RFC 3339 UTC time with milliseconds.
fn rfc3339_ms(text: &str) -> i64 {
    civil_ms(text).unwrap_or_else(|| panic!("not an RFC 3339 time: {text}"))
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` as milliseconds since the Unix epoch.
fn civil_ms(t: &str) -> Option<i64> {
    let n = |a: usize, b: usize| t.get(a..b)?.parse::<i64>().ok();
    let (y, mo, d) = (n(0, 4)?, n(5, 7)?, n(8, 10)?);
    let (h, mi, s, ms) = (n(11, 13)?, n(14, 16)?, n(17, 19)?, n(20, 23)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((((days * 24 + h) * 60 + mi) * 60 + s) * 1000 + ms)
}

/// Plays `moves` alternately from X as fast as the players can, each side
/// reading the other's `moved`.
async fn play_fast(pair: &mut Pair, moves: &[[usize; 2]]) {
    for (i, &[r, c]) in moves.iter().enumerate() {
        let (mover, other) = sides(pair, i);
        let own = mover.play(r, c).await;
        assert_eq!(own["seq"], i + 1, "{own}");
        other.recv_type("moved").await;
    }
}

#[tokio::test]
async fn running_out_of_time_draws_when_the_opponent_can_complete_no_line_and_loses_otherwise() {
    let server = TestServer::start(test_config()).await;
    let clock = json!({"initial_ms": 1_000, "increment_ms": 0});
    // Every line holds an X, and X is to move with one cell left: O can
    // complete nothing, so X's flag is a draw.
    let (mut pair, _) = timed_pair(&server, 3, 3, clock.clone()).await;
    play_fast(&mut pair, &[[0, 0], [1, 1], [0, 2], [0, 1], [2, 1], [1, 0], [1, 2], [2, 2]]).await;
    let over = pair.x.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(0), json!("timeout")), "{over}");
    assert_eq!((clocks(&over)[0], over["running"].clone()), (0, Value::Null), "{over}");
    // The same clock early in a game: O can still make a line, so X loses.
    let (mut pair, _) = timed_pair(&server, 3, 3, clock).await;
    play_fast(&mut pair, &[[0, 0], [1, 1]]).await;
    let over = pair.o.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(2), json!("timeout")), "{over}");
    // The counters are the process's: other tests here add to them too.
    let (_, metrics) = tictactoe_tests::http_get(server.addr, "/metrics").await;
    let count = |name: &str| -> u64 {
        let line = metrics.lines().find(|l| l.starts_with(name));
        line.and_then(|l| l.rsplit(' ').next()?.parse().ok()).unwrap_or(0)
    };
    assert!(count("ttt_flags_total{result=\"draw\"}") >= 1, "{metrics}");
    assert!(count("ttt_flags_total{result=\"loss\"}") >= 1, "{metrics}");
    assert!(count("ttt_games_by_time_control_total{speed=\"ultrabullet\"}") >= 2, "{metrics}");
}

#[tokio::test]
async fn on_15x15_five_in_a_row_a_flag_draws_once_every_run_of_five_holds_the_flaggers_mark() {
    let server = TestServer::start(test_config()).await;
    // X on every cell with (row + 2·col) % 5 == 0 meets every run of five in
    // a row, column and both diagonals without five of its own; O fills 45
    // of the other cells (never five in a row: X's cells split every run).
    let cells = |x: bool| {
        (0..15)
            .flat_map(move |r| (0..15).map(move |c| [r, c]))
            .filter(move |[r, c]| ((r + 2 * c) % 5 == 0) == x)
    };
    let xs: Vec<[usize; 2]> = cells(true).collect();
    let os: Vec<[usize; 2]> = cells(false).take(xs.len()).collect();
    assert_eq!(xs.len(), 45);
    let moves: Vec<[usize; 2]> = xs.iter().zip(&os).flat_map(|(&x, &o)| [x, o]).collect();
    // Time enough for 90 quick moves, little enough to wait for the flag.
    let clock = json!({"initial_ms": 4_000, "increment_ms": 0});
    let (mut pair, _) = timed_pair(&server, 15, 5, clock).await;
    play_fast(&mut pair, &moves).await;
    let over = pair.x.recv_type("game_over").await;
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(0), json!("timeout")), "{over}");
    assert_eq!(over["moves"].as_array().map(Vec::len), Some(90), "{over}");
}

#[tokio::test]
async fn a_lagging_player_is_credited_its_ping_round_trip_up_to_250_ms_a_move() {
    let config = Config { ping_interval_ms: 1_500, ..test_config() };
    let server = TestServer::start(config).await;
    let clock = json!({"initial_ms": 60_000, "increment_ms": 0});
    let (mut pair, _) = timed_pair(&server, 3, 3, clock).await;
    play_fast(&mut pair, &[[1, 1]]).await;
    // X's clock starts when the server takes O's move: after `asked`,
    // before `told`.
    let asked = Instant::now();
    pair.o.play(0, 0).await;
    pair.x.recv_type("moved").await;
    let told = Instant::now();
    // X answers a ping, then reads nothing for 2.4 s: the next ping, 1.5 s
    // on, is answered only when X reads again, a round trip of 0.9 s; the
    // one after that is 0.6 s off. (Reading at a random point of the
    // interval, a ping could come and be answered at once just before the
    // move, and the last round trip is what is credited.)
    pair.x.answer_next_ping().await;
    tokio::time::sleep(Duration::from_millis(2_400)).await;
    // Reading answers the ping (the pong goes out before the move).
    let nothing = tokio::time::timeout(Duration::from_millis(20), pair.x.next_json()).await;
    assert!(nothing.is_err(), "nothing but a ping to read: {nothing:?}");
    let sent = Instant::now();
    let own = pair.x.play(0, 1).await;
    let seen = Instant::now();
    // The server took X's move between `sent` and `seen`; the credit is
    // 250 ms, not the round trip.
    let (least, most) = (ms(sent - told), ms(seen - asked));
    let left = clocks(&own)[0];
    let (low, high) = (60_000 - most + 250 - 1, 60_000 - least + 250 + 1);
    assert!((low..=high).contains(&left), "X has {left} ms, not within {low}..={high}: {own}");
}

#[tokio::test]
async fn every_bad_clock_field_is_invalid_clock_and_changes_nothing() {
    let server = TestServer::start(test_config()).await;
    let mut c = server.client().await;
    c.send(json!({"type": "hello", "name": "tim"})).await;
    let bad = [
        (json!({}), "clock.initial_ms"),
        (json!({"increment_ms": 0}), "clock.initial_ms"),
        (json!({"initial_ms": 999, "increment_ms": 0}), "clock.initial_ms"),
        (json!({"initial_ms": 10_800_001u64, "increment_ms": 0}), "clock.initial_ms"),
        (json!({"initial_ms": "60000", "increment_ms": 0}), "clock.initial_ms"),
        (json!({"initial_ms": 60_000}), "clock.increment_ms"),
        (json!({"initial_ms": 60_000, "increment_ms": -1}), "clock.increment_ms"),
        (json!({"initial_ms": 60_000, "increment_ms": 180_001}), "clock.increment_ms"),
        (json!("3+2"), "clock must be"),
        (json!([60_000, 0]), "clock must be"),
    ];
    let kinds =
        [json!({"type": "quick_match"}), json!({"type": "create_room"}), json!({"type": "play_house"})];
    let mut id = 0;
    for kind in kinds.iter().chain([&json!({"type": "challenge", "name": "nobody"})]) {
        for (clock, field) in &bad {
            id += 1;
            let mut ask = kind.clone();
            ask["clock"] = clock.clone();
            ask["id"] = json!(id);
            c.send(ask).await;
            let refused = c.expect_error(ErrorCode::InvalidClock, Some(json!(id))).await;
            let text = refused["message"].as_str().unwrap_or_default();
            assert!(text.starts_with(field), "{kind} with {clock}: {text}");
        }
    }
    // Nothing changed: the connection is free, and a good clock opens a room.
    c.send(json!({"type": "create_room", "clock": {"initial_ms": 180_000, "increment_ms": 2_000}})).await;
    let created = c.recv_type("room_created").await;
    assert_eq!(created["clock"], json!({"initial_ms": 180_000, "increment_ms": 2_000}), "{created}");
}

#[tokio::test]
async fn quick_match_pairs_only_players_asking_the_same_clock() {
    let server = TestServer::start(test_config()).await;
    let three_two = json!({"initial_ms": 180_000, "increment_ms": 2_000});
    let asks = [
        json!({"type": "quick_match", "clock": three_two}),
        json!({"type": "quick_match", "clock": {"initial_ms": 180_000, "increment_ms": 0}}),
        json!({"type": "quick_match", "clock": {"initial_ms": 60_000, "increment_ms": 2_000}}),
        json!({"type": "quick_match"}),
        json!({"type": "quick_match", "clock": null}),
    ];
    let mut waiting = Vec::new();
    for (i, ask) in asks.iter().enumerate() {
        let mut c = server.client().await;
        c.send(ask.clone()).await;
        let queued = c.recv_type("queued").await;
        assert_eq!(queued["clock"], ask.get("clock").cloned().unwrap_or(Value::Null), "{queued}");
        waiting.push(c);
        // Only the last (no clock, like the one before it) finds a partner.
        if i == 4 {
            let [.., before, last] = &mut waiting[..] else { unreachable!() };
            let (a, b) = (before.recv_type("game_started").await, last.recv_type("game_started").await);
            assert_eq!((a["room"].clone(), a["clock"].clone()), (b["room"].clone(), Value::Null), "{a} {b}");
        }
    }
    let mut d = server.client().await;
    d.send(json!({"type": "quick_match", "clock": three_two})).await;
    let started = d.recv_type("game_started").await;
    assert_eq!(started["clock"], three_two, "{started}");
    let first = waiting[0].recv_any(&["game_started", "error"]).await;
    assert_eq!(first["room"], started["room"], "3+2 meets 3+2: {first}");
    // The other clocks wait on, unpaired.
    for c in &mut waiting[1..3] {
        let quiet = tokio::time::timeout(Duration::from_millis(100), c.next_json()).await;
        assert!(quiet.is_err(), "nothing for a clock nobody else asked: {quiet:?}");
    }
    // A spectator sees both clocks and whose runs.
    let mut watcher = server.client().await;
    watcher.send(json!({"type": "spectate", "room": started["room"]})).await;
    let state = watcher.recv_type("state").await;
    assert_eq!((state["clock"].clone(), state["clocks"].clone()), (three_two, json!([180_000, 180_000])));
    // X's first move runs on its 30 s, no clock yet.
    let first_move = state["clock_ms"].as_u64().unwrap_or_default();
    assert!(state["running"].is_null() && (20_000..=30_000).contains(&first_move), "{state}");
}
