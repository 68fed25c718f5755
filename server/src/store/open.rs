//! Opening the store: the backend the `--database` names, what earlier
//! stops spilled put back, the games in progress read, and the writer's
//! and readers' threads started; and at the end, waiting for the writer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::core::account::AccountId;
use crate::ratings::Standing;
use crate::store::backend::Backend;
use crate::store::postgres::PgBackend;
use crate::store::record::GameRecord;
use crate::store::sqlite::SqliteBackend;
use crate::store::unwritten::Unwritten;
use crate::store::{Database, Leases, LiveGame, QUEUE, Store, StoreStats, reads, spill, writer};
use tictactoe_protocol::Rules;

/// An opened store: the handle, its writer's thread, the games in progress
/// it holds, and in a cluster its leases.
pub struct Opened {
    /// The handle the server's tasks share.
    pub store: Store,
    /// The writer's thread, joined at the end.
    pub thread: StoreThread,
    /// To be opened again as rooms: the games in progress this start holds.
    pub restored: Restored,
    /// This instance's leases on games in progress (in a cluster).
    pub leases: Option<Leases>,
}

/// What the store held when it opened: the games in progress when the
/// server last stopped, and their players' standings in those games' pools.
#[derive(Debug, Default)]
pub struct Restored {
    /// As of their last saved move, to be played on.
    pub games: Vec<LiveGame>,
    /// Each account's standing in the pool of a game it plays in.
    pub standings: Vec<(AccountId, Rules, Standing)>,
}

/// The store's thread, to wait for at shutdown: it ends once every handle
/// is dropped and what was queued is written.
pub struct StoreThread(Option<(std::thread::JoinHandle<Vec<GameRecord>>, PathBuf)>);

impl StoreThread {
    /// Waits for the queue to be written out. What could not be (the
    /// database still refused writes) is spilled to a file in the spill
    /// directory, or to stderr if not even that works; the error says where.
    pub fn join(self) -> Result<(), String> {
        let Some((thread, dir)) = self.0 else { return Ok(()) };
        let unsaved = thread.join().unwrap_or_default();
        if unsaved.is_empty() {
            return Ok(());
        }
        let n = unsaved.len();
        match spill::write(&dir, &unsaved) {
            Ok(path) => {
                tracing::error!(games = n, file = %path.display(), "game records the database refused are in this file");
                Err(format!(
                    "{n} game records could not be written to the database; they are in {0} \
                     (`ttt-server import {0}` puts them back; the next start does it by itself)",
                    path.display()
                ))
            }
            Err(e) => {
                tracing::error!(games = n, dir = %dir.display(), "cannot write the unsaved games to a file ({e}): they follow on stderr");
                for line in spill::lines(&unsaved) {
                    eprintln!("{line}");
                }
                Err(format!(
                    "{n} game records could not be written to the database nor to {}: they were printed to \
                     stderr as JSON lines (save them to a file and `ttt-server import` it)",
                    dir.display()
                ))
            }
        }
    }
}

/// Puts the records of spill file `file` into `db`; how many were new.
pub fn import(db: &Database, file: &Path) -> Result<usize, String> {
    let games = spill::read(file)?;
    let named = |e: String| format!("database {db}: {e}");
    let new = match db {
        Database::None => {
            return Err("import needs a database (--database sqlite:PATH or postgres://…)".into());
        }
        Database::Sqlite(path) => SqliteBackend::open(path, None).map_err(named)?.import(&games),
        Database::Postgres(url) => std::thread::scope(|s| {
            s.spawn(|| PgBackend::open(url, "import", false).map_err(named).map(|mut db| db.import(&games)))
                .join()
                .unwrap_or_else(|_| Err(named("the import failed".into())))
        })?,
    };
    new.map_err(|e| named(format!("the import failed: {e}")))
}

