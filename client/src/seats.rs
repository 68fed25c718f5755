//! The resume token of the game `ttt play` is in, kept on disk while the game
//! lasts (`$TTT_STATE_DIR`, else `$XDG_STATE_HOME/ttt`, else
//! `~/.local/state/ttt`, readable only by the user), so that `ttt play`
//! started again after a crash or a kill takes the seat back.
//!
//! One file per server and player name (`seats/SERVER/NAME.seat`), holding
//! the name, the token and the id of the process that plays the seat: two
//! players on one machine (the README's quick start) never share a file, a
//! client only takes back a seat kept under its own name, and never one that
//! a running `ttt` still plays (two clients with the same name). Files are
//! written whole to a temporary file and renamed, so a kill mid-write leaves
//! the old file or the new one, never half of one.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("TTT_STATE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME") {
        return Some(PathBuf::from(d).join("ttt"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state").join("ttt"))
}

/// A player name as a file name: letters, digits, `-` and `_` kept, every
/// other byte written `%XX`, so that different names never share a file.
fn name_key(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The seat kept on disk for one player name on one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seats {
    path: PathBuf,
    name: String,
}

/// What a seat file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    name: String,
    token: String,
    pid: u32,
}

impl Seats {
    /// The seat of `name` on `server`, if there is a state directory.
    pub fn for_player(server: &str, name: &str) -> Option<Seats> {
        Some(Seats::in_dir(&dir()?, server, name))
    }

    /// The seat of `name` on `server` kept under `dir`.
    pub fn in_dir(dir: &Path, server: &str, name: &str) -> Seats {
        let file = format!("{}.seat", name_key(name));
        Seats {
            path: dir.join("seats").join(crate::accounts::server_key(server)).join(file),
            name: name.to_owned(),
        }
    }

    /// The file this seat is kept in.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Option<Kept> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let doc: Value = serde_json::from_str(&text).ok()?;
        Some(Kept {
            name: doc["name"].as_str()?.to_owned(),
            token: doc["token"].as_str().filter(|t| !t.is_empty())?.to_owned(),
            pid: u32::try_from(doc["pid"].as_u64()?).ok()?,
        })
    }

    /// Whether the file is another running client's: it plays that seat now.
    fn held_by_another(&self) -> bool {
        self.read().is_some_and(|kept| kept.pid != std::process::id() && running_client(kept.pid))
    }

    /// The token of a seat kept under this name by a client that is no
    /// longer running (a crash, a kill), claimed for this process; `None`
    /// when there is none, it is another name's, or a running client plays it.
    pub fn take_back(&self) -> Option<String> {
        let kept = self.read()?;
        if kept.name != self.name || (kept.pid != std::process::id() && running_client(kept.pid)) {
            return None;
        }
        self.keep(&kept.token);
        Some(kept.token)
    }

    /// Keeps `token` as this process's seat, unless another running client
    /// with the same name keeps its own there (its seat is not overwritten).
    /// Best effort: a seat that cannot be kept is only not resumable after a crash.
    pub fn keep(&self, token: &str) {
        if self.held_by_another() {
            return;
        }
        let doc = json!({"name": self.name, "token": token, "pid": std::process::id()});
        let _ = write_atomically(&self.path, doc.to_string().as_bytes());
    }

    /// Forgets the seat (its game is over), if it is this process's.
    pub fn forget(&self) {
        if self.read().is_some_and(|kept| kept.pid == std::process::id()) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes `bytes` to a temporary file beside `path`, readable only by the
/// user, and renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(parent)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Whether process `pid` is running and is this same program (a `ttt`):
/// read from `/proc`, so a pid reused by another program does not count.
/// Where there is no `/proc`, no other process counts as running.
fn running_client(pid: u32) -> bool {
    let Ok(me) = std::fs::read_to_string("/proc/self/comm") else { return false };
    let same = std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|them| them == me);
    // A killed client its parent has not reaped yet (a zombie) runs no more.
    same && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| is_dead(&stat))
}

