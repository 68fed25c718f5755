//! Arena tournaments run to their end on the real `ttt-server` binary with
//! its SQLite store, played by bots over real sockets as independent
//! clients would play them: eight bots of different strengths for two
//! minutes (one berserk in every game, one pausing, one thinking slowly at
//! the end so that a game outlives the time), and four bots through a
//! SIGKILL of the server mid-tournament. Each time the standings the API
//! gives are recomputed from the games' records, and the games the bots
//! saw end are the games the tournament counts, each once.

use std::time::Duration;

use serde_json::json;
use tictactoe_protocol::tournament::{TournamentStatus, TournamentView};
use tictactoe_tests::process::ServerProcess;
use tictactoe_tests::{TempDir, http_get};

use tictactoe_tests::arena::check;
use tictactoe_tests::arena::{Event, Log, Plan, bot, now_ms};

/// Creates a 3×3 tournament on a 15 s + 0.5 s clock lasting `duration_ms`
/// and starting in `starts_in_ms`: its id, `starts_at` and `ends_at`.
async fn create(server: &ServerProcess, duration_ms: u64, starts_in_ms: u64) -> (String, i64, i64) {
    let mut organiser = server.client().await;
    let token = organiser.register("organiser", false).await;
    organiser.sign_in("organiser", &token).await;
    organiser
        .send(json!({"type": "tournament_create", "name": "Bot arena", "size": 3,
            "clock": {"initial_ms": 15_000, "increment_ms": 500},
            "duration_ms": duration_ms, "starts_in_ms": starts_in_ms}))
        .await;
    let t = organiser.recv_type("tournament").await;
    let id = t["id"].as_str().expect("an id").to_owned();
    let (starts_at, ends_at) =
        (t["starts_at"].as_i64().expect("starts_at"), t["ends_at"].as_i64().expect("ends_at"));
    assert_eq!(ends_at - starts_at, duration_ms as i64, "{t}");
    (id, starts_at, ends_at)
}

/// Runs each bot of `plans` in tournament `id` at `server` until its end;
/// their logs.
async fn run(server: &ServerProcess, plans: Vec<Plan>, id: &str, ends_at: i64) -> Vec<Log> {
    let bots: Vec<_> = plans
        .into_iter()
        .map(|p| tokio::spawn(bot::play(vec![server.url()], p, id.to_owned(), ends_at)))
        .collect();
    let mut logs = Vec::new();
    for b in bots {
        logs.push(b.await.expect("a bot plays to the end"));
    }
    logs
}

/// The view once the tournament is over, checked against its records and
/// the bots' logs (`crash`: the server was killed, see `check::games_seen`).
async fn checked(
    server: &ServerProcess,
    id: &str,
    logs: &[Log],
    crash: bool,
) -> (TournamentView, Vec<tictactoe_protocol::api::GameRecord>) {
    let view = check::view(server.addr, id).await;
    assert_eq!(view.summary.status, TournamentStatus::Finished);
    // A tournament whose time is up takes no one.
    let mut late = server.client().await;
    let token = late.register("latecomer", false).await;
    late.sign_in("latecomer", &token).await;
    late.send(json!({"type": "tournament_join", "id": id})).await;
    late.expect_error(tictactoe_protocol::ErrorCode::TournamentFinished, Some(json!(id))).await;
    let records = check::records(server.addr, &view).await;
    let ends_at = view.summary.ends_at;
    for r in &records {
        assert!(check::unix_ms(&r.started_at) <= ends_at, "a game started after the end: {r:?}");
    }
    check::games_seen(logs, &view, &records, crash);
    let names: Vec<&str> = logs.iter().map(|l| l.name.as_str()).collect();
    let mut ranked: Vec<&str> = view.standings.iter().map(|s| s.name.as_str()).collect();
    ranked.sort_unstable();
    let mut want = names.clone();
    want.sort_unstable();
    assert_eq!(ranked, want, "every player has a row");
    for log in logs {
        for (at, e) in &log.events {
            if let Event::Started { tournament } = e {
                assert_eq!(tournament.as_deref(), Some(id), "{}: game_started at {at}", log.name);
            }
        }
    }
    (view, records)
}

/// The rooms open at `server` (`ttt_rooms` in `/metrics`).
async fn rooms(server: &ServerProcess) -> u64 {
    let (_, metrics) = http_get(server.addr, "/metrics").await;
    let line = metrics.lines().find_map(|l| l.strip_prefix("ttt_rooms "));
    line.and_then(|v| v.trim().parse::<f64>().ok()).map_or(0, |v| v as u64)
}