impl Store {
    /// Opens (creating and migrating) the database. An error names the file
    /// and the reason: the server must not start without its records.
    /// `max_pages` caps the file's size in pages (SQLite's `max_page_count`).
    /// Spill files left in `spill_dir` by a stop whose database could not
    /// be written are imported first (and renamed `….imported`), so that
    /// the games they ended are not opened again.
    /// What it returns besides the handle: the games that were in progress
    /// when the server last stopped, to be opened again (on Postgres, now
    /// held by `instance`). In a `cluster` (Postgres only) a start takes
    /// only its own games back, and the leases come with it.
    pub fn open(
        db: &Database,
        max_pages: Option<u64>,
        spill_dir: &Path,
        instance: &str,
        cluster: bool,
    ) -> Result<Opened, String> {
        let stats = Arc::new(StoreStats::default());
        let unwritten = Arc::new(Unwritten::default());
        match db {
            Database::None => Ok(Opened {
                store: Store { tx: None, reads: None, unwritten, stats },
                thread: StoreThread(None),
                restored: Restored::default(),
                leases: None,
            }),
            Database::Sqlite(path) => {
                let courier = writer::Courier::start();
                let named = |e: String| format!("database {}: {e}", path.display());
                if cluster {
                    return Err(named("a cluster keeps its games in Postgres, not SQLite".into()));
                }
                let mut backend = SqliteBackend::open_for_server(path, max_pages).map_err(named)?;
                backend.start().map_err(named)?;
                Store::start(backend, spill_dir, stats, unwritten, courier, named)
            }
            Database::Postgres(url) => {
                // Started here, on the server's runtime, not on the thread below.
                let courier = writer::Courier::start();
                let named = |e: String| format!("database {db}: {e}");
                // The backend's calls block on a runtime of its own, which
                // cannot be done on a thread that runs the server's.
                std::thread::scope(|s| {
                    s.spawn(|| {
                        let backend = PgBackend::open(url, instance, cluster).map_err(named)?;
                        let leases = match cluster {
                            true => Some(backend.leases().map_err(|e| named(e.0))?),
                            false => None,
                        };
                        Ok(Opened {
                            leases,
                            ..Store::start(backend, spill_dir, stats, unwritten, courier, named)?
                        })
                    })
                    .join()
                    .unwrap_or_else(|_| Err(named("opening it failed".into())))
                })
            }
        }
    }

    /// Puts back what earlier stops spilled, reads the saved games, and
    /// starts the writer and the readers over `db`. `named` says which
    /// database an error of the database is about.
    fn start<B: Backend>(
        mut db: B,
        spill_dir: &Path,
        stats: Arc<StoreStats>,
        unwritten: Arc<Unwritten>,
        courier: writer::Courier,
        named: impl Fn(String) -> String,
    ) -> Result<Opened, String> {
        for file in spill::waiting(spill_dir) {
            let games = spill::read(&file)?;
            let new = db.import(&games).map_err(|e| named(format!("importing {}: {e}", file.display())))?;
            let done = file.with_extension("jsonl.imported");
            std::fs::rename(&file, &done)
                .map_err(|e| format!("{} was imported but cannot be renamed: {e}", file.display()))?;
            tracing::warn!(file = %file.display(), games = games.len(), new, "unsaved games of an earlier stop imported");
        }
        let restored = db.load().map_err(|e| named(format!("reading the games in progress: {e}")))?;
        let readers = (0..reads::READERS)
            .map(|_| db.reader())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| named(format!("cannot open a reader: {e}")))?;
        let reads = reads::start(readers, unwritten.clone())
            .map_err(|e| named(format!("cannot start a reader: {e}")))?;
        let saved = restored.games.iter().map(|g| g.room.clone()).collect();
        let standings = restored.standings.clone();
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let published = writer::Published { stats: stats.clone(), unwritten: unwritten.clone(), courier };
        let thread = std::thread::Builder::new()
            .name("ttt-store".into())
            .spawn(move || writer::run(db, rx, published, saved, standings))
            .map_err(|e| named(format!("cannot start its thread: {e}")))?;
        let handle = StoreThread(Some((thread, spill_dir.to_owned())));
        Ok(Opened {
            store: Store { tx: Some(tx), reads: Some(reads), unwritten, stats },
            thread: handle,
            restored,
            leases: None,
        })
    }
}