/// Whether a `/proc/PID/stat` line is a process that has exited (zombie or
/// dead): its state follows the command name, which ends at the last `)`.
fn is_dead(stat: &str) -> bool {
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
    matches!(state, Some('Z' | 'X'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ttt-seats-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_zombie_is_not_a_running_client() {
        assert!(is_dead("7525 (ttt) Z 1 7525 7525 0 -1"));
        assert!(is_dead("7525 (a) b) Z) X 1"));
        assert!(!is_dead("7525 (ttt) S 1 7525"));
        assert!(!is_dead("garbage"));
        // A child that exited and is not reaped yet is a zombie.
        let mut child = std::process::Command::new("true").spawn().expect("run true");
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| is_dead(&s)) {
            assert!(std::time::Instant::now() < deadline, "the child never exited");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = child.wait();
    }

    /// A pid that no process has any more: a child that has exited.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().expect("run true");
        let pid = child.id();
        let _ = child.wait();
        pid
    }

    fn plant(seats: &Seats, name: &str, token: &str, pid: u32) {
        let doc = json!({"name": name, "token": token, "pid": pid});
        write_atomically(&seats.path, doc.to_string().as_bytes()).expect("write");
    }

    #[test]
    fn each_name_has_its_own_file_and_takes_back_only_its_own_seat() {
        let dir = scratch("names");
        let ann = Seats::in_dir(&dir, "ws://h:1/", "ann");
        let bob = Seats::in_dir(&dir, "ws://h:1/", "bob");
        assert_ne!(ann.path(), bob.path());
        // Names that differ only in characters a file name cannot hold still differ.
        assert_ne!(Seats::in_dir(&dir, "s", "a b").path(), Seats::in_dir(&dir, "s", "a_b").path());
        assert_ne!(Seats::in_dir(&dir, "s", "Ann").path(), Seats::in_dir(&dir, "s", "ann").path());
        // A client that died mid-game left ann's seat: ann takes it back, bob does not see it.
        plant(&ann, "ann", "tok-ann", dead_pid());
        assert_eq!(bob.take_back(), None);
        assert_eq!(ann.take_back().as_deref(), Some("tok-ann"));
        // Claimed: the file is now this process's, and forgetting removes it.
        assert_eq!(ann.read().map(|k| k.pid), Some(std::process::id()));
        ann.forget();
        assert!(!ann.path().exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_seat_file_naming_someone_else_is_never_resumed() {
        let dir = scratch("other");
        let ann = Seats::in_dir(&dir, "ws://h:1/", "ann");
        plant(&ann, "bob", "tok-bob", dead_pid());
        assert_eq!(ann.take_back(), None, "the file says bob: not ann's seat");
        // Junk and an old token-only file are no seat at all.
        std::fs::write(&ann.path, "tok-without-a-name").expect("write");
        assert_eq!(ann.take_back(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keeping_writes_whole_files_and_forget_leaves_another_process_file() {
        let dir = scratch("keep");
        let ann = Seats::in_dir(&dir, "ws://h:1/", "ann");
        ann.keep("t1");
        ann.keep("t2");
        assert_eq!(ann.read().map(|k| k.token), Some("t2".to_owned()));
        let leftovers: Vec<_> = std::fs::read_dir(ann.path.parent().expect("dir"))
            .expect("list")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "no temporary file left behind");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&ann.path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "readable only by the user");
        }
        // A file written by another process (here: one that has ended) is not ours to forget.
        plant(&ann, "ann", "theirs", dead_pid());
        ann.forget();
        assert!(ann.path().exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn only_a_running_copy_of_this_program_holds_a_seat() {
        assert!(running_client(std::process::id()));
        assert!(!running_client(dead_pid()));
        let mut sleeper = std::process::Command::new("sleep").arg("10").spawn().expect("run sleep");
        let other_program = running_client(sleeper.id());
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        assert!(!other_program, "a pid now used by another program holds nothing");
    }
}
