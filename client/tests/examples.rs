//! The example bots (Python, JavaScript) and the engine bridge, each playing a
//! whole game against `ttt bot` on a real server; the results must agree.
//! Missing runtime packages (`websockets`, `ws`) are installed on first use.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tictactoe_server::Config;
use tictactoe_tests::{TestServer, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

/// Runs `cmd` to completion within `limit`; returns (success, stdout, stderr).
async fn run(cmd: &mut tokio::process::Command, limit: Duration) -> (bool, String, String) {
    let out = tokio::time::timeout(limit, cmd.stdin(Stdio::null()).kill_on_drop(true).output())
        .await
        .expect("finished in time")
        .expect("ran");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// `ttt bot --create` against `player`, which joins the room it prints.
/// Returns the bot's summary and the player's output.
async fn against_ttt_bot(
    server: &TestServer,
    player: impl FnOnce(&str) -> tokio::process::Command,
) -> (String, String) {
    let mut bot = tokio::process::Command::new(TTT)
        .args(["bot", "--server", &server.url(), "--create", "--strategy", "random"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("ttt bot");
    let mut lines =
        tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(bot.stdout.take().expect("stdout")));
    let first = lines.next_line().await.expect("read").expect("room line");
    let code = first.trim_start_matches("room: ").to_owned();
    let (ok, out, err) = run(&mut player(&code), Duration::from_secs(60)).await;
    assert!(ok, "player failed: {out}\n{err}");
    let summary = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("bot summary in time")
        .expect("read")
        .expect("a summary line");
    (summary, out)
}

/// Checks that the player's `result:` line and the bot's summary agree.
fn agree(player_out: &str, bot_summary: &str) {
    let result = player_out.lines().find(|l| l.starts_with("result: ")).expect("a result line");
    let expected = if result.starts_with("result: win") {
        "wins: 0, draws: 0, losses: 1"
    } else if result.starts_with("result: loss") {
        "wins: 1, draws: 0, losses: 0"
    } else {
        "wins: 0, draws: 1, losses: 0"
    };
    assert_eq!(bot_summary, expected, "{result}");
}

async fn fast_server() -> TestServer {
    TestServer::start(Config { max_messages_per_second: 0, ..test_config() }).await
}

/// Installs the Python bot's package if it is missing.
async fn python_ready() {
    tokio::task::spawn_blocking(tictactoe_tests::tools::python_websockets).await.expect("pip");
}

/// Installs the JavaScript bot's package if it is missing; returns its folder.
async fn js_ready() -> PathBuf {
    tictactoe_tests::tools::require("node");
    let dir = examples().join("bots/javascript");
    if !dir.join("node_modules/ws").exists() {
        tictactoe_tests::tools::require("npm");
        let (ok, out, err) = run(
            tokio::process::Command::new("npm").args(["ci", "--silent"]).current_dir(&dir),
            Duration::from_secs(300),
        )
        .await;
        assert!(ok, "npm ci: {out}{err}");
    }
    dir
}

#[tokio::test]
async fn python_example_bot_plays_a_game() {
    python_ready().await;
    let server = fast_server().await;
    let url = server.url();
    let script = examples().join("bots/python/bot.py");
    let (summary, out) = against_ttt_bot(&server, |code| {
        let mut c = tokio::process::Command::new("python3");
        c.arg(&script).args(["--server", &url, "--join", code]);
        c
    })
    .await;
    agree(&out, &summary);
    server.shutdown().await;
}

#[tokio::test]
async fn javascript_example_bot_plays_a_game() {
    let dir = js_ready().await;
    let server = fast_server().await;
    let url = server.url();
    let (summary, out) = against_ttt_bot(&server, |code| {
        let mut c = tokio::process::Command::new("node");
        c.arg(dir.join("bot.js")).args(["--server", &url, "--join", code]);
        c
    })
    .await;
    agree(&out, &summary);
    server.shutdown().await;
}

#[tokio::test]
async fn engine_bridge_plays_a_game_with_an_external_program() {
    tictactoe_tests::tools::require("python3");
    let server = fast_server().await;
    let url = server.url();
    let engine = format!("python3 {}", examples().join("engines/first_empty.py").display());
    let (summary, out) = against_ttt_bot(&server, |code| {
        let mut c = tokio::process::Command::new(TTT);
        c.args(["bot", "--server", &url, "--join", code, "--engine", &engine]);
        c
    })
    .await;
    // The bridge's own summary is the mirror image of the opponent's.
    let mirror = |s: &str| {
        let n: Vec<&str> = s.split(|c: char| !c.is_ascii_digit()).filter(|x| !x.is_empty()).collect();
        format!("wins: {}, draws: {}, losses: {}", n[2], n[1], n[0])
    };
    assert_eq!(out.trim(), mirror(&summary), "bridge: {out} bot: {summary}");
    // A missing engine is a clear error.
    let (ok, _, err) = run(
        tokio::process::Command::new(TTT).args(["bot", "--server", &url, "--engine", "exit 3"]),
        Duration::from_secs(20),
    )
    .await;
    assert!(!ok);
    assert!(err.contains("engine") && err.contains("exited at start"), "{err}");
    server.shutdown().await;
}

/// Runs an example bot for three quick-match games against a client that
/// never rematches: the bot must notice each `room_closed` and queue again.
async fn requeues_after_room_closed(mut bot: tokio::process::Command) {
    let server = fast_server().await;
    let url = server.url();
    bot.args(["--server", &url, "--games", "3"]);
    let player = tokio::spawn(async move { run(&mut bot, Duration::from_secs(60)).await });
    tictactoe_tests::requeuer(&server, 3).await;
    let (ok, out, err) = player.await.expect("bot task");
    assert!(ok, "bot failed: {out}\n{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("result: ")).count(), 3, "{out}");
    server.shutdown().await;
}

#[tokio::test]
async fn python_example_bot_queues_again_when_the_room_closes() {
    python_ready().await;
    let mut bot = tokio::process::Command::new("python3");
    bot.arg(examples().join("bots/python/bot.py"));
    requeues_after_room_closed(bot).await;
}

#[tokio::test]
async fn javascript_example_bot_queues_again_when_the_room_closes() {
    let mut bot = tokio::process::Command::new("node");
    bot.arg(js_ready().await.join("bot.js"));
    requeues_after_room_closed(bot).await;
}

#[tokio::test]
async fn a_slow_engine_does_not_stop_the_bridge_answering_pings() {
    tictactoe_tests::tools::require("python3");
    // Pinged every 200 ms and dropped after 400 ms of silence, while the
    // engine takes 700 ms per move: only a bridge that keeps reading lives.
    let config = Config { max_messages_per_second: 0, ping_interval_ms: 200, ..test_config() };
    let server = TestServer::start(config).await;
    let url = server.url();
    let script = examples().join("engines/first_empty.py");
    let engine = format!("while read -r l; do sleep 0.7; echo \"$l\"; done | python3 {}", script.display());
    let (summary, out) = against_ttt_bot(&server, |code| {
        let mut c = tokio::process::Command::new(TTT);
        c.args(["bot", "--server", &url, "--join", code, "--engine", &engine, "--think-ms", "5000"]);
        c
    })
    .await;
    let games =
        |s: &str| s.split(|c: char| !c.is_ascii_digit()).filter_map(|x| x.parse::<u32>().ok()).sum::<u32>();
    assert_eq!((games(&summary), games(&out)), (1, 1), "bridge: {out} bot: {summary}");
    server.shutdown().await;
}

/// An example bot (`bot`) and `ttt bot --strategy heuristic` given `args`
/// meet in quick match on a fresh server and agree on the result; returns
/// the example bot's output.
async fn meets_ttt_bot(mut bot: tokio::process::Command, args: &[&str]) -> String {
    let server = fast_server().await;
    let url = server.url();
    bot.args(["--server", &url]);
    let player = tokio::spawn(async move { run(&mut bot, Duration::from_secs(60)).await });
    let mut ttt = tokio::process::Command::new(TTT);
    ttt.args(["bot", "--server", &url, "--strategy", "heuristic"]).args(args);
    let (ok, summary, err) = run(&mut ttt, Duration::from_secs(60)).await;
    assert!(ok, "ttt bot: {summary}{err}");
    let (ok, out, err) = player.await.expect("bot task");
    assert!(ok, "example bot: {out}{err}");
    agree(&out, summary.trim());
    server.shutdown().await;
    out
}

/// An example bot and `ttt bot` meet on 9×9, four in a row.
async fn plays_connect_k(mut bot: tokio::process::Command) {
    let args = ["--size", "9", "--win", "4"];
    bot.args(args);
    meets_ttt_bot(bot, &args).await;
}

#[tokio::test]
async fn python_example_bot_plays_connect_k() {
    python_ready().await;
    let mut bot = tokio::process::Command::new("python3");
    bot.arg(examples().join("bots/python/bot.py"));
    plays_connect_k(bot).await;
}

#[tokio::test]
async fn javascript_example_bot_plays_connect_k() {
    let mut bot = tokio::process::Command::new("node");
    bot.arg(js_ready().await.join("bot.js"));
    plays_connect_k(bot).await;
}

/// An example bot that asks quick match for a 3 s Fischer clock (0.05+0),
/// with `--clock` or `TTT_CLOCK`, meets `ttt bot` asking the same (quick
/// match pairs only equal clocks); the game is played to a result on the
/// board, neither side flagging.
async fn plays_on_a_clock(bot: tokio::process::Command) {
    let out = meets_ttt_bot(bot, &["--clock", "0.05+0"]).await;
    assert!(out.contains(" at 0.05+0"), "the game is on the clock asked for: {out}");
    let result = out.lines().find(|l| l.starts_with("result: ")).expect("a result line");
    assert!(!result.contains("(timeout)"), "{result}");
}

#[tokio::test]
async fn python_example_bot_plays_on_a_clock() {
    python_ready().await;
    let mut bot = tokio::process::Command::new("python3");
    bot.arg(examples().join("bots/python/bot.py")).args(["--clock", "0.05+0"]);
    plays_on_a_clock(bot).await;
}

#[tokio::test]
async fn javascript_example_bot_plays_on_a_clock() {
    let mut bot = tokio::process::Command::new("node");
    bot.arg(js_ready().await.join("bot.js")).env("TTT_CLOCK", "0.05+0");
    plays_on_a_clock(bot).await;
}

/// Runs an example bot twice against `ttt bot` on a server that keeps
/// accounts: the first run registers a bot account and saves its token (for
/// the user alone), the second signs in with it; both games are the account's.
async fn registers_once_then_signs_in(
    bot: impl Fn(&str, &Path, &str) -> tokio::process::Command,
    name: &str,
) {
    let dir = tictactoe_tests::TempDir::new("example-accounts");
    let config = dir.path.join("config");
    let server = TestServer::start(Config {
        max_messages_per_second: 0,
        database: dir.database("ttt.db"),
        ..test_config()
    })
    .await;
    let (_, first) = against_ttt_bot(&server, |code| bot(code, &config, &server.url())).await;
    assert!(first.contains("registered the bot account"), "{first}");
    let file = config.join("bots").join(format!("{name}.token"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("the token file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    let (_, second) = against_ttt_bot(&server, |code| bot(code, &config, &server.url())).await;
    assert!(!second.contains("registered"), "{second}");
    let (status, profile) = tictactoe_tests::api(server.addr, &format!("/api/players/{name}")).await;
    assert_eq!((status, profile["bot"].clone()), (200, serde_json::json!(true)));
    let r = &profile["results"];
    let games = [&r["wins"], &r["draws"], &r["losses"]].iter().filter_map(|v| v.as_i64()).sum::<i64>();
    assert_eq!(games, 2, "{profile}");
    server.shutdown().await;
}

#[tokio::test]
async fn python_example_bot_registers_once_and_signs_in_after() {
    python_ready().await;
    let script = examples().join("bots/python/bot.py");
    registers_once_then_signs_in(
        |code, config, url| {
            let mut c = tokio::process::Command::new("python3");
            c.arg(&script)
                .args(["--server", url, "--name", "py-acct", "--join", code])
                .env("TTT_CONFIG_DIR", config);
            c.env_remove("TTT_TOKEN");
            c
        },
        "py-acct",
    )
    .await;
}

#[tokio::test]
async fn javascript_example_bot_registers_once_and_signs_in_after() {
    let dir = js_ready().await;
    registers_once_then_signs_in(
        |code, config, url| {
            let mut c = tokio::process::Command::new("node");
            c.arg(dir.join("bot.js"))
                .args(["--server", url, "--name", "js-acct", "--join", code])
                .env("TTT_CONFIG_DIR", config);
            c.env_remove("TTT_TOKEN");
            c
        },
        "js-acct",
    )
    .await;
}

/// `bot` joins a room the test's own client created; after the game's second
/// move the server restarts (graceful: 1012) on the same address and
/// database. The test's client resumes by hand; the bot must come back by
/// itself and finish the game. Returns the bot's stdout and stderr, and the
/// `game_over` the test's client saw (it is player `you`).
async fn outlives_a_restart(
    bot: impl FnOnce(&str, &str) -> tokio::process::Command,
) -> (String, String, Value, u64) {
    let dir = tictactoe_tests::TempDir::new("bot-restart");
    let config = Config { reconnect_grace_ms: 30_000, database: dir.database("ttt.db"), ..test_config() };
    let mut server = TestServer::start(config.clone()).await;
    let mut me = server.client().await;
    me.send(json!({"type": "create_room", "size": 3})).await;
    let code = me.recv_type("room_created").await["room"].as_str().expect("code").to_owned();
    let mut cmd = bot(&server.url(), &code);
    let player = tokio::spawn(async move { run(&mut cmd, Duration::from_secs(60)).await });
    let started = me.recv_type("game_started").await;
    let (you, token) = (started["you"].as_u64().expect("you"), started["resume_token"].clone());
    let mut board = [[false; 3]; 3];
    let mut turn = 1;
    let mut restarted = false;
    let over = loop {
        if turn == you {
            let (r, c) = (0..9).map(|i| (i / 3, i % 3)).find(|&(r, c)| !board[r][c]).expect("a free cell");
            me.send(json!({"type": "move", "row": r, "col": c})).await;
        }
        let msg = loop {
            let msg = me.recv_json().await;
            if ["moved", "game_over", "state"].contains(&msg["type"].as_str().unwrap_or_default()) {
                break msg;
            }
        };
        match msg["type"].as_str() {
            Some("game_over") => break msg,
            Some("moved") => {
                board[msg["row"].as_u64().unwrap_or(0) as usize][msg["col"].as_u64().unwrap_or(0) as usize] =
                    true;
                turn = msg["next"].as_u64().unwrap_or(0);
            }
            _ => {
                for m in msg["moves"].as_array().expect("moves") {
                    board[m[0].as_u64().unwrap_or(0) as usize][m[1].as_u64().unwrap_or(0) as usize] = true;
                }
                turn = msg["turn"].as_u64().unwrap_or(0);
            }
        }
        let played = board.iter().flatten().filter(|&&b| b).count();
        if played == 2 && !restarted {
            restarted = true;
            server = server.restart(config.clone()).await;
            me = server.client().await;
            me.send(json!({"type": "resume", "token": token})).await;
            // The `state` it answers with comes round the loop: no move until then.
            turn = 0;
        }
    };
    let (ok, out, err) = player.await.expect("bot task");
    assert!(ok, "bot failed: {out}\n{err}");
    server.shutdown().await;
    (out, err, over, you)
}

/// The `result:` line an example bot prints for `over`, seen from the other seat than `you`.
fn example_result(over: &Value, you: u64) -> &'static str {
    match over["winner"].as_u64() {
        Some(0) => "result: draw",
        Some(w) if w == you => "result: loss",
        _ => "result: win",
    }
}

#[tokio::test]
async fn python_example_bot_resumes_after_a_server_restart() {
    python_ready().await;
    let (out, err, over, you) = outlives_a_restart(|url, code| {
        let mut c = tokio::process::Command::new("python3");
        c.arg(examples().join("bots/python/bot.py")).args(["--server", url, "--join", code, "--guest"]);
        c
    })
    .await;
    assert!(out.contains("server restarting, reconnecting"), "{out}\n{err}");
    assert!(out.contains("back in room"), "{out}");
    assert!(out.contains(example_result(&over, you)), "{out}\n{over}");
}

#[tokio::test]
async fn javascript_example_bot_resumes_after_a_server_restart() {
    let dir = js_ready().await;
    let (out, err, over, you) = outlives_a_restart(|url, code| {
        let mut c = tokio::process::Command::new("node");
        c.arg(dir.join("bot.js")).args(["--server", url, "--join", code, "--guest", "1"]);
        c
    })
    .await;
    assert!(out.contains("server restarting, reconnecting"), "{out}\n{err}");
    assert!(out.contains("back in room"), "{out}");
    assert!(out.contains(example_result(&over, you)), "{out}\n{over}");
}

#[tokio::test]
async fn ttt_bot_resumes_after_a_server_restart() {
    let (out, err, over, you) = outlives_a_restart(|url, code| {
        let mut c = tokio::process::Command::new(TTT);
        c.args(["bot", "--server", url, "--join", code, "--strategy", "random"]);
        c
    })
    .await;
    assert!(err.contains("the server is restarting"), "{out}\n{err}");
    let expected = match over["winner"].as_u64() {
        Some(0) => "wins: 0, draws: 1, losses: 0",
        Some(w) if w == you => "wins: 0, draws: 0, losses: 1",
        _ => "wins: 1, draws: 0, losses: 0",
    };
    assert_eq!(out.trim(), expected, "{err}\n{over}");
}

/// `bot` waits in the quick-match queue when the server restarts (1012): a
/// restart keeps no queue, so it must queue again by itself once the server
/// is back, and play the opponent who arrives then. Returns its stdout and stderr.
async fn queues_again_after_a_restart(mut bot: tokio::process::Command) -> (String, String) {
    let dir = tictactoe_tests::TempDir::new("queue-restart");
    let config = Config { database: dir.database("ttt.db"), ..test_config() };
    let server = TestServer::start(config.clone()).await;
    bot.args(["--server", &server.url()]);
    let player = tokio::spawn(async move { run(&mut bot, Duration::from_secs(60)).await });
    while server.stats.connections() < 1 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Queued: a moment for its quick_match to reach the queue.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let server = server.restart(config).await;
    while server.stats.connections() < 1 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tictactoe_tests::requeuer(&server, 1).await;
    let (ok, out, err) = player.await.expect("bot task");
    assert!(ok, "the bot failed: {out}\n{err}");
    server.shutdown().await;
    (out, err)
}

#[tokio::test]
async fn ttt_bot_queues_again_after_a_server_restart() {
    let mut bot = tokio::process::Command::new(TTT);
    bot.args(["bot", "--strategy", "random"]);
    let (out, err) = queues_again_after_a_restart(bot).await;
    assert!(err.contains("the server is restarting"), "{err}");
    let games = out.split(|c: char| !c.is_ascii_digit()).filter_map(|x| x.parse::<u32>().ok()).sum::<u32>();
    assert_eq!(games, 1, "{out}");
}

#[tokio::test]
async fn python_example_bot_queues_again_after_a_server_restart() {
    python_ready().await;
    let mut bot = tokio::process::Command::new("python3");
    bot.arg(examples().join("bots/python/bot.py")).arg("--guest");
    let (out, err) = queues_again_after_a_restart(bot).await;
    assert!(out.contains("server restarting, reconnecting"), "{out}\n{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("result: ")).count(), 1, "{out}");
}

#[tokio::test]
async fn javascript_example_bot_queues_again_after_a_server_restart() {
    let mut bot = tokio::process::Command::new("node");
    bot.arg(js_ready().await.join("bot.js")).args(["--guest", "1"]);
    let (out, err) = queues_again_after_a_restart(bot).await;
    assert!(out.contains("server restarting, reconnecting"), "{out}\n{err}");
    assert!(out.contains("back in the queue"), "{out}");
    assert_eq!(out.lines().filter(|l| l.starts_with("result: ")).count(), 1, "{out}");
}

/// An example bot waiting for challenges (`args` turn the mode on): a 4×4
/// challenge is declined with its reason, then `ttt bot --challenge` plays
/// it two games (the bot agrees to the rematch) and both count them.
async fn accepts_challenges(mut bot: tokio::process::Command, args: &[&str]) {
    let server = fast_server().await;
    let url = server.url();
    bot.args(["--server", &url, "--name", "waiter", "--sizes", "3", "--games", "2"]).args(args);
    let player = tokio::spawn(async move { run(&mut bot, Duration::from_secs(60)).await });
    let mut me = server.client().await;
    me.send(json!({"type": "hello", "name": "prober"})).await;
    // Listed once it has said hello: challenge it on a board it declines.
    let mut declined = None;
    for _ in 0..400 {
        me.send(json!({"type": "challenge", "name": "waiter", "size": 4})).await;
        let reply = me.recv_json().await;
        if reply["type"] == "challenge_sent" {
            declined = Some(me.recv_type("challenge_ended").await);
            break;
        }
        assert_eq!(reply["code"], "player_not_found", "{reply}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let declined = declined.expect("the bot was listed");
    assert_eq!(declined["reason"], "declined", "{declined}");
    assert!(declined["message"].as_str().unwrap().contains("sizes 3"), "{declined}");
    let mut ttt = tokio::process::Command::new(TTT);
    ttt.args([
        "bot",
        "--server",
        &url,
        "--name",
        "cy",
        "--challenge",
        "waiter",
        "--strategy",
        "random",
        "--games",
        "2",
    ]);
    let (ok, summary, err) = run(&mut ttt, Duration::from_secs(60)).await;
    assert!(ok, "ttt bot: {summary}{err}");
    let (ok, out, err) = player.await.expect("bot task");
    assert!(ok, "example bot: {out}{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("result: ")).count(), 2, "{out}");
    assert!(out.contains("cy challenges on 3x3: accepted"), "{out}");
    server.shutdown().await;
}

#[tokio::test]
async fn python_example_bot_accepts_challenges() {
    python_ready().await;
    let mut bot = tokio::process::Command::new("python3");
    bot.arg(examples().join("bots/python/bot.py"));
    accepts_challenges(bot, &["--accept-challenges"]).await;
}

#[tokio::test]
async fn javascript_example_bot_accepts_challenges() {
    let mut bot = tokio::process::Command::new("node");
    bot.arg(js_ready().await.join("bot.js"));
    accepts_challenges(bot, &["--accept-challenges", "1"]).await;
}
