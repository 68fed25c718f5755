//! The resume token of the game `ttt play` is in, kept on disk while the game
//! lasts (`$TTT_STATE_DIR`, else `$XDG_STATE_HOME/ttt`, else
//! `~/.local/state/ttt`, readable only by the user), so that `ttt play`
//! started again after a crash or a kill takes the seat back.
//!
//! Each running client keeps its seat in a file of its own
//! (`seats/NAME.NONCE.seat`), holding the name, what the command asked for
//! (quick match, `--create`, `--join CODE`, …), the servers it was given,
//! the token, and the id of the process that plays it. A client started
//! again takes back a seat whose process is gone and that was kept under
//! the same name, asking for the same thing, on a server it is given
//! (whichever of a `--server` list it was playing on): two players on one
//! machine with the same name (or none) each get their own seat back, never
//! the other's, and never one a running `ttt` still plays. Taking a seat
//! back renames its file first, so two clients started at once never both
//! get it. Files are written whole to a temporary file and renamed, so a
//! kill mid-write leaves the old file or the new one, never half of one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tictactoe_protocol::Player;

/// How old a seat file of a client that is gone may be before it is
/// deleted rather than taken back: no server holds a seat that long.
const STALE: Duration = Duration::from_secs(24 * 3600);

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
/// other byte written `%XX`, so that different names never share a prefix.
fn name_key(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A server URL as compared between seats: without a trailing `/`.
fn server_id(url: &str) -> String {
    url.trim_end_matches('/').to_owned()
}

/// The seat one `ttt play` process keeps on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seats {
    /// The directory of all seat files.
    dir: PathBuf,
    /// This process's own file.
    path: PathBuf,
    name: String,
    /// What the command asks for ([`crate::request::Start::key`]).
    ask: String,
    servers: Vec<String>,
}

/// What a seat file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    name: String,
    ask: String,
    servers: Vec<String>,
    token: String,
    /// The mark the seat plays, when it was known.
    mark: Option<Player>,
    pid: u32,
}

impl Seats {
    /// The seat of `name` asking for `ask` on `servers` (the `--server`
    /// list), if there is a state directory.
    pub fn for_player(servers: &str, name: &str, ask: &str) -> Option<Seats> {
        Some(Seats::in_dir(&dir()?, servers, name, ask))
    }

    /// The seat of `name` asking for `ask` on `servers`, kept under `dir`.
    pub fn in_dir(dir: &Path, servers: &str, name: &str, ask: &str) -> Seats {
        let dir = dir.join("seats");
        // The pid alone could be reused by a later client while this one's file is left.
        let nonce = format!("{}-{:08x}", std::process::id(), rand::random::<u32>());
        Seats {
            path: dir.join(format!("{}.{nonce}.seat", name_key(name))),
            dir,
            name: name.to_owned(),
            ask: ask.to_owned(),
            servers: crate::servers::urls(servers).iter().map(|u| server_id(u)).collect(),
        }
    }

    /// The file this process keeps its seat in.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a kept seat is one this client may take back: its own name
    /// and request, a server in common, and no running client playing it.
    fn is_mine(&self, kept: &Kept) -> bool {
        kept.name == self.name
            && kept.ask == self.ask
            && kept.servers.iter().any(|s| self.servers.contains(s))
            && kept.pid != std::process::id()
            && !running_client(kept.pid)
    }

