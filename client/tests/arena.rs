//! `ttt arena` as a bot author runs it: the real `ttt` and `ttt-server`
//! binaries, game pairs in organised rooms, the statistics it prints, the
//! results it writes, and the records the server keeps of every game.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tictactoe_tests::TempDir;
use tictactoe_tests::process::{ServerProcess, server_bin};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

/// A finished `ttt arena` run.
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
    /// The `--results` lines.
    games: Vec<Value>,
}

/// Runs `ttt arena ARGS --results FILE` to its end within `limit`. The
/// `ttt-server` binary is built first (a match without `--server` starts it).
async fn arena(args: &[&str], limit: Duration) -> Run {
    // One match at a time: each runs its players as processes, and a brain
    // on a clock plays as it should only with the cores to itself.
    static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    let _turn = ONE_AT_A_TIME.lock().await;
    let bin = tokio::task::spawn_blocking(|| server_bin().to_owned()).await.expect("build ttt-server");
    let dir = TempDir::new("arena");
    let results = dir.path.join("results.jsonl");
    let path = std::env::join_paths(
        bin.parent()
            .into_iter()
            .map(Path::to_owned)
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    let run = tokio::process::Command::new(TTT)
        .arg("arena")
        .args(args)
        .arg("--results")
        .arg(&results)
        .env("PATH", path)
        .env_remove("TTT_JOIN")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(limit, run).await.expect("the match ends in time").expect("run ttt arena");
    let text = std::fs::read_to_string(&results).unwrap_or_default();
    let games = text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    let said = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Run { ok: out.status.success(), stdout: said(&out.stdout), stderr: said(&out.stderr), games }
}

/// The counts of the last `Ptnml(0-2): [...]` line printed.
fn ptnml(stdout: &str) -> [u64; 5] {
    let line = stdout.lines().rev().find(|l| l.starts_with("Ptnml(0-2): [")).expect("a Ptnml line");
    let inside = &line[line.find('[').expect("[") + 1..line.find(']').expect("]")];
    let counts: Vec<u64> = inside.split(',').map(|n| n.trim().parse().expect("a count")).collect();
    counts.try_into().expect("five counts")
}

/// Player 1's points in each game of `games` (pairs in order: X, then O).
fn player1_points(games: &[Value]) -> Vec<f64> {
    games
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let x_points = match g["result"].as_str() {
                Some("1-0") => 1.0,
                Some("0-1") => 0.0,
                Some("1/2-1/2") => 0.5,
                other => panic!("not a result: {other:?}"),
            };
            if i % 2 == 0 { x_points } else { 1.0 - x_points }
        })
        .collect()
}

#[tokio::test]
async fn perfect_against_random_stops_when_the_sprt_accepts_h1() {
    let run = arena(
        &["builtin:perfect", "builtin:random", "--size", "3", "--sprt", "elo0=0,elo1=10", "--pairs", "300"],
        Duration::from_secs(240),
    )
    .await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("H1 was accepted"), "{}", run.stdout);
    assert!(run.stdout.contains("Results of perfect vs random (3x3 win 3"), "{}", run.stdout);
    let counts = ptnml(&run.stdout);
    let pairs: u64 = counts.iter().sum();
    // An SPRT for 10 normalized Elo takes some 80 pairs here, not all 300.
    assert!((1..300).contains(&pairs), "the test decided before the pairs ran out: {counts:?}");
    // Perfect play never loses a game: no pair below a draw.
    assert_eq!(counts[..2], [0, 0], "{}", run.stdout);
    assert_eq!(run.games.len() as u64, 2 * pairs, "every game of the counted pairs is in the results");
    for (i, game) in run.games.iter().enumerate() {
        let (x, o) = if i % 2 == 0 {
            ("builtin:perfect", "builtin:random")
        } else {
            ("builtin:random", "builtin:perfect")
        };
        assert_eq!((game["x"].as_str(), game["o"].as_str()), (Some(x), Some(o)), "{game}");
        assert!(game["game_id"].is_string(), "the private server keeps records: {game}");
    }
    assert!(player1_points(&run.games).iter().all(|&p| p >= 0.5));
}

#[tokio::test]
async fn perfect_against_perfect_draws_every_game() {
    let run = arena(
        &["builtin:perfect", "builtin:perfect", "--size", "3", "--pairs", "3"],
        Duration::from_secs(120),
    )
    .await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(ptnml(&run.stdout), [0, 0, 3, 0, 0], "{}", run.stdout);
    assert!(run.stdout.contains("Results of perfect-1 vs perfect-2"), "{}", run.stdout);
    assert_eq!(run.games.len(), 6);
    assert!(run.games.iter().all(|g| g["result"] == "1/2-1/2"), "{:?}", run.games);
}

