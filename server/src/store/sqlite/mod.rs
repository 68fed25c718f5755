//! The SQLite backend: opening, checking and migrating the file; the
//! writer's connection ([`SqliteBackend`]) with the thread that checkpoints
//! its log; the readers' connections ([`SqliteReader`]).

mod journal;
mod journal_bytes;
mod legacy;
mod live;
mod lock;
mod read;
mod tournaments;
mod write;

pub use read::SqliteReader;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use rusqlite::{Connection, params};

use crate::core::account::AccountId;
use crate::ratings::Standing;
use crate::store::Restored;
use crate::store::backend::{Backend, BackendError, Commit, Committed};
use crate::store::record::{GameRecord, unix_ms};
use crate::store::row;
use tictactoe_protocol::Rules;

/// The schema's versions, in order, each a numbered file in
/// `server/migrations/`: version N is the first N applied. `PRAGMA
/// user_version` records the version of a file; one newer than this list
/// is refused.
const MIGRATIONS: [(&str, &str); 9] = [
    ("0001_accounts_games_ratings.sql", include_str!("../../../migrations/0001_accounts_games_ratings.sql")),
    ("0002_live_games.sql", include_str!("../../../migrations/0002_live_games.sql")),
    ("0003_house_level.sql", include_str!("../../../migrations/0003_house_level.sql")),
    ("0004_quarantine_heartbeat.sql", include_str!("../../../migrations/0004_quarantine_heartbeat.sql")),
    ("0005_name_skeleton.sql", include_str!("../../../migrations/0005_name_skeleton.sql")),
    ("0006_live_log.sql", include_str!("../../../migrations/0006_live_log.sql")),
    ("0007_fischer_clock.sql", include_str!("../../../migrations/0007_fischer_clock.sql")),
    ("0008_organised_rooms.sql", include_str!("../../../migrations/0008_organised_rooms.sql")),
    ("0009_tournaments.sql", include_str!("../../../migrations/0009_tournaments.sql")),
];

impl From<rusqlite::Error> for BackendError {
    fn from(e: rusqlite::Error) -> BackendError {
        BackendError(e.to_string())
    }
}

/// The writer's connection to a SQLite file, and the thread that moves
/// its log into the file (stopped and waited for when this is dropped).
pub struct SqliteBackend {
    conn: Connection,
    path: PathBuf,
    /// The games in progress as the journal holds them.
    journal: journal::Journal,
    checkpoints: Option<(Sender<()>, std::thread::JoinHandle<()>)>,
    /// A server's hold on the file: no other server opens it meanwhile.
    lock: Option<lock::FileLock>,
}

impl SqliteBackend {
    /// Opens the file at `path`: created if missing, checked, migrated, in
    /// WAL mode (so readers never wait for it). Its checkpoints start with
    /// [`SqliteBackend::start`].
    pub fn open(path: &Path, max_pages: Option<u64>) -> Result<SqliteBackend, String> {
        let conn = open(path, max_pages)?;
        Ok(SqliteBackend {
            conn,
            path: path.to_owned(),
            journal: journal::Journal::default(),
            checkpoints: None,
            lock: None,
        })
    }

    /// Opens the file at `path` as [`SqliteBackend::open`] does, for a
    /// server: first taking the lock beside it (`PATH.lock`), which a
    /// second server on the same file is refused, naming the first one's
    /// pid. The kernel lets the lock go when this process ends.
    pub fn open_for_server(path: &Path, max_pages: Option<u64>) -> Result<SqliteBackend, String> {
        let held = lock::hold(path)?;
        let mut backend = SqliteBackend::open(path, max_pages)?;
        backend.lock = Some(held);
        Ok(backend)
    }

    /// Starts the checkpoints of the log, on a thread and connection of their own.
    pub fn start(&mut self) -> Result<(), String> {
        let conn = checkpointer(&self.path)?;
        let (stop, stopped) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ttt-checkpoint".into())
            .spawn(move || checkpoints(conn, stopped))
            .map_err(|e| format!("cannot start its checkpoint thread: {e}"))?;
        self.checkpoints = Some((stop, thread));
        Ok(())
    }
}

