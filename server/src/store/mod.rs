//! What the server remembers — accounts, finished games, ratings, games in
//! progress — behind one small handle, so that another backend (Postgres, for
//! many instances) can take SQLite's place.
//!
//! Writes go on one queue, read by the writer's thread (`writer`): finished
//! games and every accepted move are put on it without waiting (never
//! blocking the move path) and committed in batches, one transaction per
//! batch, by a [`backend::Backend`]. Reads (the API, sign-in's lookups) go
//! on another queue, to reader threads (`reads`) with connections of their
//! own, so a read never waits behind a batch. A `game_over` is sent once its
//! record is committed, so a query sent after it sees that game; a record
//! that cannot be committed yet is shown from memory.

mod answer;
pub mod backend;
pub mod changes;
pub mod fence;
mod health;
mod held;
mod live;
mod postgres;
pub mod priority;
mod reads;
pub mod record;
mod spill;
mod sqlite;
#[cfg(test)]
pub(super) mod tests;
mod writer;

pub use crate::store::changes::{LiveGame, LiveWrite};
pub use crate::store::health::{Health, STUCK, StoreStats};

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{SyncSender, TrySendError};

use tictactoe_protocol::api;
use tokio::sync::oneshot;

use crate::core::account::{AccountId, TokenHash};
use crate::ratings::{Rated, Standing};
use crate::store::backend::{Backend, NewAccount};
use crate::store::held::Held;
use crate::store::postgres::PgBackend;
pub use crate::store::postgres::{Adopted, LEASE, Leases};
use crate::store::reads::Read;
use crate::store::record::GameRecord;
use crate::store::sqlite::SqliteBackend;
use tictactoe_protocol::Rules;

/// Where the server keeps its records: `--database sqlite:PATH`,
/// `postgres://…` or `none`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// Nothing is kept: no accounts, no records, no ratings.
    None,
    /// A SQLite file (created if missing).
    Sqlite(PathBuf),
    /// A Postgres database, by its URL (`postgres://` or `postgresql://`).
    Postgres(String),
}

impl FromStr for Database {
    type Err = String;

    fn from_str(s: &str) -> Result<Database, String> {
        match s.strip_prefix("sqlite:") {
            _ if s == "none" => Ok(Database::None),
            _ if s.starts_with("postgres://") || s.starts_with("postgresql://") => {
                postgres::config(s)?;
                Ok(Database::Postgres(s.to_owned()))
            }
            Some(path) if !path.is_empty() => Ok(Database::Sqlite(PathBuf::from(path))),
            _ => Err(format!(
                "{s:?} is not a database: use sqlite:PATH (e.g. sqlite:ttt.db), postgres://USER@HOST/DB or none"
            )),
        }
    }
}

impl std::fmt::Display for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Database::None => f.write_str("none"),
            Database::Sqlite(p) => write!(f, "sqlite:{}", p.display()),
            Database::Postgres(url) => f.write_str(&postgres::redacted(url)),
        }
    }
}

/// Most jobs waiting for the store; records and saved moves beyond it are
/// dropped (and counted) rather than held up on the move path.
pub const QUEUE: usize = 65_536;

/// Most finished games held in memory while writes fail (a full disk, say),
/// retried every second; beyond it the oldest are dropped, counted and logged.
pub const BACKLOG: usize = 100_000;

/// An account as sign-in finds it, with its standings in every pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    /// Row id.
    pub id: AccountId,
    /// Name as registered.
    pub name: Arc<str>,
    /// Whether it is a bot's.
    pub bot: bool,
    /// Standings in the pools it has played.
    pub standings: Vec<(Rules, Standing)>,
}

/// Why a store request failed. None carries a database's own words: they
/// go to the log, never to a player or an HTTP answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// An account already has the name (ignoring case), or one that looks like it.
    #[error("an account already has that name")]
    NameTaken,
    /// The server keeps no records.
    #[error("this server keeps no accounts or records")]
    Disabled,
    /// Too many requests are waiting for the store.
    #[error("the server is busy; try again in a moment")]
    Busy,
    /// The database cannot do it now (it cannot write, or it failed to read).
    #[error("the server cannot reach its database right now; try again in a moment")]
    Unavailable,
}

