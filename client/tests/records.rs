//! `ttt register`, then two signed-in bots play a rated game, then `ttt
//! history`, `profile`, `top` and `replay` show it — the binary against a
//! real server with a real SQLite file.

use std::process::{Command, Stdio};

use tictactoe_server::Config;
use tictactoe_tests::{TempDir, TestServer, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

/// Runs `ttt ARGS` with its config in `config`; returns stdout, failing on a bad exit.
fn ttt(config: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(TTT)
        .args(args)
        .env("TTT_CONFIG_DIR", config)
        .env_remove("TTT_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("run ttt");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "ttt {args:?} failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registered_bots_play_rated_and_the_records_show_in_history_top_profile_and_replay() {
    let dir = TempDir::new("cli-records");
    let config = dir.path.join("config");
    let db = dir.database("ttt.db");
    let server =
        TestServer::start(Config { max_messages_per_second: 0, database: db, ..test_config() }).await;
    let url = server.url();
    let out = tokio::task::spawn_blocking(move || {
        let said = ttt(&config, &["register", "ann", "--server", &url]);
        assert!(said.contains("Registered the account ann"), "{said}");
        ttt(&config, &["register", "robo", "--bot", "--server", &url]);
        // The token file is the user's alone.
        let file = std::fs::read_dir(config.join("accounts"))
            .expect("accounts dir")
            .flatten()
            .next()
            .expect("a file");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = file.metadata().expect("metadata").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{:o}", mode);
        }
        // Two bots, signed in from the saved tokens, play one game.
        let mut a = Command::new(TTT)
            .args([
                "bot",
                "--server",
                &url,
                "--name",
                "ann",
                "--strategy",
                "random",
                "--create",
                "--clock",
                "3+2",
            ])
            .env("TTT_CONFIG_DIR", &config)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start ann");
        let mut line = String::new();
        let mut reader = std::io::BufReader::new(a.stdout.take().expect("stdout"));
        std::io::BufRead::read_line(&mut reader, &mut line).expect("room line");
        let code = line.trim().strip_prefix("room: ").expect("room: CODE").to_owned();
        ttt(&config, &["bot", "--server", &url, "--name", "robo", "--strategy", "random", "--join", &code]);
        assert!(a.wait().expect("ann exits").success());

        let history = ttt(&config, &["history", "ann", "--server", &url]);
        let profile = ttt(&config, &["profile", "ann", "--server", &url]);
        let top = ttt(&config, &["top", "--server", &url]);
        let id =
            history.lines().nth(1).and_then(|l| l.split_whitespace().next()).expect("a game id").to_owned();
        let replay = ttt(&config, &["replay", &id, "--server", &url]);
        let missing = Command::new(TTT)
            .args(["replay", "nosuchgame", "--server", &url])
            .env("TTT_CONFIG_DIR", &config)
            .output()
            .expect("run ttt");
        let zoned = ["UTC", "Asia/Tokyo"].map(|tz| {
            let out = Command::new(TTT)
                .args(["profile", "ann", "--server", &url])
                .env("TTT_CONFIG_DIR", &config)
                .env("TZ", tz)
                .output()
                .expect("run ttt");
            String::from_utf8_lossy(&out.stdout).into_owned()
        });
        (history, profile, top, replay, missing, zoned)
    })
    .await
    .expect("the ttt runs");
    let (history, profile, top, replay, missing, zoned) = out;
    let zoned = (zoned[0].clone(), zoned[1].clone());
    assert!(history.starts_with("Games of ann"), "{history}");
    assert!(history.contains("robo (bot)") && history.contains(" → "), "rated, against the bot: {history}");
    assert!(profile.contains("Ratings (Glicko-2, per board):") && profile.contains("(1 game)"), "{profile}");
    let counted = ["1 win, 0 draws, 0 losses", "0 wins, 1 draw, 0 losses", "0 wins, 0 draws, 1 loss"];
    assert!(counted.iter().any(|c| profile.contains(&format!("Results: {c}"))), "in words: {profile}");
    // Times are the reader's own, to the minute; never the API's raw UTC timestamps.
    for text in [&history, &profile] {
        // (A game id may hold a Z; the API's timestamps end in `.123Z`.)
        let raw_utc = text
            .as_bytes()
            .windows(5)
            .any(|w| w[0] == b'.' && w[1..4].iter().all(u8::is_ascii_digit) && w[4] == b'Z');
        assert!(!raw_utc && !text.contains(":00."), "a raw timestamp: {text}");
    }
    let (utc, tokyo) = zoned;
    let registered = |text: &str| -> jiff::civil::DateTime {
        let at = text.split("registered ").nth(1).and_then(|t| t.lines().next()).expect("a time");
        at.trim().parse().unwrap_or_else(|e| panic!("{at:?}: {e}"))
    };
    let ahead = registered(&tokyo).duration_since(registered(&utc));
    assert_eq!(ahead.as_secs(), 9 * 3600, "Tokyo is 9 hours ahead:\n{utc}\n{tokyo}");
    let rows: Vec<&str> = top.lines().filter(|l| l.contains("ann") || l.contains("robo")).collect();
    assert_eq!(rows.len(), 2, "{top}");
    assert!(top.contains("robo (bot)"), "{top}");
    assert!(replay.contains("Move 1/") && replay.contains("X plays "), "{replay}");
    // The game's clock, and each side's time after each move: no increment
    // for the first moves, so both still have 3:00 after move 2.
    assert!(replay.contains("on 3x3, 3+2, "), "{replay}");
    let clocks: Vec<&str> = replay.lines().filter(|l| l.starts_with("Clocks: ")).collect();
    assert_eq!(clocks.len(), replay.matches("Move ").count(), "a clock line a move: {replay}");
    // (Who plays X is drawn at random.)
    assert_eq!(clocks[1].matches(") 3:00").count(), 2, "both at 3:00 after move 2: {replay}");
    assert!(clocks[1].contains("(ann)") && clocks[1].contains("(robo (bot))"), "{replay}");
    assert!(replay.contains("Rated: X 1500 → "), "{replay}");
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no game has that id"));
    server.shutdown().await;
}
