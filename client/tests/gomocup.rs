//! `ttt bot --engine-protocol gomocup` against a real server: Rapfi (a
//! Gomocup champion built from source, `../shared/engines/build-rapfi.sh`)
//! plays a whole 15×15 game that the judge confirms, resumes after a server
//! restart, and has a board it does not play declined in its own words; a
//! scripted brain (`tests/brains/scripted.py`) crashes, answers `ERROR`,
//! plays a taken cell, answers junk or goes silent — each loses that game
//! and the next is played by the brain started afresh — and is told the
//! whole board (`BOARD`) when its move was lost in a restart.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tictactoe_server::Config;
use tictactoe_tests::{Client, TempDir, TestServer, assert_judged_k, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

/// Rapfi's binary: `$TTT_RAPFI`, else `target/engines/pbrain-rapfi` in the
/// workspace; missing, the test fails at once saying how to build it.
fn rapfi() -> String {
    let path = std::env::var_os("TTT_RAPFI").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/engines/pbrain-rapfi")
    });
    assert!(
        path.is_file(),
        "{} is missing: build Rapfi with `../shared/engines/build-rapfi.sh target/engines` \
         (Debian packages cmake and g++)",
        path.display()
    );
    path.display().to_string()
}

/// The scripted brain in `mode`, keeping its lives' logs in `dir`.
fn scripted(mode: &str, dir: &TempDir, delay_ms: u64) -> String {
    tictactoe_tests::tools::require("python3");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/brains/scripted.py");
    format!("python3 {} {mode} {} {delay_ms}", script.display(), dir.path.display())
}

/// `ttt bot` with a Gomocup brain, its stdout and stderr piped.
fn gomocup_bot(url: &str, brain: &str, args: &[&str]) -> Child {
    Command::new(TTT)
        .args(["bot", "--server", url, "--engine", brain, "--engine-protocol", "gomocup"])
        .args(args)
        .env("HOME", std::env::temp_dir())
        .env_remove("TTT_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ttt bot")
}

/// The room code a `--create` bot prints first; its stdout is kept to read on.
fn room_of(bot: &mut Child) -> (String, BufReader<ChildStdout>) {
    let mut out = BufReader::new(bot.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("room line");
    (line.trim().strip_prefix("room: ").expect("room: CODE").to_owned(), out)
}

/// Waits (at most `secs`) for a bot to end; its tally line and its stderr.
async fn ended(mut bot: Child, out: BufReader<ChildStdout>, secs: u64) -> (String, String) {
    let waited = tokio::task::spawn_blocking(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        while bot.try_wait().expect("wait").is_none() {
            if std::time::Instant::now() > deadline {
                let _ = bot.kill();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut out.into_inner(), &mut rest);
        let output = bot.wait_with_output().expect("output");
        (output, rest)
    });
    let (output, rest): (Output, String) = waited.await.expect("bot");
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "ttt bot failed ({}): {rest}\n{err}", output.status);
    (rest.trim().to_owned(), err)
}

/// A free cell far from the centre, for an opponent that plays nothing useful.
fn junk_move(taken: &[[usize; 2]]) -> [usize; 2] {
    let corners = (0..15).flat_map(|r| [[r, 0], [r, 14], [0, r], [14, r]]);
    corners.into_iter().find(|c| !taken.contains(c)).expect("a free edge cell")
}

fn cell(msg: &Value) -> [usize; 2] {
    [msg["row"].as_u64().unwrap_or(99) as usize, msg["col"].as_u64().unwrap_or(99) as usize]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rapfi_plays_a_whole_game_against_the_heuristic_bot_and_the_judge_confirms_it() {
    let rapfi = rapfi();
    let dir = TempDir::new("gomocup-game");
    let server = TestServer::start(Config { database: dir.database("ttt.db"), ..test_config() }).await;
    let url = server.url();
    let args = ["--create", "--seat", "x", "--size", "15", "--clock", "1+0", "--think-ms", "150"];
    let mut bot = gomocup_bot(&url, &rapfi, &args);
    let (code, out) = room_of(&mut bot);
    let mut watcher = server.client().await;
    watcher.send(json!({"type": "spectate", "room": code})).await;
    let heuristic = Command::new(TTT)
        .args(["bot", "--server", &url, "--join", &code, "--strategy", "heuristic", "--name", "heu"])
        .env("HOME", std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("heuristic bot");
    let over = tokio::time::timeout(Duration::from_secs(90), watcher.recv_type("game_over")).await;
    let over = over.expect("the game ends within 90 s");
    let (tally, log) = ended(bot, out, 10).await;
    let _ = tokio::task::spawn_blocking(move || heuristic.wait_with_output()).await;
    // The judge replays the moves; X is Rapfi, named by its ABOUT.
    assert_judged_k(15, 5, &over);
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")), "{over}");
    assert_eq!(tally, "wins: 1, draws: 0, losses: 0", "{log}");
    assert!(log.contains("brain says: "), "the brain's MESSAGEs are logged: {log}");
    let path = format!("/api/games/{}", over["game_id"].as_str().expect("a game id"));
    let (status, body) = tictactoe_tests::http_get(server.addr, &path).await;
    let record: Value = serde_json::from_str(&body).expect("a record");
    assert_eq!((status, record["players"][0]["name"].clone()), (200, json!("Rapfi")), "{body}");
}
