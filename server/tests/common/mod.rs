//! The real `ttt-server` binary under test: starting it, reading its
//! address from its log, signalling it, and a raw WebSocket client's reads.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// A client's socket.
pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A running `ttt-server` process and its address.
pub struct Server {
    /// The process.
    pub child: Child,
    /// `host:port` it listens on.
    pub addr: String,
    /// How many saved games it said it restored at start.
    pub restored: u64,
    /// Its log lines after the one that said where it listens.
    pub log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Server {
    /// Starts the binary on 127.0.0.1:0 with `args`; returns once it listens.
    pub fn start(args: &[&str]) -> Server {
        Server::start_under(&[], args)
    }

    /// Starts the binary as [`Server::start`] does, but as the last
    /// argument of `wrapper` (e.g. `prlimit --fsize=…`), when it is not empty.
    pub fn start_under(wrapper: &[&str], args: &[&str]) -> Server {
        let mut command = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(env!("CARGO_BIN_EXE_ttt-server"));
                c
            }
            None => Command::new(env!("CARGO_BIN_EXE_ttt-server")),
        };
        let mut child = command
            .args(["--bind", "127.0.0.1:0"])
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
            let line = lines.next().expect("a log line").expect("utf-8");
            if line.contains("games in progress restored") {
                let games = line.split("games=").nth(1).and_then(|g| g.split_whitespace().next());
                restored = games.and_then(|g| g.parse().ok()).unwrap_or(0);
            }
            if let Some(rest) = line.split("addr=").nth(1) {
                break rest.split_whitespace().next().unwrap_or_default().to_owned();
            }
        };
        // Keep draining the log so the server never blocks on a full pipe.
        // Kept for the test (`TTT_TEST_LOG=1` shows it too).
        let show = std::env::var_os("TTT_TEST_LOG").is_some();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if show {
                    eprintln!("server: {line}");
                }
                kept.lock().unwrap_or_else(|p| p.into_inner()).push(line);
            }
        });
        Server { child, addr, restored, log }
    }

    /// The WebSocket URL.
    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    /// A client, past `welcome`.
    pub async fn client(&self) -> Ws {
        let (mut ws, _) = tokio_tungstenite::connect_async(&self.url()).await.expect("connect");
        next_of(&mut ws, "welcome").await;
        ws
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
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Some(code) = self.child.try_wait().expect("wait") {
                return code;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = self.child.kill();
        panic!("ttt-server did not exit within {within:?}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The next message of type `kind`, skipping others.
pub async fn next_of(ws: &mut Ws, kind: &str) -> Value {
    next_of_any(ws, &[kind]).await
}

/// The next message whose type is one of `kinds`, skipping others.
pub async fn next_of_any(ws: &mut Ws, kinds: &[&str]) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .expect("in time")
            .expect("open")
            .expect("frame");
        if let Message::Text(t) = msg {
            let v: Value = serde_json::from_str(&t).expect("json");
            if kinds.iter().any(|k| v["type"] == *k) {
                return v;
            }
        }
    }
}

/// Reads until the close frame: the types of the messages before it, and its code.
pub async fn until_close(ws: &mut Ws) -> (Vec<String>, Option<CloseCode>) {
    let mut types = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(10), ws.next()).await.expect("close in time") {
            Some(Ok(Message::Close(frame))) => return (types, frame.map(|f| f.code)),
            Some(Ok(Message::Text(t))) => {
                let v: Value = serde_json::from_str(&t).expect("json");
                types.push(v["type"].as_str().unwrap_or_default().to_owned());
            }
            Some(Ok(_)) => continue,
            _ => return (types, None),
        }
    }
}

/// A fresh directory for one test's files.
pub fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ttt-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
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
