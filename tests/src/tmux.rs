//! Driving a program in a real terminal: tmux runs it in a detached session,
//! `send-keys` types, `capture-pane` reads the screen.

use std::process::Command;
use std::time::{Duration, Instant};

/// Runs tmux with `args` and returns what it printed; fails at once, naming
/// the package, when tmux is not installed.
pub fn tmux(args: &[&str]) -> String {
    let out = Command::new(crate::tools::require("tmux")).args(args).output().expect("run tmux");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A detached tmux session running one shell command, killed when dropped
/// (also when a test fails).
pub struct Session {
    /// The session's name.
    pub name: String,
}

impl Session {
    /// Starts `cmd` in a new session called `name` (made unique to this
    /// process) of `cols`×`rows`.
    pub fn start(name: &str, (cols, rows): (u16, u16), cmd: &str) -> Session {
        let name = format!("{name}-{}", std::process::id());
        let (c, r) = (cols.to_string(), rows.to_string());
        tmux(&["new-session", "-d", "-s", &name, "-x", &c, "-y", &r, cmd]);
        Session { name }
    }

    /// The screen as it is now.
    pub fn screen(&self) -> String {
        tmux(&["capture-pane", "-p", "-t", &self.name])
    }

    /// Types `keys` (tmux key names, or text).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend_from_slice(keys);
        tmux(&args);
    }

    /// The pane's title, as the program in it set it.
    pub fn title(&self) -> String {
        tmux(&["display-message", "-p", "-t", &self.name, "#{pane_title}"]).trim_end().to_owned()
    }

    /// The pid of the pane's first process (the command, when it was `exec`ed).
    pub fn pid(&self) -> String {
        tmux(&["display-message", "-p", "-t", &self.name, "#{pane_pid}"]).trim().to_owned()
    }

    /// The screen with the lines the terminal wrapped joined again: a long
    /// line (a command with a long path) as the program wrote it.
    pub fn joined(&self) -> String {
        tmux(&["capture-pane", "-p", "-J", "-t", &self.name])
    }

    /// Waits until the screen shows `needle` (on one line, or across a line
    /// the terminal wrapped) and returns it; fails with the screen after `secs`.
    pub async fn shows(&self, needle: &str, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            // Read again: what shows it, not an earlier screen.
            let joined = self.joined();
            if joined.contains(needle) {
                return joined;
            }
            assert!(Instant::now() < deadline, "the screen never showed {needle:?}:\n{screen}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["kill-session", "-t", &self.name]).output();
    }
}

/// The room code in a screen's `… play --join CODE --server …` (a `ttt play
/// --create` invite), once all of it is drawn: a pane caught mid-draw has none.
pub fn invite_code(screen: &str) -> Option<String> {
    let rest = screen.split("--join ").nth(1)?;
    let mut words = rest.split_whitespace();
    let code = words.next()?;
    (words.next() == Some("--server")).then(|| code.to_owned())
}
