//! The `ttt` binary against a real server started by the test: bots play each
//! other, `ttt play` is driven through pipes and in a real terminal (tmux).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tictactoe_server::Config;
use tictactoe_tests::pki::TestPki;
use tictactoe_tests::tmux::invite_code;
use tictactoe_tests::{TestServer, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

/// A fast server for bots: no rate limit, no timers.
async fn server() -> TestServer {
    TestServer::start(Config { max_messages_per_second: 0, ..test_config() }).await
}

/// Starts `ttt bot --create …` and returns it with the room code it printed.
fn creator(url: &str, args: &[&str]) -> (Child, String, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(TTT)
        .args(["bot", "--server", url, "--create"])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start ttt bot");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("room line");
    let code = line.trim().strip_prefix("room: ").expect("room: CODE").to_owned();
    (child, code, out)
}

/// Waits for a child with a deadline; returns its stdout's remaining text.
fn finish(mut child: Child, mut out: impl BufRead, limit: Duration) -> String {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "exit status {status}");
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut out, &mut text);
            return text;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("ttt did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn tally(summary: &str) -> (u32, u32, u32) {
    let nums: Vec<u32> = summary
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    match nums[..] {
        [w, d, l] => (w, d, l),
        _ => panic!("not a summary: {summary:?}"),
    }
}

