//! A load balancer in front of a cluster's instances, from Debian's
//! `haproxy` package, with the configuration `scripts/cluster.sh` uses
//! (`scripts/haproxy.cfg`): HTTP mode with a long tunnel timeout for
//! WebSockets, each instance checked on `GET /healthz`, a connection to an
//! instance that is gone dispatched to another. On loopback, stopped when
//! dropped. Each answer names the instance that served it (header
//! `X-TTT-Instance`), for a test to know where a player is.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::Client;

/// The header the balancer adds to its answers: the name of the instance
/// that served the request.
pub const INSTANCE_HEADER: &str = "x-ttt-instance";

/// A running `haproxy` in front of some instances.
pub struct Haproxy {
    child: Child,
    dir: PathBuf,
    /// Where players connect.
    pub addr: SocketAddr,
}

/// The configuration `scripts/cluster.sh` gives its balancer
/// (`scripts/haproxy.cfg`), on `bind` in front of `instances` (name,
/// address): players go to the instances whose `/healthz` is 200 (checked
/// every 500 ms), or when none is, to those that answer at all.
pub fn config(bind: SocketAddr, instances: &[(&str, SocketAddr)]) -> String {
    let servers: Vec<String> =
        instances.iter().map(|(name, addr)| format!("    server {name} {addr} check")).collect();
    include_str!("../../scripts/haproxy.cfg")
        .replace("@BIND@", &bind.to_string())
        .replace("@SERVERS@", &servers.join("\n"))
}

impl Haproxy {
    /// Starts a balancer on a free loopback port in front of `instances`
    /// (name, address) and waits until it takes connections; a missing
    /// `haproxy` package fails the test here with one line naming it.
    pub fn start(instances: &[(&str, SocketAddr)]) -> Haproxy {
        let bin = crate::tools::require("haproxy");
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ttt-haproxy-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create haproxy's directory");
        // haproxy cannot be told port 0: a port that was free a moment ago,
        // tried again with another should something take it meanwhile.
        for _ in 0..3 {
            let addr = free_port();
            let file = dir.join("haproxy.cfg");
            std::fs::write(&file, config(addr, instances)).expect("write haproxy.cfg");
            let log = std::fs::File::create(dir.join("haproxy.log")).expect("create haproxy.log");
            let mut child = Command::new(&bin)
                .arg("-db")
                .arg("-f")
                .arg(&file)
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("haproxy.log"))
                .stderr(log)
                .spawn()
                .expect("run haproxy");
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if TcpStream::connect(addr).is_ok() {
                    return Haproxy { child, dir, addr };
                }
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                assert!(Instant::now() < deadline, "haproxy did not listen on {addr}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let log = std::fs::read_to_string(dir.join("haproxy.log")).unwrap_or_default();
        panic!("haproxy did not start (three free ports tried): {log}")
    }

    /// What haproxy logged so far: its requests, and its servers going down and up.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("haproxy.log")).unwrap_or_default()
    }

    /// The one URL players use.
    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    /// Connects a player through the balancer and reads its `welcome`:
    /// the client and the name of the instance it landed on.
    pub async fn client(&self) -> (Client, String) {
        let (ws, answer) =
            tokio::time::timeout(crate::READ_TIMEOUT, tokio_tungstenite::connect_async(self.url()))
                .await
                .expect("the handshake within the read timeout")
                .unwrap_or_else(|e| {
                    panic!("WebSocket handshake through haproxy: {e}; its log:\n{}", self.log())
                });
        let instance = answer
            .headers()
            .get(INSTANCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .expect("haproxy names the instance")
            .to_owned();
        let mut client = Client { ws, welcome: Value::Null, received: Vec::new(), sent: Vec::new() };
        let welcome = client.recv_json().await;
        assert_eq!(welcome["type"], "welcome", "first message is welcome");
        client.welcome = welcome;
        (client, instance)
    }
}

/// A loopback port nothing listens on (as of now).
fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address")
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