#[tokio::test]
async fn eight_bots_play_a_two_minute_arena_whose_standings_are_its_records() {
    let dir = TempDir::new("arena-run");
    let db = dir.database("ttt.db").to_string();
    let server = ServerProcess::start(&["--database", &db]);
    let (id, starts_at, ends_at) = create(&server, 120_000, 3_000).await;
    let pause = (starts_at + 50_000, Duration::from_secs(5));
    let plans = vec![
        Plan { berserk: true, ..Plan::new("perfect-berserk", "perfect") },
        Plan::new("perfect", "perfect"),
        Plan::new("heuristic-1", "heuristic"),
        Plan { pause: Some(pause), ..Plan::new("heuristic-pause", "heuristic") },
        Plan::new("heuristic-2", "heuristic"),
        Plan { slow_from: Some(ends_at - 8_000), ..Plan::new("random-slow", "random") },
        Plan::new("random-1", "random"),
        Plan::new("random-2", "random"),
    ];
    let logs = run(&server, plans, &id, ends_at).await;
    let (view, records) = checked(&server, &id, &logs, false).await;

    // Every game of the berserk bot shows its berserk, and only its.
    for r in &records {
        for (seat, p) in r.players.iter().enumerate() {
            assert_eq!(r.berserk[seat], p.name == "perfect-berserk", "{}: {r:?}", p.name);
        }
    }
    let (bonuses, short_draws) = check::standings_match(&view, &records);
    assert!(bonuses > 0, "the berserk perfect bot won no game with its bonus: {:?}", view.standings);
    // A game outlived the time, and counts.
    let late: Vec<&str> =
        records.iter().filter(|r| check::unix_ms(&r.ended_at) > ends_at).map(|r| r.id.as_str()).collect();
    assert!(!late.is_empty(), "no game was still being played when the time was up");
    // The pause: left, back, and paired again after.
    let paused = logs.iter().find(|l| l.name == "heuristic-pause").expect("its log");
    let left = paused.events.iter().position(|(_, e)| *e == Event::Left).expect("it left");
    let back = paused.events[left..].iter().any(|(_, e)| *e == Event::Joined { playing: false });
    let played_after = paused.events[left..].iter().any(|(_, e)| matches!(e, Event::Started { .. }));
    assert!(back && played_after, "back {back}, played after {played_after}: {:?}", paused.events);
    for log in &logs {
        let refused: Vec<_> = log.events.iter().filter(|(_, e)| matches!(e, Event::Refused(_))).collect();
        assert!(refused.is_empty(), "{}: {refused:?}", log.name);
    }

    // Nobody waited long to be paired while another player was free.
    let waits = check::waits_with_someone_free(&logs, starts_at, ends_at);
    let q = |q| check::quantile(&waits, q);
    eprintln!(
        "pairing waits while another player was free ({} spells): p50 {} ms, p99 {} ms, max {} ms",
        waits.len(),
        q(0.5),
        q(0.99),
        q(1.0)
    );
    assert!(q(0.99) <= 3_000, "p99 wait {} ms: {waits:?}", q(0.99));
    let (status, metrics) = http_get(server.addr, "/metrics").await;
    assert_eq!(status, 200);
    for name in [
        "ttt_tournament_pairing_wait_seconds",
        "ttt_tournament_pairings_total",
        "ttt_tournaments_running",
        "ttt_tournament_players",
    ] {
        assert!(metrics.contains(name), "/metrics has no {name}");
    }
    eprintln!(
        "tournament {id}: {} games ({} after the end: {late:?}), {bonuses} berserk bonuses, {short_draws} short draws\n{}",
        view.games.len(),
        late.len(),
        check::table(&view.standings)
    );
}

#[tokio::test]
async fn an_arena_goes_on_through_a_sigkill_of_its_server_and_counts_each_game_once() {
    let dir = TempDir::new("arena-restart");
    let db = dir.database("ttt.db").to_string();
    let args = ["--database", db.as_str()];
    let server = ServerProcess::start(&args);
    let (id, starts_at, ends_at) = create(&server, 60_000, 2_000).await;
    let plans = vec![
        Plan::new("perfect", "perfect"),
        Plan::new("heuristic", "heuristic"),
        Plan::new("random-1", "random"),
        Plan::new("random-2", "random"),
    ];
    let addr = server.addr;
    let url = server.url();
    let bots: Vec<_> = plans
        .into_iter()
        .map(|p| tokio::spawn(bot::play(vec![url.clone()], p, id.clone(), ends_at)))
        .collect();

    // Mid-way, while both games are being played (their rooms are open),
    // past the last 100 ms that a crash may lose.
    tokio::time::sleep(Duration::from_millis((starts_at + 25_000 - now_ms()).max(0) as u64)).await;
    while rooms(&server).await < 2 {
        assert!(now_ms() < starts_at + 40_000, "the two games were never played at once");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let before_kill = check::view(addr, &id).await;
    server.signal("KILL");
    server.exits_within(Duration::from_secs(5)).await;
    let killed_at = now_ms();
    let server = ServerProcess::start_at(addr, &args);
    eprintln!("restarted on {addr}: {} games in progress restored", server.restored);

    let mut logs = Vec::new();
    for b in bots {
        logs.push(b.await.expect("a bot plays to the end"));
    }
    let (view, records) = checked(&server, &id, &logs, true).await;
    check::standings_match(&view, &records);
    // What was counted before the kill still is, in the same order.
    assert!(before_kill.games.iter().all(|g| view.games.contains(g)), "a game lost: {before_kill:?}");
    for row in &before_kill.standings {
        let now = view.standings.iter().find(|s| s.name == row.name).expect("still a row");
        assert!(now.results.starts_with(&row.results), "{row:?} became {now:?}");
    }
    let resumed = logs.iter().flat_map(|l| &l.events).filter(|(_, e)| *e == Event::Resumed).count();
    assert!(server.restored > 0, "no game was in progress at the kill");
    assert_eq!(resumed as u64, 2 * server.restored, "both players of each restored game resumed it");
    let before = records.iter().filter(|r| check::unix_ms(&r.ended_at) < killed_at).count();
    let after = records.iter().filter(|r| check::unix_ms(&r.started_at) > killed_at).count();
    assert!(before > 0 && after > 0, "games before the kill {before}, started after it {after}");
    for log in &logs {
        let refused: Vec<_> = log
            .events
            .iter()
            .filter(|(_, e)| matches!(e, Event::Refused(m) if m["code"] != "invalid_token"))
            .collect();
        assert!(refused.is_empty(), "{}: {refused:?}", log.name);
    }
    eprintln!(
        "tournament {id} through a SIGKILL: {} games ({before} ended before it, {after} started after)\n{}",
        view.games.len(),
        check::table(&view.standings)
    );
}
