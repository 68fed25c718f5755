//! Arena tournaments from the terminal, the `ttt` binary against a real
//! server with a real SQLite file: `ttt tournament create` and `list`, two
//! `ttt bot --tournament` playing a one-minute tournament to its end while
//! `ttt tournament watch` follows it, and a person in a real terminal
//! (tmux) joining with `ttt tournament join` and playing a bot with keys.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tictactoe_server::Config;
use tictactoe_tests::tmux::Session;
use tictactoe_tests::{TempDir, TestServer, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

/// `ttt ARGS` with `home` as its HOME (its accounts there) and none of the
/// machine's own ttt settings.
fn ttt(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(TTT);
    cmd.args(args).env("HOME", home).stdin(Stdio::null());
    for var in [
        "TTT_TOKEN",
        "TTT_CONFIG_DIR",
        "TTT_STATE_DIR",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "TTT_TOURNAMENT",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `ttt ARGS` to its end: stdout, failing on a bad exit.
fn run(home: &Path, args: &[&str]) -> String {
    let out = ttt(home, args).output().expect("run ttt");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "ttt {args:?} failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

/// Starts `ttt ARGS` with its stdout and stderr piped.
fn spawn(home: &Path, args: &[&str]) -> Child {
    ttt(home, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start ttt")
}

/// Waits for `child` until `limit`, killing it after; its output.
fn wait(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

/// The output's stdout, failing with all of it unless the exit was clean.
fn clean_exit(what: &str, out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{what}: {}\n{text}{}", out.status, String::from_utf8_lossy(&out.stderr));
    text
}

/// A server keeping accounts and records in `dir`, and `ann`, `robo` and
/// `zed` registered in `home` (robo and zed bot accounts).
async fn server_with_accounts(dir: &TempDir, home: &Path) -> TestServer {
    let db = dir.database("ttt.db");
    let server =
        TestServer::start(Config { max_messages_per_second: 0, database: db, ..test_config() }).await;
    let url = server.url();
    let home = home.to_owned();
    tokio::task::spawn_blocking(move || {
        run(&home, &["register", "ann", "--server", &url]);
        run(&home, &["register", "robo", "--bot", "--server", &url]);
        run(&home, &["register", "zed", "--bot", "--server", &url]);
    })
    .await
    .expect("register");
    server
}

/// Creates a one-minute tournament on `url` as ann with `clock`: its id.
fn create(home: &Path, url: &str, clock: &str) -> String {
    let said = run(
        home,
        &["tournament", "create", "Quick arena", "--clock", clock, "--minutes", "1", "--server", url],
    );
    let id = said
        .strip_prefix("tournament ")
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("no id in {said:?}"))
        .to_owned();
    assert!(said.contains("Quick arena — 3×3, ") && said.contains("running, ends in 1m 00s"), "{said}");
    assert!(said.contains(&format!("join it with: {TTT} tournament join {id} --server {url}")), "{said}");
    id
}

/// The row of `name` in a standings table: its rank and score.
fn row(table: &str, name: &str) -> (u32, u32) {
    let line = table.lines().find(|l| l.split_whitespace().nth(1) == Some(name)).unwrap_or_else(|| {
        panic!("no row of {name} in:\n{table}");
    });
    let words: Vec<&str> = line.split_whitespace().filter(|w| *w != "🔥" && *w != "*" && *w != ">").collect();
    (words[0].parse().expect("rank"), words[2].parse().expect("score"))
}

/// The rank and score a bot's summary gives.
fn summary(line: &str) -> (u32, u32) {
    let rank = line.split("final rank ").nth(1).and_then(|r| r.split(' ').next());
    let score = line.split("score ").nth(1).map(str::trim);
    match (rank.and_then(|r| r.parse().ok()), score.and_then(|s| s.parse().ok())) {
        (Some(rank), Some(score)) => (rank, score),
        _ => panic!("not a summary: {line:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_bots_play_a_tournament_to_its_end_and_watch_prints_the_final_standings() {
    let dir = TempDir::new("cli-tournament");
    let home = dir.path.join("home");
    let server = server_with_accounts(&dir, &home).await;
    let url = server.url();
    tokio::task::spawn_blocking(move || {
        // The shortest tournament the contract allows, at five seconds a side.
        let id = create(&home, &url, "0.08333+0");
        let list = run(&home, &["tournament", "list", "--server", &url]);
        let listed =
            list.lines().find(|l| l.starts_with(&id)).unwrap_or_else(|| panic!("{id} not in:\n{list}"));
        assert!(listed.contains("Quick arena  3×3") && listed.contains("running, ends in"), "{list}");
        let json: serde_json::Value =
            serde_json::from_str(&run(&home, &["tournament", "list", "--json", "--server", &url]))
                .expect("JSON");
        assert_eq!(json[0]["id"], id.as_str(), "{json}");
        assert_eq!(json[0]["clock"], serde_json::json!({"initial_ms": 5000, "increment_ms": 0}));

        // A guest is not let in, and an unknown tournament is said to be unknown.
        let guest = ttt(&home, &["bot", "--tournament", &id, "--name", "guesty", "--server", &url]).output();
        let guest = guest.expect("run the guest");
        assert!(!guest.status.success());
        assert!(String::from_utf8_lossy(&guest.stderr).contains("tournaments need an account"), "{guest:?}");
        let unknown = ttt(&home, &["tournament", "watch", "NOPE", "--server", &url]).output().expect("watch");
        assert!(!unknown.status.success());
        assert!(
            String::from_utf8_lossy(&unknown.stderr).contains("tournament list` lists them"),
            "{unknown:?}"
        );

        let watch = spawn(&home, &["tournament", "watch", &id, "--server", &url]);
        let robo =
            spawn(&home, &["bot", "--tournament", &id, "--name", "robo", "--berserk", "--server", &url]);
        // TTT_TOURNAMENT says which, as --tournament does.
        let zed = ttt(&home, &["bot", "--name", "zed", "--strategy", "random", "--server", &url])
            .env("TTT_TOURNAMENT", &id)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start zed");
        let limit = Duration::from_secs(100);
        let (robo, zed, watch) = (wait(robo, limit), wait(zed, limit), wait(watch, limit));
        let (robo, zed, watch) =
            (clean_exit("robo", &robo), clean_exit("zed", &zed), clean_exit("watch", &watch));
        let finals = |watch: &str| {
            let table = watch.split("final standings:\n").nth(1);
            table.unwrap_or_else(|| panic!("no final standings:\n{watch}")).to_owned()
        };
        let live = finals(&watch);
        assert!(row(&live, "robo").1 > 0 && row(&live, "zed").0 == 2, "{live}");
        // With both bots' last games over and counted, the standings are final.
        let table = &finals(&run(&home, &["tournament", "watch", &id, "--server", &url]));
        // Each bot's own summary agrees with them.
        for (name, said) in [("robo", &robo), ("zed", &zed)] {
            assert!(said.starts_with("tournament Quick arena: games: "), "{said}");
            assert_eq!(summary(said), row(table, name), "{name}: {said}\n{table}");
        }
        // Perfect play, berserk, against random moves: robo never loses, and wins the tournament.
        assert!(robo.contains(", losses: 0;"), "{robo}");
        assert_eq!(row(table, "robo").0, 1, "{table}");
        assert!(row(table, "robo").1 > row(table, "zed").1, "{table}");
    })
    .await
    .expect("the tournament");
    server.shutdown().await;
}

/// Whether tmux still has the session `name` (its program has not exited).
fn alive(name: &str) -> bool {
    Command::new("tmux").args(["has-session", "-t", name]).output().is_ok_and(|o| o.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_joins_in_the_terminal_goes_berserk_and_plays_a_bot_with_keys() {
    tictactoe_tests::tools::require("tmux");
    let dir = TempDir::new("tmux-tournament");
    let home = dir.path.join("home");
    let server = server_with_accounts(&dir, &home).await;
    let url = server.url();
    let id = {
        let (home, url) = (home.clone(), url.clone());
        tokio::task::spawn_blocking(move || create(&home, &url, "1+0")).await.expect("create")
    };
    let cmd = format!(
        "exec env -u TTT_TOKEN -u TTT_CONFIG_DIR -u TTT_STATE_DIR -u XDG_CONFIG_HOME -u XDG_STATE_HOME HOME={} LANG=C.UTF-8 {TTT} tournament join {id} --server {url}",
        home.display()
    );
    let ann = Session::start("ttt-tournament-ann", (100, 30), &cmd);
    ann.shows("Quick arena", 10).await;
    let bot = spawn(
        &home,
        &["bot", "--tournament", &id, "--name", "robo", "--strategy", "random", "--server", &url],
    );
    let screen = ann.shows("You are", 15).await;
    assert!(screen.contains("tictactoe — Quick arena"), "the tournament's name on the title:\n{screen}");
    ann.shows("your turn", 15).await;
    ann.keys(&["b", "Enter"]);
    ann.shows("you went berserk", 10).await;
    // Paused during the game (it goes on): after it the standings stay on
    // the screen, where the next pairing (within a quarter second) would
    // otherwise replace them.
    ann.keys(&["p", "Enter"]);
    ann.shows("paused: not paired again until j", 10).await;
    // Cells in turn until the game is over; a taken one is passed over.
    let cells = ["b2", "a1", "c3", "a3", "c1", "b1", "a2", "c2", "b3"];
    let mut next = cells.iter();
    let deadline = Instant::now() + Duration::from_secs(60);
    let result = loop {
        let screen = ann.screen();
        if screen.contains("p: pause") {
            break screen;
        }
        assert!(Instant::now() < deadline, "the game never ended:\n{screen}");
        if screen.contains("your turn") {
            let cell = next.next().unwrap_or_else(|| panic!("no cell left to play:\n{screen}"));
            ann.keys(&[cell, "Enter"]);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    // Between games: the result and the standings, both players in them.
    assert!(["You won", "You lost", "Draw"].iter().any(|r| result.contains(r)), "{result}");
    assert!(result.contains("rank ") && result.contains("robo"), "{result}");
    assert!(
        result.lines().any(|l| l.starts_with(">") && l.contains(" ann ")),
        "ann's own row marked:\n{result}"
    );
    ann.keys(&["p"]);
    ann.shows("paused: not paired again until j", 10).await;
    ann.keys(&["q"]);
    let gone = Instant::now() + Duration::from_secs(10);
    while alive(&ann.name) {
        assert!(Instant::now() < gone, "q did not end it:\n{}", ann.screen());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(wait(bot, Duration::ZERO));
    server.shutdown().await;
}
