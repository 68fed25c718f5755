//! The private `ttt-server` a match without `--server` plays on: the binary
//! beside `ttt` (else on `PATH`), on a free loopback port, its records in a
//! temporary SQLite file, stopped (and the file removed) at the end.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long the server has to say where it listens.
const START: Duration = Duration::from_secs(20);

/// A running private server.
pub struct PrivateServer {
    child: Child,
    /// Its WebSocket URL.
    pub url: String,
    dir: PathBuf,
}

impl PrivateServer {
    /// Starts `ttt-server` and waits for its `listening addr=…` log line.
    pub async fn start() -> Result<PrivateServer, String> {
        let beside = std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join("ttt-server")));
        let program = beside.filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from("ttt-server"));
        let dir = std::env::temp_dir().join(format!("ttt-arena-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let database = format!("sqlite:{}", dir.join("games.db").display());
        let mut child = Command::new(&program)
            .args(["--bind", "127.0.0.1:0", "--database", &database, "--max-messages-per-second", "0"])
            .arg("--spill-dir")
            .arg(&dir)
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                format!("cannot start {} (the server, beside ttt or on PATH): {e}", program.display())
            })?;
        let stdout = child.stdout.take().ok_or("the server's log is not readable")?;
        let mut lines = BufReader::new(stdout).lines();
        let addr = tokio::time::timeout(START, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(addr) = listening(&line) {
                    return Some(addr);
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .ok_or_else(|| format!("{} did not say where it listens", program.display()))?;
        // Keep reading its log so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(PrivateServer { child, url: format!("ws://{addr}/"), dir })
    }

    /// Stops the server gracefully (SIGTERM, then a kill after a while) and
    /// removes its files.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status().await;
        }
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await.is_err() {
            let _ = self.child.kill().await;
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The address on the server's `listening addr=…` log line.
fn listening(line: &str) -> Option<String> {
    if !line.contains("listening") {
        return None;
    }
    line.split("addr=").nth(1)?.split_whitespace().next().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_address_is_read_from_the_listening_line() {
        let line = "2026-11-28T02:00:00Z  INFO tictactoe_server: listening addr=127.0.0.1:40123 scheme=ws";
        assert_eq!(super::listening(line).as_deref(), Some("127.0.0.1:40123"));
        assert_eq!(super::listening("INFO starting"), None);
    }
}
