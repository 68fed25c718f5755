//! One server per SQLite file: an OS lock on a file beside the database
//! (`ttt.db.lock`), holding the pid of the server that has it. The kernel
//! lets it go when that process ends, however it ends (`kill -9`
//! included), so a restart after a crash is never refused; a second server
//! started on a file another is using is, naming the file and the other's
//! pid. And the reasons a file cannot be opened at all (a directory that
//! is missing, or that this user may not write), with what to do.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The lock on a database file, held while this value lives.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// The lock file of database `path`: `PATH.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the lock on database `path` for this process, writing its pid in
/// the lock file; refused, with whose it is, while another process has it.
pub fn hold(path: &Path) -> Result<FileLock, String> {
    let lock = lock_path(path);
    // Not truncated on open: while another has the lock, its pid is read.
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock)
        .map_err(|e| unopenable(&lock, &e))?;
    match try_lock(&file) {
        Ok(true) => {}
        Ok(false) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let pid = pid.trim();
            let who = match pid.parse::<u32>() {
                Ok(pid) => format!("another ttt-server (pid {pid})"),
                Err(_) => "another ttt-server (its pid is not written yet)".to_owned(),
            };
            return Err(format!(
                "{who} is using this file (it holds {}); one server per SQLite file: stop that one \
                 first, or start this one with another --database (for many instances, use Postgres)",
                lock.display()
            ));
        }
        Err(e) => return Err(format!("cannot lock {}: {e}", lock.display())),
    }
    let written = file
        .set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .and_then(|()| file.flush());
    written.map_err(|e| format!("cannot write this server's pid in {}: {e}", lock.display()))?;
    Ok(FileLock { _file: file })
}

/// Takes an exclusive `flock` on `file` without waiting: false while
/// another open file (another process) has it.
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Elsewhere there is no lock: the server runs on Unix.
#[cfg(not(unix))]
fn try_lock(_: &File) -> std::io::Result<bool> {
    Ok(true)
}

/// Why `path` (a file that was to be created or opened for writing)
/// could not be, and what to do: its directory is missing or not
/// writable, or something else the error names.
pub fn unopenable(path: &Path, e: &std::io::Error) -> String {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    if dir.exists() && !dir.is_dir() {
        return format!(
            "cannot create {}: {} is a file, not a directory; point --database at a file in a directory",
            path.display(),
            dir.display()
        );
    }
    if !dir.exists() {
        return format!(
            "cannot create {}: its directory {} does not exist; create it (mkdir -p {}) or point \
             --database at a directory that does",
            path.display(),
            dir.display(),
            dir.display()
        );
    }
    match e.kind() {
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => format!(
            "cannot create or write {}: this user may not write in {} ({e}); give it the directory \
             (e.g. chown it to the user ttt-server runs as) or point --database at one it may write",
            path.display(),
            dir.display()
        ),
        _ => format!(
            "cannot open {} ({e}); check that the user ttt-server runs as may read and write it \
             and its directory {}",
            path.display(),
            dir.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_file_is_beside_the_database() {
        assert_eq!(lock_path(Path::new("/var/lib/ttt/ttt.db")), Path::new("/var/lib/ttt/ttt.db.lock"));
        assert_eq!(lock_path(Path::new("ttt.db")), Path::new("ttt.db.lock"));
    }

    #[test]
    fn a_missing_directory_is_named_with_what_to_do() {
        let path = Path::new("/no/such/dir/ttt.db");
        let e = std::io::Error::from(ErrorKind::NotFound);
        let said = unopenable(path, &e);
        assert!(said.contains("/no/such/dir does not exist") && said.contains("mkdir -p"), "{said}");
    }
}