impl Drop for SqliteBackend {
    fn drop(&mut self) {
        if let Some((stop, thread)) = self.checkpoints.take() {
            drop(stop);
            let _ = thread.join();
        }
    }
}

impl Backend for SqliteBackend {
    type Reader = SqliteReader;

    fn commit(&mut self, batch: &Commit<'_>) -> Result<Committed, BackendError> {
        let live = batch.live();
        let (accounts, bytes) = write::commit(&mut self.conn, batch, &live)?;
        self.journal.committed(&live, bytes);
        if self.journal.wants_snapshot() {
            // The commit is done either way: a snapshot that fails is tried after the next.
            if let Err(e) = live::snapshot(&mut self.conn, &mut self.journal) {
                tracing::warn!(
                    "the journal of games in progress could not be compacted (tried again later): {e}"
                );
            }
        }
        // One writer per file: its book is the standings' truth.
        Ok(Committed { accounts, ..Committed::default() })
    }

    fn probe(&mut self) -> Result<(), BackendError> {
        let now = unix_ms(std::time::SystemTime::now());
        self.conn.execute("INSERT OR REPLACE INTO heartbeat (id, at) VALUES (1, ?1)", [now])?;
        Ok(())
    }

    fn standing(&mut self, account: AccountId, rules: Rules) -> Result<Option<Standing>, BackendError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT rating, rd, volatility, games FROM ratings WHERE account = ?1 AND size = ?2 AND win = ?3",
        )?;
        let found = stmt.query_row(params![account, rules.size, rules.win], |r| row::standing(r));
        Ok(rusqlite::OptionalExtension::optional(found)?)
    }

    fn import(&mut self, games: &[GameRecord]) -> Result<usize, BackendError> {
        Ok(write::import(&mut self.conn, games)?)
    }

    fn load(&mut self) -> Result<Restored, BackendError> {
        let (restored, journal) = live::load(&mut self.conn)?;
        self.journal = journal;
        Ok(restored)
    }

    fn reader(&self) -> Result<SqliteReader, BackendError> {
        Ok(SqliteReader::open(&self.path)?)
    }
}

/// Opens `path`, creating it if missing, in WAL mode, checks an existing
/// file (`PRAGMA quick_check`) and applies the migrations it lacks. A file
/// that is not a database, or is damaged, is refused with what to do.
fn open(path: &Path, max_pages: Option<u64>) -> Result<Connection, String> {
    let existed = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    let mut conn = Connection::open(path).map_err(|e| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::CannotOpen) => lock::unopenable(path, &std::io::Error::other(e)),
        _ => e.to_string(),
    })?;
    let damaged = |e: rusqlite::Error| {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match e.sqlite_error_code() {
            Some(NotADatabase | DatabaseCorrupt) => format!(
                "it is not a SQLite database or it is damaged ({e}); restore it from a backup, or move it \
                 away to start with an empty one (every record in it would then be missing)"
            ),
            _ => format!("cannot open it ({e}); check the disk and the file's permissions"),
        }
    };
    // WAL: readers never wait for the writer. FULL sync: a commit is on the
    // disk when it returns, so power loss takes no more than a crash does;
    // commits are batched, so that is a few dozen syncs a second at most.
    conn.pragma_update(None, "journal_mode", "WAL").map_err(damaged)?;
    conn.pragma_update(None, "synchronous", "FULL").map_err(|e| e.to_string())?;
    conn.pragma_update(None, "foreign_keys", "ON").map_err(|e| e.to_string())?;
    // After a checkpoint resets the log, its file is cut back to this.
    conn.pragma_update(None, "journal_size_limit", WAL_KEEP).map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
    // The checkpointer's thread moves the log into the file: a commit never
    // waits for that.
    conn.pragma_update(None, "wal_autocheckpoint", 0).map_err(|e| e.to_string())?;
    if existed {
        let verdict: String = conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(damaged)?;
        if verdict != "ok" {
            return Err(format!(
                "it is damaged (quick_check: {verdict}); restore it from a backup, or try \
                 `sqlite3 FILE .recover` into a new file and start on that"
            ));
        }
    }
    migrate(&mut conn)?;
    if let Some(pages) = max_pages {
        conn.pragma_update(None, "max_page_count", pages).map_err(|e| e.to_string())?;
    }
    Ok(conn)
}