    /// The seat files of this name, newest first, with what they hold;
    /// files of clients long gone are deleted on the way.
    fn kept(&self) -> Vec<(PathBuf, Kept)> {
        let prefix = format!("{}.", name_key(&self.name));
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut found: Vec<(SystemTime, PathBuf, Kept)> = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if !file.starts_with(&prefix) || !file.ends_with(".seat") {
                continue;
            }
            let path = entry.path();
            let Some(kept) = read(&path) else { continue };
            let modified = entry.metadata().and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
            let stale = modified.elapsed().is_ok_and(|age| age > STALE);
            if stale && kept.pid != std::process::id() && !running_client(kept.pid) {
                let _ = std::fs::remove_file(&path);
                continue;
            }
            found.push((modified, path, kept));
        }
        found.sort_by_key(|f| std::cmp::Reverse(f.0));
        found.into_iter().map(|(_, path, kept)| (path, kept)).collect()
    }

    /// The token of a seat this client may take back (see [`Seats::is_mine`])
    /// and its mark if known, claimed for this process; `None` when there is none.
    pub fn take_back(&self) -> Option<(String, Option<Player>)> {
        let claim = self.path.with_extension("claim");
        for (path, kept) in self.kept() {
            // The rename decides between two clients started at once: one gets the file.
            if !self.is_mine(&kept) || std::fs::rename(&path, &claim).is_err() {
                continue;
            }
            self.keep(&kept.token, kept.mark);
            let _ = std::fs::remove_file(&claim);
            return Some((kept.token, kept.mark));
        }
        None
    }

    /// Keeps `token` (of a seat playing `mark`) as this process's seat.
    /// Best effort: a seat that cannot be kept is only not resumable after a crash.
    pub fn keep(&self, token: &str, mark: Option<Player>) {
        let doc = json!({
            "name": self.name,
            "ask": self.ask,
            "servers": self.servers,
            "token": token,
            "mark": mark,
            "pid": std::process::id(),
        });
        let _ = write_atomically(&self.path, doc.to_string().as_bytes());
    }

    /// Forgets this process's seat (its game is over).
    pub fn forget(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What the seat file at `path` holds, if it is one.
fn read(path: &Path) -> Option<Kept> {
    let text = std::fs::read_to_string(path).ok()?;
    let doc: Value = serde_json::from_str(&text).ok()?;
    Some(Kept {
        name: doc["name"].as_str()?.to_owned(),
        ask: doc["ask"].as_str()?.to_owned(),
        servers: doc["servers"].as_array()?.iter().filter_map(|s| s.as_str().map(server_id)).collect(),
        token: doc["token"].as_str().filter(|t| !t.is_empty())?.to_owned(),
        mark: serde_json::from_value(doc["mark"].clone()).ok().flatten(),
        pid: u32::try_from(doc["pid"].as_u64()?).ok()?,
    })
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

    /// A seat file as a client that has died left it.
    fn plant(dir: &Path, file: &str, kept: &Kept) {
        let doc = json!({
            "name": kept.name, "ask": kept.ask, "servers": kept.servers, "token": kept.token,
            "mark": kept.mark, "pid": kept.pid,
        });
        write_atomically(&dir.join("seats").join(file), doc.to_string().as_bytes()).expect("write");
    }

    fn left(name: &str, ask: &str, servers: &[&str], token: &str) -> Kept {
        let servers = servers.iter().map(|s| (*s).to_owned()).collect();
        Kept { name: name.into(), ask: ask.into(), servers, token: token.into(), mark: None, pid: dead_pid() }
    }

    #[test]
    fn two_clients_with_one_name_each_take_back_their_own_seat() {
        let dir = scratch("same-name");
        let url = "ws://h:1/";
        // Two `ttt play` with no --name: one created room ABC, the other joined it.
        let creator = Seats::in_dir(&dir, url, "player", "create 3 3 random");
        let joiner = Seats::in_dir(&dir, url, "player", "join ABC");
        assert_ne!(creator.path(), joiner.path(), "a file per process");
        let x = Kept { mark: Some(Player::X), ..left("player", "create 3 3 random", &["ws://h:1"], "tok-x") };
        plant(&dir, "player.1-a.seat", &x);
        plant(&dir, "player.2-b.seat", &left("player", "join ABC", &["ws://h:1"], "tok-o"));
        // Both died; each, started again with its own command, gets its own seat.
        assert_eq!(joiner.take_back(), Some(("tok-o".into(), None)));
        assert_eq!(creator.take_back(), Some(("tok-x".into(), Some(Player::X))));
        // Claimed: kept in each one's own file, with this process's pid.
        assert_eq!(read(joiner.path()).map(|k| (k.token, k.pid)), Some(("tok-o".into(), std::process::id())));
        // Nothing is left for a third client with the same command.
        let third = Seats::in_dir(&dir, url, "player", "join ABC");
        assert_eq!(third.take_back(), None);
        // Another name's seat is never taken back.
        plant(&dir, "bob.3-c.seat", &left("bob", "join ABC", &["ws://h:1"], "tok-bob"));
        plant(&dir, "player.4-d.seat", &left("bob", "join ABC", &["ws://h:1"], "tok-bob2"));
        assert_eq!(third.take_back(), None);
        joiner.forget();
        assert!(!joiner.path().exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_seat_is_found_under_any_server_of_the_list_it_was_kept_with() {
        let dir = scratch("servers");
        plant(&dir, "ann.1-a.seat", &left("ann", "quick 3 3", &["ws://a:1", "ws://b:2"], "tok"));
        // No server in common: another server's seat.
        assert_eq!(Seats::in_dir(&dir, "ws://c:3", "ann", "quick 3 3").take_back(), None);
        // The list in another order, or only the second of its servers.
        assert_eq!(
            Seats::in_dir(&dir, "ws://b:2/, ws://a:1", "ann", "quick 3 3")
                .take_back()
                .map(|t| t.0)
                .as_deref(),
            Some("tok")
        );
        let _ = std::fs::remove_dir_all(&dir);
        plant(&dir, "ann.1-a.seat", &left("ann", "quick 3 3", &["ws://a:1"], "tok"));
        assert_eq!(
            Seats::in_dir(&dir, "ws://b:2,ws://a:1/", "ann", "quick 3 3").take_back().map(|t| t.0).as_deref(),
            Some("tok")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn junk_and_seats_of_long_gone_clients_are_no_seats() {
        let dir = scratch("junk");
        let ann = Seats::in_dir(&dir, "ws://h:1", "ann", "quick 3 3");
        std::fs::create_dir_all(dir.join("seats")).expect("dir");
        std::fs::write(dir.join("seats/ann.1-a.seat"), "tok-without-a-name").expect("write");
        // The layout of older clients (a directory per server) is not read.
        plant(&dir, "ws___h_1/ann.seat", &left("ann", "quick 3 3", &["ws://h:1"], "old"));
        assert_eq!(ann.take_back(), None);
        // A day-old seat of a client that is gone is deleted, not taken back.
        plant(&dir, "ann.2-b.seat", &left("ann", "quick 3 3", &["ws://h:1"], "stale"));
        let old = SystemTime::now() - STALE - Duration::from_secs(60);
        let file = std::fs::File::options().write(true).open(dir.join("seats/ann.2-b.seat")).expect("open");
        file.set_modified(old).expect("age the file");
        assert_eq!(ann.take_back(), None);
        assert!(!dir.join("seats/ann.2-b.seat").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keeping_writes_whole_files_readable_only_by_the_user() {
        let dir = scratch("keep");
        let ann = Seats::in_dir(&dir, "ws://h:1/", "ann", "quick 3 3");
        ann.keep("t1", None);
        ann.keep("t2", Some(Player::O));
        let kept = read(ann.path()).map(|k| (k.token, k.servers, k.mark));
        assert_eq!(kept, Some(("t2".into(), vec!["ws://h:1".into()], Some(Player::O))));
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
        // Names that differ only in characters a file name cannot hold still differ.
        assert_ne!(name_key("a b"), name_key("a_b"));
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
