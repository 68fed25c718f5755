//! `ttt bot --engine-protocol gomocup` against a real server: Rapfi (a
//! Gomocup champion built from source, `../shared/engines/build-rapfi.sh`)
//! plays a whole 15×15 game that the judge confirms, resumes after a server
//! restart, and has a board it does not play declined in its own words; a
//! scripted brain (`tests/brains/scripted.py`) crashes, answers `ERROR`,
//! plays a taken cell, answers junk or goes silent — each loses that game
//! and the next is played by the brain started afresh — and is told the
//! whole board (`BOARD`) when its move was lost in a restart.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tictactoe_server::Config;
use tictactoe_tests::{Client, TempDir, TestServer, assert_judged_k, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

/// One game of these at a time: a brain searches with every core it sees,
/// and brains of tests run side by side starve each other past their time
/// on a small machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

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

/// A `--create` bot with `brain` and `args`, and a client seated against it:
/// the bot, its stdout, the client and its `game_started`.
async fn seated(
    server: &TestServer,
    url: &str,
    brain: &str,
    args: &[&str],
) -> (Child, BufReader<ChildStdout>, Client, Value) {
    let mut bot = gomocup_bot(url, brain, args);
    let (code, out) = room_of(&mut bot);
    let mut them = server.client().await;
    them.send(json!({"type": "join_room", "room": code})).await;
    let started = them.recv_type("game_started").await;
    (bot, out, them, started)
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
    let _alone = ONE_AT_A_TIME.lock().await;
    let rapfi = tictactoe_tests::tools::rapfi();
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

/// Plays one game as `them` from its `game_started` (junk moves whenever it
/// is their turn), resigning once the bot has made `resign_after` moves;
/// the `game_over`.
async fn opponent(them: &mut Client, started: &Value, resign_after: usize) -> Value {
    let me = started["you"].clone();
    let mut taken: Vec<[usize; 2]> = serde_json::from_value(started["moves"].clone()).unwrap_or_default();
    let mut theirs = 0;
    // X moves when an even number of moves is on the board (an opening included).
    let mut to_move = (taken.len() % 2 == 0) == (me == 1);
    loop {
        if to_move {
            them.send(json!({"type": "move", "row": junk_move(&taken)[0], "col": junk_move(&taken)[1]}))
                .await;
            to_move = false;
        }
        let msg =
            tokio::time::timeout(Duration::from_secs(30), them.recv_json()).await.expect("the game goes on");
        match msg["type"].as_str() {
            Some("moved") => {
                taken.push(cell(&msg));
                if msg["player"] != me {
                    theirs += 1;
                    if theirs >= resign_after {
                        them.send(json!({"type": "resign"})).await;
                    }
                }
                to_move = msg["next"] == me && theirs < resign_after;
            }
            Some("state") => {
                taken = serde_json::from_value(msg["moves"].clone()).expect("moves");
                to_move = msg["turn"] == me;
            }
            Some("game_over") => return msg,
            _ => {}
        }
    }
}

/// The lines a scripted brain's `life` was sent.
fn life_log(dir: &TempDir, life: u32) -> String {
    std::fs::read_to_string(dir.path.join(format!("life-{life}.log"))).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_brain_that_fails_loses_that_game_and_a_restarted_brain_plays_the_next() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let server = TestServer::start(test_config()).await;
    let url = server.url();
    let cases = [
        ("crash", "engine exited"),
        ("error", "brain answered \"ERROR cannot think\""),
        ("illegal", "a taken cell"),
        ("garbage", "brain answered \"hello there\", not a move \"x,y\""),
        ("silent", "did not answer within"),
    ];
    for (mode, said) in cases {
        let dir = TempDir::new(&format!("gomocup-{mode}"));
        let brain = scripted(mode, &dir, 0);
        let args = ["--create", "--seat", "x", "--size", "15", "--games", "2", "--think-ms", "500"];
        let (bot, out, mut them, started) = seated(&server, &url, &brain, &args).await;
        assert_eq!(started["players"][0]["name"], format!("scripted {mode}"), "ABOUT names the bot");
        // Its first move is good, its second fails: that game is lost, by resigning.
        let over = opponent(&mut them, &started, usize::MAX).await;
        assert_eq!(
            (over["winner"].clone(), over["reason"].clone()),
            (json!(2), json!("resign")),
            "{mode}: {over}"
        );
        assert_eq!(over["moves"].as_array().map(Vec::len), Some(2), "{mode}: {over}");
        // The rematch: a new process plays it (and moves), then the opponent resigns.
        them.send(json!({"type": "rematch"})).await;
        let started = them.recv_type("game_started").await;
        let over = opponent(&mut them, &started, 1).await;
        assert_eq!(over["reason"], "resign", "{mode}: {over}");
        assert_ne!(over["winner"], started["you"], "{mode}: the restarted brain won game 2");
        let (tally, log) = ended(bot, out, 20).await;
        assert_eq!(tally, "wins: 1, draws: 0, losses: 1", "{mode}: {log}");
        assert!(log.contains("the brain lost this game") && log.contains(said), "{mode}: {log}");
        let second = life_log(&dir, 2);
        assert!(second.starts_with("START 15\n"), "{mode}: the second life starts the game: {second}");
        assert!(second.contains("INFO rule 0") && second.contains("INFO timeout_turn"), "{mode}: {second}");
        assert!(second.trim_end().ends_with("END"), "{mode}: the session ends with END: {second}");
    }
}

/// A server that keeps its games across a restart, and its configuration.
async fn lasting_server(dir: &TempDir) -> (TestServer, Config) {
    let config = Config { database: dir.database("ttt.db"), reconnect_grace_ms: 30_000, ..test_config() };
    (TestServer::start(config.clone()).await, config)
}

/// Restarts the server on its address (graceful, as a deploy does) after
/// `down_for`; a player `token` takes its seat back, and gets the room's `state`.
async fn restarted(
    server: TestServer,
    config: Config,
    down_for: Duration,
    token: &Value,
) -> (TestServer, Client, Value) {
    let addr = server.addr;
    server.shutdown().await;
    tokio::time::sleep(down_for).await;
    let server = TestServer::start_at(config, addr).await;
    let mut them = server.client().await;
    them.send(json!({"type": "resume", "token": token})).await;
    let state = them.recv_type("state").await;
    (server, them, state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rapfi_takes_its_game_back_after_a_server_restart_and_wins_it() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let rapfi = tictactoe_tests::tools::rapfi();
    let dir = TempDir::new("gomocup-resume");
    let (server, config) = lasting_server(&dir).await;
    let args = ["--create", "--seat", "x", "--size", "15", "--think-ms", "300"];
    let (bot, out, mut them, started) = seated(&server, &server.url(), &rapfi, &args).await;
    // Three moves each, then the server restarts mid-game.
    let mut taken = Vec::new();
    while taken.len() < 6 {
        let moved = them.recv_type("moved").await;
        taken.push(cell(&moved));
        let own = them.play(junk_move(&taken)[0], junk_move(&taken)[1]).await;
        taken.push(cell(&own));
    }
    let token = &started["resume_token"];
    let (_server, mut them, state) = restarted(server, config, Duration::ZERO, token).await;
    assert_eq!(state["moves"].as_array().map(Vec::len), Some(6), "{state}");
    let over = opponent(&mut them, &state, usize::MAX).await;
    assert_judged_k(15, 5, &over);
    assert_eq!((over["winner"].clone(), over["reason"].clone()), (json!(1), json!("line")), "{over}");
    assert!(over["moves"].as_array().map_or(0, Vec::len) > 7, "played on after the restart: {over}");
    let (tally, log) = ended(bot, out, 30).await;
    assert_eq!(tally, "wins: 1, draws: 0, losses: 0", "{log}");
    assert!(log.contains("reconnecting"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_lost_in_a_restart_is_asked_again_with_the_whole_board() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = TempDir::new("gomocup-board");
    let (server, config) = lasting_server(&dir).await;
    // A brain that takes 1.5 s over each move: the restart comes while it thinks.
    let brain = scripted("ok", &dir, 1_500);
    let args = ["--create", "--seat", "x", "--size", "15", "--think-ms", "8000"];
    let (bot, out, mut them, started) = seated(&server, &server.url(), &brain, &args).await;
    assert_eq!(cell(&them.recv_type("moved").await), [7, 7]);
    // Row 2, column 0: x,y = 0,2.
    them.play(2, 0).await;
    // The server goes away while the brain thinks, and stays away past its answer.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let token = &started["resume_token"];
    let (_server, mut them, state) = restarted(server, config, Duration::from_secs(2), token).await;
    assert_eq!(state["moves"], json!([[7, 7], [2, 0]]), "the brain's answer came while the server was away");
    // Asked again: the whole board, in move order, its own stones 1.
    let moved = tokio::time::timeout(Duration::from_secs(15), them.recv_type("moved")).await.expect("a move");
    assert_eq!(moved["player"], 1);
    let log = life_log(&dir, 1);
    assert!(log.contains("BOARD\n7,7,1\n0,2,2\nDONE\n"), "{log}");
    assert!(log.contains("TURN 0,2\n"), "first asked with TURN: {log}");
    them.send(json!({"type": "resign"})).await;
    let (tally, err) = ended(bot, out, 20).await;
    assert_eq!(tally, "wins: 1, draws: 0, losses: 0", "{err}");
    assert!(!dir.path.join("life-2.log").exists(), "one brain process throughout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boards_the_brain_does_not_play_are_declined_in_its_words() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let rapfi = tictactoe_tests::tools::rapfi();
    let server = TestServer::start(test_config()).await;
    let url = server.url();
    let mut bot = gomocup_bot(&url, &rapfi, &["--accept-challenges"]);
    let mut c = server.client().await;
    c.send(json!({"type": "hello", "name": "cy"})).await;
    // Named by its ABOUT: Rapfi.
    let mut asked = json!({"type": "challenge", "name": "Rapfi", "size": 40, "win": 5});
    for (size, win, said) in
        [(40, 5, "Unsupported board size!"), (15, 4, "this bot plays five in a row, not 4")]
    {
        asked["size"] = json!(size);
        asked["win"] = json!(win);
        let mut tries = 0;
        let ended = loop {
            c.send(asked.clone()).await;
            let got = c.recv_any(&["challenge_ended", "error"]).await;
            if got["type"] == "challenge_ended" {
                break got;
            }
            // Not online yet.
            tries += 1;
            assert!(tries < 100, "Rapfi never online: {got}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(ended["message"].as_str().unwrap_or_default().contains(said), "{ended}");
    }
    let _ = bot.kill();
    let _ = bot.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rapfi_is_given_an_organised_rooms_opening_by_board_and_plays_both_colours() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let rapfi = tictactoe_tests::tools::rapfi();
    let dir = TempDir::new("gomocup-opening");
    let server = TestServer::start(Config { database: dir.database("ttt.db"), ..test_config() }).await;
    let mut host = server.client().await;
    host.send(json!({"type": "hello", "name": "organiser"})).await;
    let opening = json!([[7, 7], [7, 8], [8, 6]]);
    host.send(json!({"type": "create_room", "host": true, "size": 15, "win": 5, "players": ["Rapfi", "opp"],
        "opening": opening, "games": 2}))
        .await;
    let code = host.recv_type("room_created").await["room"].as_str().expect("a room").to_owned();
    // What the brain is sent, kept by a tee in front of it.
    let seen = dir.path.join("sent.log");
    let brain = format!("tee -a {} | {rapfi}", seen.display());
    let mut bot = gomocup_bot(&server.url(), &brain, &["--join", &code, "--games", "2", "--think-ms", "300"]);
    let out = BufReader::new(bot.stdout.take().expect("stdout"));
    let mut them = server.client().await;
    them.send(json!({"type": "hello", "name": "opp"})).await;
    them.send(json!({"type": "join_room", "room": code})).await;
    for game in 0..2 {
        let started = them.recv_type("game_started").await;
        assert_eq!((started["opening"].clone(), started["moves"].clone()), (json!(3), opening.clone()));
        assert_eq!(started["you"], 2 - game, "Rapfi is X, then O");
        let over = opponent(&mut them, &started, usize::MAX).await;
        assert_judged_k(15, 5, &over);
        assert_eq!(Value::Array(over["moves"].as_array().expect("moves")[..3].to_vec()), opening);
        assert_eq!(over["reason"], "line", "{over}");
        assert_ne!(over["winner"], started["you"], "Rapfi wins game {game}: {over}");
        if game == 0 {
            them.send(json!({"type": "rematch"})).await;
        }
    }
    let (tally, log) = ended(bot, out, 30).await;
    assert_eq!(tally, "wins: 2, draws: 0, losses: 0", "{log}");
    let sent = std::fs::read_to_string(&seen).expect("the brain's input");
    // Game 1: X after the opening and O's first move (x,y = col,row; own stones 1).
    assert!(sent.contains("START 15\n"), "{sent}");
    assert!(sent.contains("BOARD\n7,7,1\n8,7,2\n6,8,1\n"), "{sent}");
    // Game 2: O right after the opening, once the brain has restarted.
    assert!(sent.contains("RESTART\n"), "{sent}");
    assert!(sent.contains("BOARD\n7,7,2\n8,7,1\n6,8,2\nDONE\n"), "{sent}");
}