/// A read for the HTTP API; each answers an [`Answer`], or `None` for 404.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// `/api/games/{id}`.
    Game(String),
    /// `/api/players/{name}`.
    Player(String),
    /// `/api/players/{name}/games`: newest first, before the game `before`.
    PlayerGames {
        /// The player's name.
        name: String,
        /// Most games returned.
        limit: usize,
        /// Only games older than this game id.
        before: Option<String>,
    },
    /// `/api/leaderboard`.
    Leaderboard {
        /// The pool.
        rules: Rules,
        /// Most players returned.
        limit: usize,
    },
}

/// What an API query answers: the body of a 200, as the contract spells it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum Answer {
    /// `/api/games/{id}`.
    Game(api::GameRecord),
    /// `/api/players/{name}`.
    Player(api::PlayerProfile),
    /// `/api/players/{name}/games`.
    PlayerGames(api::PlayerGames),
    /// `/api/leaderboard`.
    Leaderboard(api::Leaderboard),
}

/// What became of a finished game's record, as its room hears it: what
/// `game_over` waits for, and the ratings it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Committed, with the ratings the record keeps (`None`: not rated).
    Written(Option<[Rated; 2]>),
    /// Not written yet: the store cannot write; the record waits in memory
    /// and is retried. The ratings as this instance's writer rated them.
    Waiting(Option<[Rated; 2]>),
    /// Refused: another instance adopted this game while this one was cut
    /// off or stalled, and holds or recorded it. Nothing of it may be said.
    Refused,
}

/// What a room waits for after it gave the store a finished game: the
/// [`Outcome`], once the commit holding the record is over (while the
/// store writes), or once it is rated (while it cannot). `answer` is `None`
/// when there is nothing to wait for (a game nobody rates, while the store
/// cannot write).
pub struct Recorded {
    /// The outcome, when it comes.
    pub answer: Option<oneshot::Receiver<Outcome>>,
}

/// When the writer answers for a record.
enum Tell {
    /// Once it is rated: the store cannot write, nobody waits for the commit.
    Rated(oneshot::Sender<Outcome>),
    /// Once the commit holding it is over (or the store stopped writing).
    Committed(oneshot::Sender<Outcome>),
    /// Nobody waits.
    Nobody,
}

/// A write for the writer's thread.
enum Job {
    /// A finished game, and who waits for what became of it.
    Record(Box<GameRecord>, Tell),
    /// A change to a game in progress.
    Live(LiveWrite),
    /// An account to create, and who waits for it.
    Register(NewAccount, oneshot::Sender<Result<Account, StoreError>>),
    /// An account's standings as a sign-in read them: the writer rates its
    /// next game from them without reading the database (which may be down).
    Known(AccountId, Vec<(Rules, Standing)>),
    /// Games adopted from another instance, in the database already, and
    /// their players' standings.
    Adopted(Vec<Arc<str>>, Vec<(AccountId, Rules, Standing)>),
    /// Commit what is queued now; told whether everything is written.
    Flush(oneshot::Sender<bool>),
}

/// An opened store: the handle, its writer's thread, the games in progress
/// it holds, and in a cluster its leases.
pub struct Opened {
    /// The handle the server's tasks share.
    pub store: Store,
    /// The writer's thread, joined at the end.
    pub thread: StoreThread,
    /// The games in progress this start holds.
    pub restored: Restored,
    /// This instance's leases on games in progress (in a cluster).
    pub leases: Option<Leases>,
}

/// What the store held when it opened: the games in progress when the
/// server last stopped, and their players' standings in those games' pools.
#[derive(Debug, Default)]
pub struct Restored {
    /// The saved games.
    pub games: Vec<LiveGame>,
    /// Each account's standing in the pool of a game it plays in.
    pub standings: Vec<(AccountId, Rules, Standing)>,
}

