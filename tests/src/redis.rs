//! Throwaway Redis servers for the tests, from Debian's `redis-server`
//! package: one per test, on a Unix socket in a temporary directory, no TCP
//! port, nothing saved (`--save ''`). Stopped when dropped; a stopped one
//! starts again on the same socket ([`Redis::resume`]), as a Redis that
//! came back would.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A Redis server of the tests.
pub struct Redis {
    dir: PathBuf,
    child: Option<Child>,
}

impl Redis {
    /// Starts a new server in a fresh directory; a missing `redis-server`
    /// package fails the test here with one line naming it.
    pub fn start() -> Redis {
        crate::tools::require("redis-server");
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ttt-redis-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create Redis's directory");
        let mut redis = Redis { dir, child: None };
        redis.resume();
        redis
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("redis.sock")
    }

    /// The `--redis` URL of this server.
    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket().display())
    }

    /// Starts the server (again) and waits until its socket takes connections.
    pub fn resume(&mut self) {
        assert!(self.child.is_none(), "Redis runs already");
        let socket = self.socket();
        let _ = std::fs::remove_file(&socket);
        let child = Command::new("redis-server")
            .args(["--port", "0", "--save", "", "--appendonly", "no", "--daemonize", "no"])
            .arg("--unixsocket")
            .arg(&socket)
            .args(["--unixsocketperm", "700", "--dir"])
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not open {}", socket.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server at once (SIGKILL): a Redis that is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The flags of instance `name` of a cluster on Postgres database `url` and
/// `redis`, spilling into `spill`, with `more` after them.
pub fn instance_flags(
    url: &str,
    redis: &Redis,
    name: &str,
    spill: &std::path::Path,
    more: &[&str],
) -> Vec<String> {
    let mut flags: Vec<String> = ["--database", url, "--redis", &redis.url(), "--instance", name]
        .iter()
        .map(|f| (*f).to_owned())
        .collect();
    flags.extend(["--spill-dir".to_owned(), spill.display().to_string()]);
    flags.extend(more.iter().map(|f| (*f).to_owned()));
    flags
}

/// Starts instance `name` of a cluster on database `url` and `redis`, the
/// real binary, with a long grace and turn clock (tests decide when players
/// come back, not the clock).
pub fn instance(
    url: &str,
    redis: &Redis,
    name: &str,
    spill: &crate::TempDir,
) -> crate::process::ServerProcess {
    let more = ["--reconnect-grace-ms", "30000", "--turn-timeout-ms", "60000"];
    let flags = instance_flags(url, redis, name, &spill.path, &more);
    crate::process::ServerProcess::start(&flags.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Waits until the bus of `server` is up (`/healthz` says so).
pub async fn bus_up(server: &crate::process::ServerProcess) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, body) = crate::http_get(server.addr, "/healthz").await;
        if status == 200 && body.contains("\"bus\":\"ok\"") {
            return;
        }
        assert!(Instant::now() < deadline, "the bus never came up: {status} {body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Two instances `a` and `b` of a fresh cluster (database `label` on the
/// shared Postgres), their buses up and each known to the other (an
/// instance is known once it said who is on it).
pub async fn cluster(
    label: &str,
) -> (crate::process::ServerProcess, crate::process::ServerProcess, Redis, crate::TempDir) {
    let url = crate::postgres::shared().database(label);
    let redis = Redis::start();
    let spill = crate::TempDir::new(label);
    let a = instance(&url, &redis, "a", &spill);
    let b = instance(&url, &redis, "b", &spill);
    bus_up(&a).await;
    bus_up(&b).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    (a, b, redis, spill)
}
