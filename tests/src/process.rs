//! The real `ttt-server` binary under test: built for the test run,
//! started on `127.0.0.1:0`, its address read from its log, signalled,
//! and its CPU read from /proc. Clients are this crate's [`Client`].

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::Client;

/// The `ttt-server` binary of this checkout, built once per test process
/// (`cargo build -p tictactoe-server --bin ttt-server`, with the profile the
/// tests were built with, so that it is never a stale one), or
/// `$TTT_SERVER_BIN` when that is set.
pub fn server_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("TTT_SERVER_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => build_server(),
    })
}

/// Builds `ttt-server` with cargo and returns the executable cargo names.
fn build_server() -> PathBuf {
    // The tests run from <target>/<profile dir>/deps/, this crate's programs
    // from <target>/<profile dir>/: build the same profile.
    let exe = std::env::current_exe().expect("the test's own path");
    let profile = exe
        .parent()
        .map(|dir| if dir.ends_with("deps") { dir.parent().unwrap_or(dir) } else { dir })
        .and_then(Path::file_name)
        .and_then(|p| p.to_str())
        .map(|dir| if dir == "debug" { "dev" } else { dir })
        .unwrap_or("dev")
        .to_owned();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    // Without what cargo set for this test run: a build script that reads
    // one of them (ring's reads CARGO_MANIFEST_DIR) would otherwise be
    // rebuilt here and again by the next `cargo test`, each time.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_for_the_run =
            ["CARGO_MANIFEST_DIR", "CARGO_MANIFEST_PATH", "CARGO_CRATE_NAME", "CARGO_BIN_NAME"]
                .contains(&name.as_ref())
                || name.starts_with("CARGO_PKG_")
                || name.starts_with("CARGO_PRIMARY_PACKAGE")
                || name.starts_with("CARGO_TARGET_TMPDIR");
        if set_for_the_run {
            command.env_remove(name.as_ref());
        }
    }
    let out = command
        .args(["build", "--quiet", "--message-format=json", "-p", "tictactoe-server", "--bin", "ttt-server"])
        .args(["--profile", &profile])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(Stdio::inherit())
        .output()
        .expect("run cargo to build ttt-server");
    assert!(out.status.success(), "cargo could not build ttt-server");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let bin = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "ttt-server")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo names the ttt-server executable");
    assert!(bin.is_file(), "{} is not there", bin.display());
    bin
}

/// A running `ttt-server` process and its address; killed when dropped.
pub struct ServerProcess {
    /// The process.
    pub child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// How many saved games it said it restored at start.
    pub restored: u64,
    /// Its log lines after the one that said where it listens
    /// (`TTT_TEST_LOG=1` shows them too).
    pub log: Arc<Mutex<Vec<String>>>,
}

impl ServerProcess {
    /// Starts the binary on 127.0.0.1:0 with `args`; returns once it listens.
    pub fn start(args: &[&str]) -> ServerProcess {
        ServerProcess::start_under(&[], args)
    }

    /// Starts the binary as [`ServerProcess::start`] does, but as the last
    /// argument of `wrapper` (e.g. `prlimit --fsize=…`), when it is not empty.
    pub fn start_under(wrapper: &[&str], args: &[&str]) -> ServerProcess {
        ServerProcess::launch(wrapper, "127.0.0.1:0", args)
    }

    /// Starts the binary on `addr` (the address of one that stopped: a
    /// restart, as its clients see it) with `args`; returns once it listens.
    pub fn start_at(addr: SocketAddr, args: &[&str]) -> ServerProcess {
        ServerProcess::launch(&[], &addr.to_string(), args)
    }

    fn launch(wrapper: &[&str], bind: &str, args: &[&str]) -> ServerProcess {
        let mut command = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(server_bin());
                c
            }
            None => Command::new(server_bin()),
        };
        let mut child = command
            .args(["--bind", bind])
            .args(args)
            .env("RUST_LOG", std::env::var("TTT_TEST_RUST_LOG").unwrap_or_else(|_| "info".into()))
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .spawn()
            .expect("start ttt-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut restored = 0;
        let addr = loop {
            let line = lines.next().expect("a log line before the server exits").expect("utf-8");
            match start_line(&line) {
                StartLine::Restored(games) => restored = games,
                StartLine::Listening(addr) => break addr,
                StartLine::BadAddress(line) => panic!("no address on the listening line {line:?}"),
                StartLine::Other => {}
            }
        };
        // Keep draining the log so the server never blocks on a full pipe.
        let show = std::env::var_os("TTT_TEST_LOG").is_some();
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if show {
                    eprintln!("server: {line}");
                }
                kept.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });
        ServerProcess { child, addr, restored, log }
    }

    /// The WebSocket URL.
    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    /// A new client, past its `welcome`.
    pub async fn client(&self) -> Client {
        Client::connect(&self.url()).await
    }

    /// The log lines so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Sends `signal` (`TERM`, `KILL`) to the process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Waits up to `within` for the process to exit; panics (after killing it) if it does not.
    pub async fn exits_within(mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = tokio::time::Instant::now() + within;
        while tokio::time::Instant::now() < deadline {
            if let Some(code) = self.child.try_wait().expect("wait") {
                return code;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = self.child.kill();
        panic!("ttt-server did not exit within {within:?}");
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a line of a starting server's log says.
pub(crate) enum StartLine {
    /// It restored this many games in progress.
    Restored(u64),
    /// It listens here.
    Listening(SocketAddr),
    /// It says it listens, at an address that does not parse.
    BadAddress(String),
    /// Anything else.
    Other,
}

/// Reads one line of a starting server's log.
pub(crate) fn start_line(line: &str) -> StartLine {
    let field = |key: &str| line.split(key).nth(1)?.split_whitespace().next();
    if line.contains("games in progress restored") {
        return StartLine::Restored(field("games=").and_then(|g| g.parse().ok()).unwrap_or(0));
    }
    match field("addr=").map(str::parse) {
        Some(Ok(addr)) => StartLine::Listening(addr),
        Some(Err(_)) => StartLine::BadAddress(line.to_owned()),
        None => StartLine::Other,
    }
}

/// The CPU time (user and system) process `pid` has used so far, from /proc.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    let out = Command::new("getconf").arg("CLK_TCK").output().expect("getconf");
    let hz: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(100);
    Duration::from_millis(ticks * 1000 / hz)
}

/// The CPU process `pid` uses during the next `window`, in cores (1.0: one core all the time).
pub async fn load(pid: u32, window: Duration) -> f64 {
    let before = cpu_time(pid);
    tokio::time::sleep(window).await;
    (cpu_time(pid).saturating_sub(before)).as_secs_f64() / window.as_secs_f64()
}