/// A handle on the store; cheap to clone. With `--database none` every
/// request says [`StoreError::Disabled`] and records go nowhere.
#[derive(Clone)]
pub struct Store {
    tx: Option<SyncSender<Job>>,
    reads: Option<SyncSender<Read>>,
    held: Arc<Held>,
    stats: Arc<StoreStats>,
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
        let held = Arc::new(Held::default());
        match db {
            Database::None => Ok(Opened {
                store: Store { tx: None, reads: None, held, stats },
                thread: StoreThread(None),
                restored: Restored::default(),
                leases: None,
            }),
            Database::Sqlite(path) => {
                let named = |e: String| format!("database {}: {e}", path.display());
                if cluster {
                    return Err(named("a cluster keeps its games in Postgres, not SQLite".into()));
                }
                let mut backend = SqliteBackend::open_for_server(path, max_pages).map_err(named)?;
                backend.start().map_err(named)?;
                Store::start(backend, spill_dir, stats, held, named)
            }
            Database::Postgres(url) => {
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
                        Ok(Opened { leases, ..Store::start(backend, spill_dir, stats, held, named)? })
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
        held: Arc<Held>,
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
        let reads =
            reads::start(readers, held.clone()).map_err(|e| named(format!("cannot start a reader: {e}")))?;
        let saved = restored.games.iter().map(|g| g.room.clone()).collect();
        let standings = restored.standings.clone();
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let shared = writer::Shared { stats: stats.clone(), held: held.clone() };
        let thread = std::thread::Builder::new()
            .name("ttt-store".into())
            .spawn(move || writer::run(db, rx, shared, saved, standings))
            .map_err(|e| named(format!("cannot start its thread: {e}")))?;
        let handle = StoreThread(Some((thread, spill_dir.to_owned())));
        Ok(Opened {
            store: Store { tx: Some(tx), reads: Some(reads), held, stats },
            thread: handle,
            restored,
            leases: None,
        })
    }

    /// Whether records are kept.
    pub fn enabled(&self) -> bool {
        self.tx.is_some()
    }

    /// Whether games in progress can be saved: records are kept and the
    /// store writes. At shutdown, a server whose store is failing ends its
    /// games (`shutdown`) rather than promise players a restore it cannot keep.
    pub fn healthy(&self) -> bool {
        self.enabled() && self.health() == Health::Ok
    }

    /// Whether what needs the store may start now: no store at all, or one
    /// that writes. New games, sign-ins and registrations wait for this.
    pub fn can_write(&self) -> bool {
        !self.enabled() || self.health() == Health::Ok
    }

    /// The store's health as `/healthz` tells it.
    pub fn health(&self) -> Health {
        if !self.enabled() {
            return Health::Disabled;
        }
        self.stats.health()
    }

    /// The store's counters.
    pub fn stats(&self) -> &Arc<StoreStats> {
        &self.stats
    }

    fn try_put(&self, job: Job) -> Result<(), StoreError> {
        let tx = self.tx.as_ref().ok_or(StoreError::Disabled)?;
        let depth = self.stats.queued.fetch_add(1, Ordering::Relaxed) + 1;
        self.stats.max_queued.fetch_max(depth, Ordering::Relaxed);
        match tx.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                self.stats.queued.fetch_sub(1, Ordering::Relaxed);
                Err(StoreError::Busy)
            }
            Err(TrySendError::Disconnected(_)) => {
                self.stats.queued.fetch_sub(1, Ordering::Relaxed);
                Err(StoreError::Unavailable)
            }
        }
    }

    /// Tells the writer that `rooms` hold games adopted from another
    /// instance, with these players' `standings`: when they end, their rows
    /// go. Waits for room on the queue (off the server's runtime): lost, the
    /// adopted games' rows would outlive them.
    pub fn adopted(&self, rooms: Vec<Arc<str>>, standings: Vec<(AccountId, Rules, Standing)>) {
        if let Some(tx) = &self.tx {
            self.stats.queued.fetch_add(1, Ordering::Relaxed);
            if tx.send(Job::Adopted(rooms, standings)).is_err() {
                self.stats.queued.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Commits everything queued so far, at once: whether all of it is
    /// written (at a stop, before this instance lets its games go; a full
    /// queue is waited on, off the runtime's threads' time).
    pub async fn flush(&self) -> bool {
        let Some(tx) = &self.tx else { return true };
        let (done, wait) = oneshot::channel();
        let mut job = Job::Flush(done);
        loop {
            self.stats.queued.fetch_add(1, Ordering::Relaxed);
            match tx.try_send(job) {
                Ok(()) => break,
                Err(TrySendError::Full(back)) => {
                    self.stats.queued.fetch_sub(1, Ordering::Relaxed);
                    job = back;
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                Err(TrySendError::Disconnected(_)) => {
                    self.stats.queued.fetch_sub(1, Ordering::Relaxed);
                    return false;
                }
            }
        }
        wait.await.unwrap_or(false)
    }

    /// Queues a finished game for writing, without waiting. The answer
    /// brings its ratings and, while the store writes, says when the commit
    /// holding it is done (what `game_over` waits for); while it cannot, the
    /// record waits in memory and nobody waits for its commit. A full queue
    /// drops it (`None`): logged and counted.
    pub fn record(&self, record: Box<GameRecord>) -> Option<Recorded> {
        if !self.enabled() {
            return None;
        }
        let id = record.id.clone();
        let accounts = [record.players[0].account, record.players[1].account];
        let rated = crate::ratings::rated_pair(accounts, record.reason).is_some();
        let (tell, answer) = match (self.can_write(), rated) {
            (true, _) => {
                let (tx, rx) = oneshot::channel();
                (Tell::Committed(tx), Some(rx))
            }
            (false, true) => {
                let (tx, rx) = oneshot::channel();
                (Tell::Rated(tx), Some(rx))
            }
            (false, false) => (Tell::Nobody, None),
        };
        if !matches!(tell, Tell::Committed(_)) {
            // Its players are told it ended without waiting: the API shows
            // it from memory until it is written.
            self.held.keep([&*record]);
        }
        match self.try_put(Job::Record(record, tell)) {
            Ok(()) => Some(Recorded { answer }),
            Err(_) => {
                self.held.forget([&id]);
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                tracing::error!(game = %id, "game record not kept: the store's queue is full");
                None
            }
        }
    }

    /// Queues a change to a game in progress, without waiting. A full queue
    /// loses it (counted, and logged now and then): a crash then restores
    /// that game as of the move before.
    pub fn save(&self, write: LiveWrite) {
        if !self.enabled() {
            return;
        }
        if self.try_put(Job::Live(write)).is_err() {
            let lost = self.stats.live_dropped.fetch_add(1, Ordering::Relaxed);
            if lost.is_power_of_two() || lost == 0 {
                tracing::error!(lost = lost + 1, "a move was not saved: the store's queue is full");
            }
        }
    }

    /// Creates an account whose token hashes to `token`.
    pub async fn register(&self, name: &str, bot: bool, token: TokenHash) -> Result<Account, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.try_put(Job::Register(NewAccount { name: name.to_owned(), bot, token }, reply))?;
        answer.await.unwrap_or(Err(StoreError::Unavailable))
    }

    /// Puts a read on the readers' queue and waits for its answer.
    async fn read<T>(
        &self,
        read: impl FnOnce(oneshot::Sender<Result<T, StoreError>>) -> Read,
    ) -> Result<T, StoreError> {
        let reads = self.reads.as_ref().ok_or(StoreError::Disabled)?;
        let (reply, answer) = oneshot::channel();
        match reads.try_send(read(reply)) {
            Ok(()) => answer.await.unwrap_or(Err(StoreError::Unavailable)),
            Err(TrySendError::Full(_)) => Err(StoreError::Busy),
            Err(TrySendError::Disconnected(_)) => Err(StoreError::Unavailable),
        }
    }

    /// The account called `name` (ignoring case), else one whose name looks
    /// like it (`text::look_alike_key`), with its token's hash, if any.
    pub async fn account(&self, name: &str) -> Result<Option<(Account, TokenHash)>, StoreError> {
        let found = self.read(|reply| Read::Account(name.to_owned(), reply)).await?;
        if let Some((account, _)) = &found {
            // Lost on a full queue, the writer reads the standings itself.
            let _ = self.try_put(Job::Known(account.id, account.standings.clone()));
        }
        Ok(found)
    }

    /// Answers an API query, or `None` when there is no such thing.
    pub async fn query(&self, query: Query) -> Result<Option<Answer>, StoreError> {
        self.read(|reply| Read::Query(query, reply)).await
    }
}
