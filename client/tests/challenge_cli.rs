//! `ttt` with challenges and the house against a real server: a bot waiting
//! for challenges is invited by name by another `ttt`, plays and reports its
//! tally; boards it does not play are declined with its reason; `ttt who`
//! lists it; `ttt bot --house` plays the server's bot.

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use tictactoe_server::Config;
use tictactoe_tests::{Client, TestServer, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

fn ttt(args: &[&str]) -> Command {
    let mut cmd = Command::new(TTT);
    // No saved accounts or seats from the machine running the tests.
    cmd.args(args).env("HOME", std::env::temp_dir()).env_remove("TTT_TOKEN");
    cmd
}

/// Waits until `who` lists `name` as idle.
async fn listed(server: &TestServer, name: &str) {
    let mut c: Client = server.client().await;
    for _ in 0..200 {
        c.send(serde_json::json!({"type": "who"})).await;
        let online = c.recv_type("online").await;
        let found =
            online["players"].as_array().unwrap().iter().any(|p| p["name"] == name && p["status"] == "idle");
        if found {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{name} never listed as idle");
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_accepting_challenges_is_invited_by_name_plays_and_reports_its_tally() {
    let server = TestServer::start(Config { max_messages_per_second: 0, ..test_config() }).await;
    let url = server.url();
    let waiter = ttt(&[
        "bot",
        "--server",
        &url,
        "--name",
        "botty",
        "--accept-challenges",
        "--sizes",
        "3",
        "--games",
        "3",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start the waiting bot");
    listed(&server, "botty").await;
    // `ttt who` shows it.
    let who = ttt(&["who", "--server", &url]).output().expect("ttt who");
    let who_text = text(&who);
    assert!(who.status.success(), "{who_text}");
    assert!(who_text.lines().any(|l| l.starts_with("botty") && l.ends_with("idle")), "{who_text}");
    assert!(who_text.lines().any(|l| l.starts_with("house") && l.contains("bot")), "{who_text}");
    // A board it does not play: declined, with its reason.
    let declined = ttt(&["challenge", "botty", "--server", &url, "--name", "ann", "--size", "4"])
        .stdin(Stdio::null())
        .output()
        .expect("ttt challenge");
    assert!(!declined.status.success());
    assert!(text(&declined).contains("this bot plays boards 3×3"), "{}", text(&declined));
    // Another ttt challenges it by name, on a 1+0 clock, and plays three games (rematches).
    let url2 = url.clone();
    let challenger = tokio::task::spawn_blocking(move || {
        ttt(&[
            "bot",
            "--server",
            &url2,
            "--name",
            "cy",
            "--challenge",
            "BOTTY",
            "--strategy",
            "random",
            "--games",
            "3",
            "--clock",
            "1+0",
        ])
        .output()
        .expect("challenger")
    });
    let challenger = challenger.await.unwrap();
    let waiter =
        tokio::task::spawn_blocking(move || waiter.wait_with_output().expect("waiter")).await.unwrap();
    assert!(challenger.status.success(), "{}", text(&challenger));
    assert!(waiter.status.success(), "{}", text(&waiter));
    let tally = |out: &Output| String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let (theirs, ours) = (tally(&challenger), tally(&waiter));
    assert!(ours.starts_with("wins: ") && ours.ends_with("losses: 0"), "perfect never loses: {ours}");
    // One game's win is the other's loss.
    let nums = |s: &str| -> Vec<u32> {
        s.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).collect()
    };
    let (a, b) = (nums(&theirs), nums(&ours));
    assert_eq!((a[0], a[1], a[2]), (b[2], b[1], b[0]), "{theirs} / {ours}");
    assert_eq!(a.iter().sum::<u32>(), 3);
    // The challenge's clock is said, and the games (rematches too) are played on it.
    assert!(text(&waiter).contains("cy challenges on 3×3 (3 in a row, 1+0)"), "{}", text(&waiter));
    assert_eq!(text(&waiter).matches("playing at 1+0").count(), 3, "{}", text(&waiter));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_plays_the_house_and_nobody_by_that_name_is_a_clear_error() {
    let server = TestServer::start(Config { house_think_ms: 50, ..test_config() }).await;
    let url = server.url();
    let out = tokio::task::spawn_blocking(move || {
        let house = ttt(&["bot", "--server", &url, "--house", "--level", "perfect", "--games", "2"])
            .output()
            .unwrap();
        let nobody = ttt(&["challenge", "zed", "--server", &url]).stdin(Stdio::null()).output().unwrap();
        (house, nobody)
    })
    .await
    .unwrap();
    let (house, nobody) = out;
    assert!(house.status.success(), "{}", text(&house));
    assert_eq!(
        String::from_utf8_lossy(&house.stdout).trim(),
        "wins: 0, draws: 2, losses: 0",
        "perfect against perfect"
    );
    assert!(!nobody.status.success());
    assert!(text(&nobody).contains("nobody called \"zed\" is online"), "{}", text(&nobody));
    assert!(!text(&nobody).contains("send who"), "said as a person would: {}", text(&nobody));
}

fn tmux(args: &[&str]) -> String {
    let out = Command::new(tictactoe_tests::tools::require("tmux")).args(args).output().expect("run tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Polls the tmux pane until it shows `needle` (returns the screen) or `secs` pass (panics with it).
async fn shows(session: &str, needle: &str, secs: u64) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let screen = tmux(&["capture-pane", "-p", "-t", session]);
        if screen.contains(needle) {
            return screen;
        }
        if std::time::Instant::now() > deadline {
            tmux(&["kill-session", "-t", session]);
            panic!("the screen never showed {needle:?}:\n{screen}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_ttt_play_shows_a_challenge_and_a_accepts_it() {
    tictactoe_tests::tools::require("tmux");
    let server = TestServer::start(test_config()).await;
    let url = server.url();
    let session = format!("ttt-challenge-{}", std::process::id());
    // Waiting for a 5×5 quick match nobody else wants.
    let cmd = format!(
        "HOME={} {TTT} play --server {url} --name tmuxer --size 5; sleep 5",
        std::env::temp_dir().display()
    );
    tmux(&["new-session", "-d", "-s", &session, "-x", "100", "-y", "30", &cmd]);
    shows(&session, "waiting for an opponent", 10).await;
    let mut ann = server.client().await;
    ann.send(serde_json::json!({"type": "hello", "name": "ann"})).await;
    ann.send(serde_json::json!({"type": "challenge", "name": "tmuxer"})).await;
    ann.recv_type("challenge_sent").await;
    let screen = shows(&session, "ann challenges you to 3×3", 10).await;
    assert!(screen.contains("a: accept the challenge"), "{screen}");
    tmux(&["send-keys", "-t", &session, "a"]);
    let started = ann.recv_type("game_started").await;
    assert_eq!(started["size"], 3, "the challenge's board, not the queue's");
    shows(&session, "game started", 10).await;
    tmux(&["kill-session", "-t", &session]);
}
