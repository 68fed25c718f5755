//! The web page: its state logic under `node --test`, and the page itself
//! in a real browser (Debian's `chromium`, driven by `playwright-core` from
//! `web/node_modules`, installed with `npm ci` on first use) against a real
//! server, with `ttt bot` as an opponent. A failing browser scenario saves
//! screenshots under `target/web-failures/`; the screenshots a scenario takes
//! on purpose (a 15×15 board at laptop and phone sizes, a paused clock, both
//! Fischer clocks of a timed game, the end-of-game banner, a room's invite, a
//! room code that does not exist, a tournament game gone berserk and its
//! standings) go to `$SCREENS`, or `target/web-screens/`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tictactoe_server::Config;
use tictactoe_tests::{TestServer, test_config};

const TTT: &str = env!("CARGO_BIN_EXE_ttt");

fn web() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web")
}

/// Runs `cmd` to completion within `limit`; returns (success, stdout + stderr).
async fn run(cmd: &mut tokio::process::Command, limit: Duration) -> (bool, String) {
    let out = tokio::time::timeout(limit, cmd.stdin(Stdio::null()).kill_on_drop(true).output())
        .await
        .expect("finished in time")
        .expect("ran");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[tokio::test]
async fn the_pages_state_logic_passes_its_unit_tests() {
    let node = tictactoe_tests::tools::require("node");
    let (ok, out) = run(
        tokio::process::Command::new(node).args(["--test", "test/"]).current_dir(web()),
        Duration::from_secs(60),
    )
    .await;
    assert!(ok, "node --test web/test:\n{out}");
    assert!(out.contains("# fail 0"), "{out}");
}

/// The browser to drive, once `playwright-core` is installed; fails at once,
/// in one line, when chromium, node or npm is missing.
async fn browser_ready() -> PathBuf {
    let chromium = tictactoe_tests::tools::require("chromium");
    tictactoe_tests::tools::require("node");
    if !web().join("node_modules/playwright-core").exists() {
        let npm = tictactoe_tests::tools::require("npm");
        let (ok, out) = run(
            tokio::process::Command::new(npm).args(["ci", "--silent"]).current_dir(web()),
            Duration::from_secs(300),
        )
        .await;
        assert!(ok, "npm ci in web/: {out}");
    }
    chromium
}

/// Runs the browser scenarios of `web/e2e/{script}` with `args` in `chromium`,
/// from the workspace (their screenshots go under its `target/`), within `limit`.
async fn scenarios(script: &str, args: &[&str], chromium: &Path, limit: Duration) -> (bool, String) {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    run(
        tokio::process::Command::new("node")
            .arg(web().join("e2e").join(script))
            .args(args)
            .env("CHROMIUM", chromium)
            .current_dir(target.parent().unwrap_or(&target)),
        limit,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_plays_in_a_real_browser() {
    let chromium = browser_ready().await;
    let dir = tictactoe_tests::TempDir::new("web");
    let config = Config {
        house_think_ms: 20,
        max_messages_per_second: 0,
        reconnect_grace_ms: 10_000,
        // A clock to see (and to see paused); never run out within a scenario.
        turn_timeout_ms: 300_000,
        database: dir.database("web.db"),
        ..test_config()
    };
    let server = TestServer::start(config).await;
    let url = format!("http://{}/", server.addr);
    let (ok, out) = scenarios("browser.mjs", &[url.as_str(), TTT], &chromium, Duration::from_secs(240)).await;
    assert!(ok, "browser scenarios failed:\n{out}");
    assert!(!out.contains("not ok"), "{out}");
    server.shutdown().await;
}

/// A tournament through the page: created and joined by a signed-in player,
/// watched by a guest, paired with a scripted WebSocket bot; the game opens
/// by itself (with berserk), and the guest's standings move live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_plays_a_tournament_in_a_real_browser() {
    let chromium = browser_ready().await;
    let dir = tictactoe_tests::TempDir::new("web-tournament");
    let config = Config { max_messages_per_second: 0, database: dir.database("web.db"), ..test_config() };
    let server = TestServer::start(config).await;
    let url = format!("http://{}/", server.addr);
    let (ok, out) = scenarios("tournament.mjs", &[url.as_str()], &chromium, Duration::from_secs(120)).await;
    assert!(ok, "the tournament scenario failed:\n{out}");
    assert!(out.contains("ok - ") && !out.contains("not ok"), "{out}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_rides_out_a_server_restart() {
    use tokio::io::AsyncBufReadExt;
    let chromium = browser_ready().await;
    let dir = tictactoe_tests::TempDir::new("web-restart");
    let config = Config {
        reconnect_grace_ms: 20_000,
        turn_timeout_ms: 300_000,
        database: dir.database("web.db"),
        ..test_config()
    };
    let mut server = Some(TestServer::start(config.clone()).await);
    let addr = server.as_ref().map(|s| s.addr).expect("a server");
    let url = format!("http://{addr}/");
    let mut node = tokio::process::Command::new("node")
        .arg(web().join("e2e/restart.mjs"))
        .arg(&url)
        .env("CHROMIUM", &chromium)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node");
    let mut lines = tokio::io::BufReader::new(node.stdout.take().expect("stdout")).lines();
    let mut said = Vec::new();
    let read = async {
        while let Some(line) = lines.next_line().await.expect("read") {
            // Stopped gracefully (1012); started again on the same address
            // and file once the pages have shown their clocks paused.
            if line == "RESTART" {
                if let Some(running) = server.take() {
                    running.shutdown().await;
                }
            }
            if line == "START" && server.is_none() {
                server = Some(TestServer::start_at(config.clone(), addr).await);
            }
            said.push(line);
        }
    };
    tokio::time::timeout(Duration::from_secs(120), read).await.expect("the scenario finished in time");
    let status = node.wait().await.expect("node exit");
    assert!(status.success(), "{}", said.join("\n"));
    assert!(said.iter().any(|l| l.starts_with("ok - ")), "{}", said.join("\n"));
    if let Some(server) = server {
        server.shutdown().await;
    }
}