/// Bytes of write-ahead log kept on disk after a checkpoint resets it.
const WAL_KEEP: i64 = 16 << 20;

/// Log frames (pages) past which a checkpoint also resets the log, waiting
/// for the writer's transaction to end: the log stays well below 64 MiB.
const WAL_RESET_FRAMES: i64 = 4096;

/// How often the write-ahead log is copied into the database file.
const CHECKPOINT: Duration = Duration::from_millis(250);

/// A second connection to `path`, for [`checkpoints`].
fn checkpointer(path: &Path) -> Result<Connection, String> {
    let conn = Connection::open(path).map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
    Ok(conn)
}

/// Copies the write-ahead log into the database file every [`CHECKPOINT`]
/// (a passive checkpoint: the writer goes on meanwhile). A writer that
/// commits all the time never lets a passive checkpoint reset the log, so
/// past [`WAL_RESET_FRAMES`] it truncates the log (waiting for the current
/// transaction, then holding the next one for the copy). At `stop` it
/// truncates once more.
fn checkpoints(conn: Connection, stop: Receiver<()>) {
    // Said once when checkpoints start failing and once when they work again.
    let failing = std::cell::Cell::new(false);
    let run = |mode: &str| -> Option<i64> {
        match conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| r.get::<_, i64>(1)) {
            Ok(frames) => {
                if failing.replace(false) {
                    tracing::info!("checkpoints of the database log work again");
                }
                Some(frames)
            }
            Err(e) => {
                if !failing.replace(true) {
                    tracing::warn!("checkpoint of the database log failed (retried every 250 ms): {e}");
                }
                None
            }
        }
    };
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(CHECKPOINT) {
        if run("PASSIVE").is_some_and(|frames| frames >= WAL_RESET_FRAMES) {
            run("TRUNCATE");
        }
    }
    run("TRUNCATE");
}

/// Applies the migrations `conn`'s file lacks, recording each version as it
/// goes; a file of a newer version than this server knows is refused.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), String> {
    let applied: usize =
        conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| e.to_string())?;
    if applied > MIGRATIONS.len() {
        return Err(format!(
            "its schema is version {applied}, newer than this server's {}; run a newer ttt-server",
            MIGRATIONS.len()
        ));
    }
    for (i, (file, sql)) in MIGRATIONS.iter().enumerate().skip(applied) {
        let tx = conn.transaction().map_err(|e| e.to_string())?;
        tx.execute_batch(sql).map_err(|e| format!("migration {} ({file}) failed: {e}", i + 1))?;
        tx.pragma_update(None, "user_version", i + 1).map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())?;
    }
    fill_look_alike_keys(conn).map_err(|e| format!("cannot give accounts their look-alike keys: {e}"))
}

/// Gives every account without one its look-alike key (accounts made
/// before the column). One that looks like an older account keeps none.
fn fill_look_alike_keys(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    let missing: Vec<(i64, String)> = tx
        .prepare("SELECT id, name FROM accounts WHERE name_skeleton IS NULL ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, name) in missing {
        tx.execute(
            "UPDATE OR IGNORE accounts SET name_skeleton = ?1 WHERE id = ?2",
            params![crate::core::text::look_alike_key(&name), id],
        )?;
    }
    tx.commit()
}

#[cfg(test)]
mod live_tests;
#[cfg(test)]
mod tests;