fn joiner(url: &str, code: &str, args: &[&str]) -> std::process::Output {
    let child = Command::new(TTT)
        .args(["bot", "--server", url, "--join", code])
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start joiner");
    child.wait_with_output().expect("joiner output")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn perfect_against_perfect_draws_every_game() {
    let server = server().await;
    let url = server.url();
    let result = tokio::task::spawn_blocking(move || {
        let (a, code, out) = creator(&url, &["--games", "20"]);
        let b = joiner(&url, &code, &["--games", "20"]);
        let a = finish(a, out, Duration::from_secs(60));
        (a, String::from_utf8_lossy(&b.stdout).into_owned())
    })
    .await
    .expect("bots");
    assert_eq!(tally(&result.0), (0, 20, 0), "{}", result.0);
    assert_eq!(tally(&result.1), (0, 20, 0), "{}", result.1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_play_over_wss_trusting_a_private_ca() {
    let pki = TestPki::generate();
    let server = TestServer::start_tls(Config { max_messages_per_second: 0, ..test_config() }, &pki).await;
    let url = server.url();
    assert!(url.starts_with("wss://localhost:"), "{url}");
    let ca = pki.ca.to_string_lossy().into_owned();
    let (a, b) = tokio::task::spawn_blocking(move || {
        let (a, code, out) = creator(&url, &["--games", "3", "--ca-cert", &ca]);
        let b = joiner(&url, &code, &["--games", "3", "--ca-cert", &ca]);
        (finish(a, out, Duration::from_secs(60)), String::from_utf8_lossy(&b.stdout).into_owned())
    })
    .await
    .expect("bots");
    assert_eq!(tally(&a), (0, 3, 0), "{a}");
    assert_eq!(tally(&b), (0, 3, 0), "{b}");

    // Without --ca-cert the client does not trust the private CA, and says so.
    let out = Command::new(TTT).args(["bot", "--server", &server.url()]).output().expect("run ttt");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect") && err.to_lowercase().contains("certificate"), "{err}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn perfect_never_loses_to_random_in_200_games() {
    let server = server().await;
    let url = server.url();
    let (perfect, random) = tokio::task::spawn_blocking(move || {
        let (a, code, out) = creator(&url, &["--games", "200", "--strategy", "perfect"]);
        let b = joiner(&url, &code, &["--games", "200", "--strategy", "random"]);
        (finish(a, out, Duration::from_secs(120)), String::from_utf8_lossy(&b.stdout).into_owned())
    })
    .await
    .expect("bots");
    let (w, d, l) = tally(&perfect);
    assert_eq!((w + d + l, l), (200, 0), "{perfect}");
    assert!(w > 100, "perfect should beat random most of the time: {perfect}");
    assert_eq!(tally(&random), (l, d, w));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_mode_play_through_pipes_finishes_a_game() {
    let server = server().await;
    let url = server.url();
    let output = tokio::task::spawn_blocking(move || {
        let (bot, code, out) = creator(&url, &["--strategy", "random"]);
        let mut play = Command::new(TTT)
            .args(["play", "--server", &url, "--name", "piper", "--join", &code])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start ttt play");
        // Junk first, then every cell in turn: taken ones are refused and the
        // next line is read, so the game always ends.
        let mut stdin = play.stdin.take().expect("stdin");
        let mut script = String::from("zz\nd9\n");
        for cell in ["b2", "a1", "b1", "c1", "a2", "c2", "a3", "b3", "c3"] {
            script.push_str(cell);
            script.push('\n');
        }
        stdin.write_all(script.as_bytes()).expect("write moves");
        drop(stdin);
        let played = play.wait_with_output().expect("play output");
        finish(bot, out, Duration::from_secs(20));
        played
    })
    .await
    .expect("play");
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("   a b c"), "board drawn: {text}");
    assert!(text.contains("type a cell like b2"), "junk refused: {text}");
    assert!(text.contains("off the board"), "out of range refused: {text}");
    assert_eq!(text.matches("Result: ").count(), 1, "the result, once: {text}");
    assert!(text.contains("You are X (piper)") || text.contains("You are O (piper)"), "{text}");
    // Moves are told by mark and name, as the full screen names players.
    assert!(!text.contains("Player 1") && !text.contains("Player 2"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("X (") && l.contains(") played ")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("O (") && l.contains(") played ")), "{text}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_mode_says_so_and_fails_when_its_input_ends_mid_game() {
    let server = server().await;
    let url = server.url();
    let output = tokio::task::spawn_blocking(move || {
        let (bot, code, out) = creator(&url, &["--strategy", "random"]);
        let mut play = Command::new(TTT)
            .args(["play", "--server", &url, "--name", "quitter", "--join", &code])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start ttt play");
        play.stdin.take().expect("stdin").write_all(b"b2\n").expect("one move");
        let played = play.wait_with_output().expect("play output");
        finish(bot, out, Duration::from_secs(20));
        played
    })
    .await
    .expect("play");
    assert!(!output.status.success(), "leaving mid-game is not a success");
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("input ended mid-game"), "{err}");
    server.shutdown().await;
}

#[tokio::test]
async fn clear_errors_for_missing_servers_and_rooms() {
    let server = server().await;
    let url = server.url();
    for (args, want) in [
        (vec!["play", "--server", "ws://127.0.0.1:1"], "cannot reach the server"),
        (vec!["play", "--server", "http://example"], "not a server URL"),
        (vec!["bot", "--server", &url, "--join", "NOSUCHROOM"], "no room has the code"),
        (vec!["watch", "--server", &url, "NOSUCHROOM"], "no room has the code"),
        // Said as a person would, not as the rule's bounds ("from 3 to 3").
        (vec!["play", "--server", &url, "--win", "4"], "a 3×3 board is only won by 3 in a row"),
        (vec!["bot", "--server", &url, "--size", "500"], "this server plays boards from 2×2 to 100×100"),
    ] {
        let out = tokio::process::Command::new(TTT)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .await
            .expect("run ttt");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line, no backtrace: {err}");
    }
    server.shutdown().await;
}

#[test]
fn a_bad_clock_is_refused_before_connecting_saying_how_to_write_one() {
    for (args, want) in [
        (vec!["play", "--clock", "3"], "write minutes+seconds, as in 3+2"),
        (
            vec!["play", "--clock", "181+0"],
            "the base is 1/60 to 180 minutes and the increment 0 to 180 seconds",
        ),
        (vec!["challenge", "ann", "--clock", "3+x"], "write minutes+seconds"),
        (vec!["bot", "--clock", "0+0"], "the base is 1/60 to 180 minutes"),
        // A room's clock is its own: joining takes it.
        (vec!["play", "--join", "ABCD", "--clock", "3+2"], "cannot be used with"),
    ] {
        // No server at this address: the command line is refused before any connection.
        let out = Command::new(TTT)
            .args(&args)
            .args(["--server", "ws://127.0.0.1:1"])
            .stdin(Stdio::null())
            .output()
            .expect("run ttt");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: a usage error: {err}");
        assert!(err.contains("--clock") && err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("cannot reach the server"), "{args:?}: {err}");
    }
}

/// `ttt arena stats` with `args`: exit code, stdout, stderr.
fn arena_stats(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(TTT).args(["arena", "stats"]).args(args).output().expect("run ttt arena stats");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

// The counts and games of a real SPRT run that fastchess ended with this
// block (published in the Artemis chess engine's changelog; fastchess also
// prints the LLR's share of the bound, which compete.md's block leaves out).
#[test]
fn arena_stats_prints_the_block_fastchess_printed_for_the_same_counts() {
    let (code, out, err) =
        arena_stats(&["--ptnml", "0,2,165,51,2", "--wdl", "55,383,2", "--sprt", "elo0=0,elo1=10"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        out,
        "Results of PLAYER1 vs PLAYER2 (from counts):\n\
         Elo: 42.05 +/- 10.91, nElo: 126.40 +/- 32.46\n\
         LOS: 100.00 %, DrawRatio: 75.00 %, PairsRatio: 26.50\n\
         Games: 440, Wins: 55, Losses: 2, Draws: 383, Points: 246.5 (56.02 %)\n\
         Ptnml(0-2): [0, 2, 165, 51, 2], WL/DD Ratio: 0.00\n\
         LLR: 2.95 (-2.94, 2.94) [0.00, 10.00]\n\
         H1 was accepted\n"
    );
    // Counts alone: the WL+DD pairs are taken as two draws each; the
    // logistic model, no decision yet.
    let (code, out, err) =
        arena_stats(&["--ptnml", "3,18,40,30,9", "--sprt", "elo0=0,elo1=10", "--model", "logistic"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("Games: 200, Wins: 48, Losses: 24, Draws: 128, Points: 112.0 (56.00 %)\n"), "{out}");
    assert!(out.ends_with("LLR: 1.28 (-2.94, 2.94) [0.00, 10.00]\n"), "{out}");
    // Games that cannot come from those pairs, and a test that cannot be run, are refused in one line.
    let (code, out, err) = arena_stats(&["--ptnml", "0,2,165,51,2", "--wdl", "55,380,5"]);
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert!(err.starts_with("ttt: --wdl 55,380,5 cannot be the games of --ptnml 0,2,165,51,2"), "{err}");
    let (code, _, err) = arena_stats(&["--ptnml", "1,2,3,4,5", "--sprt", "elo0=5,elo1=0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("elo0 (5) must be less than elo1 (0)"), "{err}");
}

/// Runs tmux with `args`, returning stdout.
fn tmux(args: &[&str]) -> String {
    let out = Command::new(tictactoe_tests::tools::require("tmux")).args(args).output().expect("run tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_screen_play_in_a_real_terminal() {
    tictactoe_tests::tools::require("tmux");
    let server = server().await;
    let url = server.url();
    let screen = tokio::task::spawn_blocking(move || {
        let (bot, code, out) = creator(&url, &["--strategy", "random"]);
        let session = format!("ttt-test-{}", std::process::id());
        let cmd = format!("{TTT} play --server {url} --name tmuxer --join {code}; sleep 5");
        tmux(&["new-session", "-d", "-s", &session, "-x", "100", "-y", "30", &cmd]);
        let cells = ["b2", "a1", "b1", "c1", "a2", "c2", "a3", "b3", "c3"];
        let mut next = 0;
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut last = String::new();
        while Instant::now() < deadline {
            last = tmux(&["capture-pane", "-p", "-t", &session]);
            // The bot leaves after its one game: the room closes under us.
            if last.contains("Result:") && last.contains("has left") {
                break;
            }
            if last.contains("your turn") && next < cells.len() {
                tmux(&["send-keys", "-t", &session, cells[next], "Enter"]);
                next += 1;
            }
            std::thread::sleep(Duration::from_millis(150));
        }
        // A rematch is not possible any more, and the screen says so.
        tmux(&["send-keys", "-t", &session, "r"]);
        std::thread::sleep(Duration::from_millis(300));
        let refused = tmux(&["capture-pane", "-p", "-t", &session]);
        // Quit from the result screen; the terminal is restored.
        tmux(&["send-keys", "-t", &session, "q"]);
        std::thread::sleep(Duration::from_millis(300));
        let after = tmux(&["capture-pane", "-p", "-t", &session]);
        tmux(&["kill-session", "-t", &session]);
        finish(bot, out, Duration::from_secs(20));
        (last, refused, after)
    })
    .await
    .expect("tmux run");
    let (during, refused, after) = screen;
    assert!(during.contains("tictactoe — room"), "title: {during}");
    assert!(during.contains("a b c") && during.contains("1 "), "board with coordinates: {during}");
    assert!(during.contains("Result:"), "result on screen: {during}");
    assert!(during.contains("your opponent has left"), "room_closed shown: {during}");
    assert!(during.contains("n: new game   q: quit") && !during.contains("r: rematch"), "{during}");
    assert!(refused.contains("there is no rematch"), "r after the room closed: {refused}");
    // After q the alternate screen is gone and the result is printed plainly.
    assert!(!after.contains("n: new game"), "screen restored: {after}");
    assert!(after.contains("Result:"), "{after}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_requeues_when_its_opponent_never_rematches() {
    let server = server().await;
    let url = server.url();
    let bot = Command::new(TTT)
        .args(["bot", "--server", &url, "--games", "20", "--strategy", "random"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start ttt bot");
    tictactoe_tests::requeuer(&server, 20).await;
    let summary = tokio::task::spawn_blocking(move || {
        let mut bot = bot;
        let out = BufReader::new(bot.stdout.take().expect("stdout"));
        finish(bot, out, Duration::from_secs(20))
    })
    .await
    .expect("bot run");
    let (w, d, l) = tally(summary.lines().last().unwrap_or_default());
    assert_eq!(w + d + l, 20, "{summary}");
    server.shutdown().await;
}

/// `ttt watch` of `room` on `url`, once it is in the room (with the room's
/// two players, the server then holds three connections).
async fn watching(server: &TestServer, url: &str, room: &str) -> tokio::process::Child {
    let watcher = tokio::process::Command::new(TTT)
        .args(["watch", "--server", url, room])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start ttt watch");
    while server.stats.connections() < 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    watcher
}

/// What `ttt watch` printed, once it has exited (successfully, within 20 s)
/// as its room closed.
async fn watched(watcher: tokio::process::Child) -> String {
    let out = tokio::time::timeout(Duration::from_secs(20), watcher.wait_with_output())
        .await
        .expect("ttt watch exits when the room closes")
        .expect("ran");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_follows_rematches_and_exits_when_the_room_closes() {
    use serde_json::json;
    let server = server().await;
    let mut pair = tictactoe_tests::private_pair(&server, 3).await;
    let watcher = watching(&server, &server.url(), &pair.room).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let x_wins = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2]];
    tictactoe_tests::play_out(&mut pair, &x_wins).await;
    // A rematch: the watcher stays for it.
    pair.x.send(json!({"type": "rematch"})).await;
    pair.o.send(json!({"type": "rematch"})).await;
    pair.x.recv_type("game_started").await;
    pair.o.recv_type("game_started").await;
    pair.o.send(json!({"type": "leave"})).await;
    let text = watched(watcher).await;
    assert_eq!(text.lines().filter(|l| l.starts_with("Result:")).count(), 2, "both games' results: {text}");
    assert!(text.contains("the room has closed"), "{text}");
    server.shutdown().await;
}

#[test]
fn judge_with_a_win_length_agrees_with_the_reference_board() {
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng, rngs::StdRng};
    use tictactoe_protocol::Status;
    use tictactoe_protocol::oracle::Board;
    let mut rng = StdRng::seed_from_u64(19);
    let mut verdicts = std::collections::BTreeSet::new();
    for size in 3..=15usize {
        for win in 3..=size {
            // A random game, stopped at a random point (sometimes before its end).
            let mut cells: Vec<[usize; 2]> = (0..size * size).map(|i| [i / size, i % size]).collect();
            cells.shuffle(&mut rng);
            let stop = if rng.random_bool(0.3) { rng.random_range(0..cells.len()) } else { cells.len() };
            let mut board = Board::new(size, win);
            let mut moves = Vec::new();
            for &[r, c] in cells.iter().take(stop) {
                if board.status().is_over() {
                    break;
                }
                board.play(r, c).expect("a legal move");
                moves.push([r, c]);
            }
            let want = match board.status() {
                Status::Won { winner, .. } => {
                    if winner.number() == 1 {
                        "A"
                    } else {
                        "B"
                    }
                }
                Status::Draw => "Draw",
                Status::InProgress { .. } => "Pending",
            };
            let out = Command::new(TTT)
                .args(["judge", "--size", &size.to_string(), "--win", &win.to_string()])
                .arg(serde_json::to_string(&moves).expect("json"))
                .output()
                .expect("ttt judge");
            assert!(out.status.success(), "{size}/{win}: {}", String::from_utf8_lossy(&out.stderr));
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), want, "{size}/{win} {moves:?}");
            verdicts.insert(want);
        }
    }
    assert!(verdicts.len() >= 3, "the games reach several verdicts: {verdicts:?}");
    // A win length the size does not allow is a clear error.
    let out =
        Command::new(TTT).args(["judge", "--size", "5", "--win", "2", "[]"]).output().expect("ttt judge");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("win length 2"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_tells_the_friend_the_exact_command() {
    let server = server().await;
    let url = server.url();
    let text = tokio::task::spawn_blocking(move || {
        let mut host = Command::new(TTT)
            .args(["play", "--server", &url, "--name", "host", "--create"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start ttt play --create");
        let mut out = BufReader::new(host.stdout.take().expect("stdout"));
        let mut lines = Vec::new();
        for _ in 0..3 {
            let mut line = String::new();
            out.read_line(&mut line).expect("a line");
            lines.push(line);
        }
        let _ = host.kill();
        let _ = host.wait();
        (lines.concat(), url)
    })
    .await
    .expect("host");
    let (text, url) = text;
    let code =
        text.lines().find_map(|l| l.strip_prefix("Room code: ")).expect("a room code").trim().to_owned();
    assert!(
        // The command as this `ttt` was started (here by its full path), not a bare `ttt`.
        text.contains(&format!("Your friend joins with: {TTT} play --join {code} --server {url}")),
        "{text}"
    );
    // And the room's web page, for a friend without ttt.
    let web = format!("http://{}/r/{code}", url.trim_start_matches("ws://").trim_end_matches('/'));
    assert!(text.contains(&format!("or opens in a browser: {web}\n")), "{text}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_game_restores_the_terminal() {
    tictactoe_tests::tools::require("tmux");
    let server = server().await;
    let url = server.url();
    let (during, after) = tokio::task::spawn_blocking(move || {
        let (bot, code, out) = creator(&url, &["--strategy", "random"]);
        let session = format!("ttt-term-{}", std::process::id());
        let name = format!("term{}", std::process::id());
        let cmd = format!("{TTT} play --server {url} --name {name} --join {code}; echo SHELL-BACK; sleep 5");
        tmux(&["new-session", "-d", "-s", &session, "-x", "100", "-y", "30", &cmd]);
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut during = String::new();
        while Instant::now() < deadline && !during.contains("tictactoe — room") {
            std::thread::sleep(Duration::from_millis(100));
            during = tmux(&["capture-pane", "-p", "-t", &session]);
        }
        let _ = Command::new("pkill").args(["-TERM", "-f", &format!("^{TTT} play .*{name}")]).status();
        std::thread::sleep(Duration::from_millis(500));
        let after = tmux(&["capture-pane", "-p", "-t", &session]);
        tmux(&["kill-session", "-t", &session]);
        let mut bot = bot;
        let _ = bot.kill();
        let _ = bot.wait();
        drop(out);
        (during, after)
    })
    .await
    .expect("tmux run");
    assert!(during.contains("tictactoe — room"), "the game was on screen: {during}");
    assert!(after.contains("SHELL-BACK"), "ttt exited: {after}");
    assert!(!after.contains("tictactoe — room"), "the alternate screen is gone: {after}");
    server.shutdown().await;
}

/// Runs `cmd` (a `ttt play … --create`) in a new tmux session of `size`
/// (columns, rows) and joins the room it shows from a protocol client on
/// `url`: returns that client and its `game_started`.
async fn opponent_of(
    session: &str,
    size: (u16, u16),
    cmd: &str,
    url: &str,
) -> (tictactoe_tests::Client, serde_json::Value) {
    let (cols, rows) = (size.0.to_string(), size.1.to_string());
    tmux(&["new-session", "-d", "-s", session, "-x", &cols, "-y", &rows, cmd]);
    // The invite may wrap (this program's path can be long), and the pane
    // may be caught mid-draw: read it joined, up to the `--server` after the code.
    let invite = shows(session, " --server ", 10).await;
    let code = invite_code(&invite)
        .or_else(|| invite_code(&tmux(&["capture-pane", "-p", "-J", "-t", session])))
        .unwrap_or_else(|| panic!("an invite with a code:\n{invite}"));
    let mut them = tictactoe_tests::Client::connect(url).await;
    them.send(serde_json::json!({"type": "join_room", "room": code})).await;
    let started = them.recv_type("game_started").await;
    (them, started)
}

/// Polls the tmux pane until it shows `needle` (returns the screen) or `secs` pass (panics with it).
async fn shows(session: &str, needle: &str, secs: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = tmux(&["capture-pane", "-p", "-t", session]);
        if screen.contains(needle) {
            return screen;
        }
        // Read again, lines the terminal wrapped joined: what shows it.
        let joined = tmux(&["capture-pane", "-p", "-J", "-t", session]);
        if joined.contains(needle) {
            return joined;
        }
        if Instant::now() > deadline {
            tmux(&["kill-session", "-t", session]);
            panic!("the screen never showed {needle:?}:\n{screen}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_connection_says_reconnecting_refuses_moves_then_tells_the_result_and_offers_a_new_game() {
    tictactoe_tests::tools::require("tmux");
    let server = TestServer::start(Config { reconnect_grace_ms: 2_000, ..test_config() }).await;
    let proxy = tictactoe_tests::Proxy::start(server.addr).await;
    let url = format!("ws://{}/", proxy.addr);
    let session = format!("ttt-cut-{}", std::process::id());
    let cmd = format!("{TTT} play --server {url} --name cutter --create; sleep 10");
    // The opponent, straight to the server.
    let (mut them, started) = opponent_of(&session, (100, 30), &cmd, &server.url()).await;
    if started["you"] == 1 {
        them.play(1, 1).await;
    }
    shows(&session, "your turn", 10).await;
    // Each side moves once, so that the drop decides the game (before that it
    // would be aborted).
    // It is the player's turn again when the connection is cut.
    tmux(&["send-keys", "-t", &session, "a1", "Enter"]);
    them.recv_type("moved").await;
    let (reply, row, mark) = if started["you"] == 1 { ((2, 2), "3", "X") } else { ((1, 1), "2", "O") };
    them.play(reply.0, reply.1).await;
    // The reply drawn (not a stale "your turn" from before a1).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let screen = tmux(&["capture-pane", "-p", "-t", &session]);
        if screen.lines().any(|l| l.starts_with(row) && l.contains(mark)) && screen.contains("your turn") {
            break;
        }
        assert!(Instant::now() < deadline, "the reply was never drawn:\n{screen}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    proxy.cut();
    shows(&session, "RECONNECTING", 10).await;
    // A move typed meanwhile is not sent, and the player is told; no crash.
    tmux(&["send-keys", "-t", &session, "a3", "Enter"]);
    shows(&session, "not connected (reconnecting)", 10).await;
    // The grace runs out: the opponent wins by disconnect, and the player is told in words.
    let over = them.recv_type("game_over").await;
    assert_eq!(over["reason"], "disconnect");
    let told = shows(&session, "Game over while you were away", 15).await;
    assert!(told.contains("n: new game"), "{told}");

    // `n` connects again and looks for a new opponent.
    proxy.restore();
    tmux(&["send-keys", "-t", &session, "n"]);
    shows(&session, "waiting for an opponent", 10).await;
    tmux(&["kill-session", "-t", &session]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_ttt_play_started_again_takes_its_seat_back_from_disk() {
    tictactoe_tests::tools::require("tmux");
    let server = TestServer::start(Config { reconnect_grace_ms: 20_000, ..test_config() }).await;
    let dir = tictactoe_tests::TempDir::new("kept-seat");
    let url = server.url();
    let cmd =
        format!("TTT_STATE_DIR={} exec {TTT} play --server {url} --name keeper --create", dir.path.display());
    let first = format!("ttt-kept-a-{}", std::process::id());
    let (mut them, started) = opponent_of(&first, (100, 30), &cmd, &url).await;
    if started["you"] == 1 {
        them.play(1, 1).await;
    }
    shows(&first, "your turn", 10).await;
    tmux(&["send-keys", "-t", &first, "a1", "Enter"]);
    let moved = them.recv_type("moved").await;
    assert_eq!((moved["row"].clone(), moved["col"].clone()), (serde_json::json!(0), serde_json::json!(0)));
    let seats = dir.path.join("seats");
    assert_eq!(std::fs::read_dir(&seats).map(|d| d.count()).unwrap_or(0), 1, "the seat is kept on disk");

    // Killed outright: no leave, no resign. Its session stays (a dead
    // pane): were it the tmux server's last, the server would exit and race
    // the next session's start ("server exited unexpectedly").
    tmux(&["set-option", "-t", &first, "remain-on-exit", "on"]);
    let pid = tmux(&["display-message", "-p", "-t", &first, "#{pane_pid}"]);
    let killed = std::process::Command::new("kill").args(["-9", pid.trim()]).status().expect("kill");
    assert!(killed.success());
    them.recv_type("opponent_disconnected").await;

    // The same command again takes the seat back, and says so.
    let second = format!("ttt-kept-b-{}", std::process::id());
    tmux(&["new-session", "-d", "-s", &second, "-x", "100", "-y", "30", &cmd]);
    let back = shows(&second, "took your seat back", 10).await;
    assert!(back.contains('X') || back.contains('O'), "the board as it was:\n{back}");
    them.recv_type("opponent_reconnected").await;
    // The game goes on from where it was: the opponent's move, then ours again.
    them.play(2, 2).await;
    shows(&second, "your turn", 10).await;
    tmux(&["kill-session", "-t", &second]);
    let _ = tmux(&["kill-session", "-t", &first]);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_30_by_30_board_in_80_by_24_follows_the_cursor() {
    tictactoe_tests::tools::require("tmux");
    let server = TestServer::start(Config { max_size: 30, ..test_config() }).await;
    let url = server.url();
    let session = format!("ttt-big-{}", std::process::id());
    let cmd = format!("NO_COLOR=1 exec {TTT} play --server {url} --name big --create --size 30");
    let (mut them, started) = opponent_of(&session, (80, 24), &cmd, &url).await;
    if started["you"] == 1 {
        them.play(0, 0).await;
    }
    let start = shows(&session, "your turn", 10).await;
    assert!(start.contains("of 30×30"), "the title says which part is shown:\n{start}");
    // The cursor starts in the middle (p16); walk it to the far corner.
    for _ in 0..14 {
        tmux(&["send-keys", "-t", &session, "Down", "Right"]);
    }
    let corner = shows(&session, "–30, columns", 10).await;
    let labels: Vec<&str> = corner.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(labels.contains(&"30") && !labels.contains(&"1"), "row 30 shown, row 1 scrolled away:\n{corner}");
    assert!(corner.contains("[.]"), "the cursor is on screen:\n{corner}");
    tmux(&["send-keys", "-t", &session, "Enter"]);
    let moved = them.recv_type("moved").await;
    assert_eq!((moved["row"].clone(), moved["col"].clone()), (serde_json::json!(29), serde_json::json!(29)));
    tmux(&["kill-session", "-t", &session]);
    server.shutdown().await;
}

/// The seconds the status line shows on the clock, if any.
fn clock_shown(screen: &str) -> Option<String> {
    let at = screen.find("s (clock paused)")?;
    let head = &screen[..at];
    Some(head.rsplit(' ').next()?.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monochrome_markers_a_paused_clock_and_a_confirmed_resign() {
    tictactoe_tests::tools::require("tmux");
    let server =
        TestServer::start(Config { turn_timeout_ms: 60_000, reconnect_grace_ms: 20_000, ..test_config() })
            .await;
    let url = server.url();
    let session = format!("ttt-mono-{}", std::process::id());
    let cmd = format!("NO_COLOR=1 {TTT} play --server {url} --name mono --create; echo SHELL-BACK; sleep 10");
    let (mut them, started) = opponent_of(&session, (100, 30), &cmd, &url).await;
    if started["you"] == 2 {
        shows(&session, "your turn", 10).await;
        tmux(&["send-keys", "-t", &session, "b2", "Enter"]);
        them.recv_type("moved").await;
    }
    them.play(0, 0).await;
    // Without colour the last move is marked `+`, the cursor `[ ]`. (Waiting
    // for "your turn" alone can catch the screen before it drew the move.)
    shows(&session, "1 +", 10).await;
    let screen = shows(&session, "your turn", 10).await;
    assert!(screen.contains("1 +"), "a1 marked on our turn:\n{screen}");
    assert!(screen.contains("[.]") || screen.contains("[X]"), "the cursor marked:\n{screen}");

    // The opponent drops: the clock stops, as the server's does.
    drop(them);
    let paused = shows(&session, "(clock paused)", 10).await;
    let before = clock_shown(&paused).expect("a clock");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let later = tmux(&["capture-pane", "-p", "-t", &session]);
    assert_eq!(clock_shown(&later), Some(before), "the clock does not run while paused:\n{later}");

    // Leaving asks first; `n` keeps playing, `y` resigns.
    tmux(&["send-keys", "-t", &session, "Escape"]);
    shows(&session, "Resign this game? y/n", 10).await;
    tmux(&["send-keys", "-t", &session, "n"]);
    shows(&session, "not resigned; play on", 10).await;
    assert_eq!(server.stats.games_finished.load(std::sync::atomic::Ordering::Relaxed), 0);
    tmux(&["send-keys", "-t", &session, "Escape"]);
    shows(&session, "Resign this game? y/n", 10).await;
    tmux(&["send-keys", "-t", &session, "y"]);
    for _ in 0..100 {
        if server.stats.games_finished.load(std::sync::atomic::Ordering::Relaxed) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(server.stats.games_finished.load(std::sync::atomic::Ordering::Relaxed), 1, "resigned");
    // Leaving the game says how it ended.
    let left = shows(&session, "SHELL-BACK", 10).await;
    assert!(left.contains("Result: You lost — you resigned"), "{left}");
    let _ = tmux(&["kill-session", "-t", &session]);
    server.shutdown().await;
}

/// The server restarts mid-game (graceful: 1012): `ttt play` says "server
/// restarting, reconnecting…" instead of an error, takes its seat back once
/// the server is up again and plays on; `ttt watch` watches the same room
/// again and sees the game to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restart_mid_game_is_a_pause_for_play_and_watch() {
    tictactoe_tests::tools::require("tmux");
    let dir = tictactoe_tests::TempDir::new("cli-restart");
    let config = Config { reconnect_grace_ms: 30_000, database: dir.database("ttt.db"), ..test_config() };
    let server = TestServer::start(config.clone()).await;
    let url = server.url();
    let session = format!("ttt-restart-{}", std::process::id());
    let cmd = format!(
        "TTT_STATE_DIR={} exec {TTT} play --server {url} --name phoenix --create --seat x",
        dir.path.display()
    );
    let (mut them, started) = opponent_of(&session, (100, 30), &cmd, &url).await;
    let token = started["resume_token"].clone();
    let code = started["room"].as_str().expect("a room").to_owned();
    let watcher = watching(&server, &url, &code).await;
    shows(&session, "your turn", 10).await;
    tmux(&["send-keys", "-t", &session, "a1", "Enter"]);
    them.recv_type("moved").await;
    them.play(1, 1).await;
    shows(&session, "your turn", 10).await;

    let addr = server.addr;
    server.shutdown().await;
    shows(&session, "server restarting, reconnecting", 10).await;
    let server = TestServer::start_at(config, addr).await;
    let mut them = tictactoe_tests::Client::connect(&url).await;
    them.send(serde_json::json!({"type": "resume", "token": token})).await;
    assert_eq!(them.recv_type("state").await["moves"], serde_json::json!([[0, 0], [1, 1]]));
    // Back: the status line says the turn again, and nothing of a restart.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let screen = tmux(&["capture-pane", "-p", "-t", &session]);
        if screen.contains("your turn") && !screen.to_lowercase().contains("restarting") {
            break;
        }
        assert!(Instant::now() < deadline, "never back in the game:\n{screen}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The watcher is back in the room too (it retries on its own backoff).
    while server.stats.connections() < 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // X plays on: a1 b1 c1 is the top row.
    tmux(&["send-keys", "-t", &session, "b1", "Enter"]);
    them.recv_type("moved").await;
    them.play(2, 2).await;
    shows(&session, "your turn", 10).await;
    tmux(&["send-keys", "-t", &session, "c1", "Enter"]);
    let over = them.recv_type("game_over").await;
    assert_eq!(
        (over["winner"].clone(), over["reason"].clone()),
        (serde_json::json!(1), serde_json::json!("line"))
    );
    shows(&session, "You won", 10).await;
    them.send(serde_json::json!({"type": "leave"})).await;
    let text = watched(watcher).await;
    assert!(text.lines().any(|l| l.starts_with("Result:")), "the watcher saw the end: {text}");
    tmux(&["kill-session", "-t", &session]);
    server.shutdown().await;
}

/// On a clock of 3 s each (0.05+0), a five-in-a-row game on 15×15 lasts
/// dozens of moves: `ttt bot` spends its time by the clock (a second a move,
/// its default without one, would flag by the fourth) and wins on the board
/// against a player who takes the first empty cell at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_on_a_three_second_clock_wins_on_the_board_not_on_time() {
    use serde_json::json;
    let server = server().await;
    let url = server.url();
    let mut bot = tokio::process::Command::new(TTT)
        .args(["bot", "--server", &url, "--create", "--seat", "o", "--size", "15", "--win", "5"])
        .args(["--clock", "0.05+0", "--strategy", "perfect"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start ttt bot");
    let mut out = tokio::io::BufReader::new(bot.stdout.take().expect("stdout"));
    let mut line = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut out, &mut line).await.expect("room line");
    let code = line.trim().strip_prefix("room: ").expect("room: CODE").to_owned();
    let mut cy = tictactoe_tests::Client::connect(&url).await;
    cy.send(json!({"type": "hello", "name": "cy"})).await;
    cy.send(json!({"type": "join_room", "room": code})).await;
    let started = cy.recv_type("game_started").await;
    assert_eq!(started["clock"], json!({"initial_ms": 3_000, "increment_ms": 0}), "{started}");
    assert_eq!(started["you"], 1, "the bot asked for O: cy is X");
    let mut taken = std::collections::HashSet::new();
    let first_empty = |taken: &mut std::collections::HashSet<(u64, u64)>| {
        let cell = (0..15 * 15).map(|i| (i / 15, i % 15)).find(|c| !taken.contains(c)).expect("a free cell");
        taken.insert(cell);
        cell
    };
    let (r, c) = first_empty(&mut taken);
    cy.send(json!({"type": "move", "row": r, "col": c})).await;
    let over = loop {
        let msg = cy.recv_any(&["moved", "game_over"]).await;
        if msg["type"] == "game_over" {
            break msg;
        }
        taken.insert((msg["row"].as_u64().expect("row"), msg["col"].as_u64().expect("col")));
        if msg["next"] == 1 {
            let (r, c) = first_empty(&mut taken);
            cy.send(json!({"type": "move", "row": r, "col": c})).await;
        }
    };
    assert_eq!((&over["winner"], &over["reason"]), (&json!(2), &json!("line")), "{over}");
    let moves = over["moves"].as_array().map_or(0, Vec::len);
    assert!(moves >= 9, "a game long enough to need the clock spent well: {moves} moves");
    let left = over["clocks"][1].as_u64().expect("the bot's time left");
    assert!(left > 0 && left < 3_000, "it used its clock and kept some: {left} ms");
    let done = tokio::time::timeout(Duration::from_secs(20), bot.wait_with_output()).await;
    let done = done.expect("the bot ends after its game").expect("bot output");
    let said = String::from_utf8_lossy(&done.stderr);
    assert!(said.contains("playing at 0.05+0"), "it echoes the time control: {said}");
    let mut tally = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut out, &mut tally).await.expect("the tally");
    assert!(tally.contains("wins: 1, draws: 0, losses: 0"), "{tally}");
    server.shutdown().await;
}