#[tokio::test]
async fn every_game_is_a_record_from_its_opening_as_the_file_gives_it() {
    let dir = TempDir::new("arena-records");
    let database = format!("sqlite:{}", dir.path.join("games.db").display());
    let server = tokio::task::spawn_blocking(move || {
        ServerProcess::start(&["--database", &database, "--max-messages-per-second", "0"])
    })
    .await
    .expect("start ttt-server");
    // Gomocup's format: x (column) then y (row), offsets from the centre.
    let openings = dir.path.join("openings.txt");
    std::fs::write(&openings, "0,0\n-1,-1, 1,0\n").expect("write the openings");
    let url = server.url();
    let run = arena(
        &[
            "--server",
            &url,
            "builtin:heuristic",
            "builtin:random",
            "--openings",
            openings.to_str().expect("a path"),
            "--pairs",
            "3",
            "--concurrency",
            "2",
        ],
        Duration::from_secs(120),
    )
    .await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("openings.txt)"), "{}", run.stdout);
    assert_eq!(run.games.len(), 6, "{:?}", run.games);
    // The file's openings in order, cycling: centre; then (0,0) and (1,2).
    let centre: Value = serde_json::json!([[1, 1]]);
    let two: Value = serde_json::json!([[0, 0], [1, 2]]);
    let mut seen = Vec::new();
    for game in &run.games {
        let opening = &game["opening"];
        assert!(*opening == centre || *opening == two, "{game}");
        seen.push(opening.clone());
        let id = game["game_id"].as_str().expect("a record id");
        let record = tictactoe_tests::record_of(server.addr, id).await;
        let moves = record["moves"].as_array().expect("moves");
        let first: Vec<&Value> = moves.iter().take(opening.as_array().expect("moves").len()).collect();
        assert_eq!(first, opening.as_array().expect("moves").iter().collect::<Vec<_>>(), "{record}");
        assert_eq!(record["opening"].as_u64(), opening.as_array().map(|a| a.len() as u64), "{record}");
        assert_eq!(record["host"], "arena", "{record}");
    }
    // Pairs may finish out of order with --concurrency 2; each opening is a pair's both games.
    assert_eq!(seen.iter().filter(|o| **o == centre).count(), 4, "pairs 1 and 3 from the first opening");
    assert_eq!(seen.iter().filter(|o| **o == two).count(), 2, "pair 2 from the second");
}

#[tokio::test]
async fn the_python_example_bot_plays_its_games_as_a_bot_player() {
    tokio::task::spawn_blocking(tictactoe_tests::tools::python_websockets).await.expect("pip");
    let bot = examples().join("bots/python/bot.py");
    let player = format!("bot:python3 {}", bot.display());
    let run =
        arena(&[&player, "builtin:random", "--size", "3", "--pairs", "2"], Duration::from_secs(120)).await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("Games: 4,"), "{}", run.stdout);
    assert!(run.games.iter().all(|g| g["reason"] != "disconnect"), "{:?}", run.games);
    assert_eq!(run.games[0]["x"].as_str(), Some(player.as_str()));
}

#[tokio::test]
async fn a_crashing_engine_loses_its_games_and_the_match_goes_on() {
    let dir = TempDir::new("arena-crash");
    // Plays the first free cell once, then dies on the next position.
    let script = dir.path.join("crash.py");
    std::fs::write(
        &script,
        "import sys\nasked = 0\nfor line in sys.stdin:\n    if not line.startswith('position'):\n        break\n    \
         asked += 1\n    if asked == 2:\n        sys.exit(3)\n    rows = line.split()[3].split('/')\n    \
         r = next(i for i, row in enumerate(rows) if '.' in row)\n    print(r, rows[r].index('.'), flush=True)\n",
    )
    .expect("write the engine");
    tictactoe_tests::tools::require("python3");
    let engine = format!("engine:python3 {}", script.display());
    let run =
        arena(&["builtin:random", &engine, "--size", "3", "--pairs", "2"], Duration::from_secs(120)).await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(ptnml(&run.stdout), [0, 0, 0, 0, 2], "the engine lost all four games: {}", run.stdout);
    assert_eq!(run.games.len(), 4);
    assert!(player1_points(&run.games).iter().all(|&p| p == 1.0), "{:?}", run.games);
}

#[tokio::test]
async fn a_player_that_cannot_start_stops_the_match_with_its_error() {
    let run = arena(
        &["builtin:random", "engine:/nonexistent/engine", "--size", "3", "--pairs", "2"],
        Duration::from_secs(60),
    )
    .await;
    assert!(!run.ok, "{}", run.stdout);
    assert!(run.stderr.contains("engine:/nonexistent/engine failed to start"), "{}", run.stderr);
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

#[tokio::test]
async fn rapfi_beats_the_heuristic_on_fifteen_by_fifteen() {
    let player = format!("gomocup:{}", tictactoe_tests::tools::rapfi());
    let run = arena(
        &[&player, "builtin:heuristic", "--size", "15", "--win", "5", "--clock", "5+0.05", "--pairs", "3"],
        Duration::from_secs(240),
    )
    .await;
    assert!(run.ok, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("Results of pbrain-rapfi vs heuristic (15x15 win 5, 5+0.05"),
        "{}",
        run.stdout
    );
    assert_eq!(run.games.len(), 6, "{:?}", run.games);
    // A Gomocup champion against a one-ply heuristic wins nearly every
    // pair: Rapfi now and then answers the bridge "ERROR Unknown command:
    // TIMEOUT_TURN" and resigns a game, so one pair of three may be lost.
    let counts = ptnml(&run.stdout);
    assert!(counts[3] + counts[4] >= 2, "pairs won: {counts:?} {:?}", run.games);
}
