//! The resume token of the game `ttt play` is in, kept on disk while the game
//! lasts (`$TTT_STATE_DIR`, else `$XDG_STATE_HOME/ttt`, else
//! `~/.local/state/ttt`; one file per server, readable only by the user), so
//! that `ttt play` started again after a crash or a kill takes the seat back.

use std::io::Write;
use std::path::PathBuf;

fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("TTT_STATE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME") {
        return Some(PathBuf::from(d).join("ttt"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("state").join("ttt"))
}

/// The file that keeps the seat on `server`, if there is a state directory.
pub fn file(server: &str) -> Option<PathBuf> {
    Some(dir()?.join("seats").join(format!("{}.token", crate::accounts::server_key(server))))
}

/// The token kept in `path`, if any.
pub fn load(path: &PathBuf) -> Option<String> {
    let token = std::fs::read_to_string(path).ok()?;
    let token = token.trim();
    (!token.is_empty()).then(|| token.to_owned())
}

/// Keeps `token` in `path`, for the user alone. Best effort: a seat that
/// cannot be kept is only not resumable after a crash.
pub fn save(path: &PathBuf, token: &str) {
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    if let Ok(mut f) = options.open(path) {
        let _ = f.write_all(token.as_bytes());
    }
}

/// Forgets the seat: its game is over.
pub fn remove(path: &PathBuf) {
    let _ = std::fs::remove_file(path);
}
