//! The SQLite backend: opening and migrating the file, and the thread that
//! owns the connection and works through the store's queue.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OptionalExtension, Transaction, params};
use skillratings::glicko2::Glicko2Rating;

use super::json;
use super::live::{Fold, HOLD};
use super::{Account, Job, StoreError, StoreStats};
use crate::account::{TokenHash, name_key};
use crate::live::LiveWrite;
use crate::ratings::Standing;
use crate::record::{GameRecord, unix_ms};
use crate::rules::Rules;

/// The schema's versions, in order; `PRAGMA user_version` says how many are applied.
const MIGRATIONS: [&str; 3] = [
    include_str!("../../migrations/0001_accounts_games_ratings.sql"),
    include_str!("../../migrations/0002_live_games.sql"),
    include_str!("../../migrations/0003_house_level.sql"),
];

/// Most jobs taken off the queue at once; their writes share a transaction.
const BATCH: usize = 8192;

/// Most games kept in memory while writes fail (a full disk, say), retried
/// every [`RETRY`]; beyond it the oldest are dropped, counted and logged.
const BACKLOG: usize = 100_000;

/// How often failed writes are retried.
const RETRY: Duration = Duration::from_secs(1);

/// Opens `path`, creating it if missing, in WAL mode, and applies the
/// migrations it lacks.
pub(super) fn open(path: &Path, max_pages: Option<u64>) -> Result<Connection, String> {
    let mut conn = Connection::open(path).map_err(|e| e.to_string())?;
    // WAL: readers never wait for the writer. FULL sync: a commit is on the
    // disk when it returns, so power loss takes no more than a crash does;
    // commits are batched, so that is a few dozen syncs a second at most.
    conn.pragma_update(None, "journal_mode", "WAL").map_err(|e| e.to_string())?;
    conn.pragma_update(None, "synchronous", "FULL").map_err(|e| e.to_string())?;
    conn.pragma_update(None, "foreign_keys", "ON").map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
    // The checkpointer's thread moves the log into the file: a commit never
    // waits for that.
    conn.pragma_update(None, "wal_autocheckpoint", 0).map_err(|e| e.to_string())?;
    migrate(&mut conn)?;
    if let Some(pages) = max_pages {
        conn.pragma_update(None, "max_page_count", pages).map_err(|e| e.to_string())?;
    }
    Ok(conn)
}

/// How often the write-ahead log is copied into the database file.
const CHECKPOINT: Duration = Duration::from_secs(1);

/// A second connection to `path`, for [`checkpoints`].
pub(super) fn checkpointer(path: &Path) -> Result<Connection, String> {
    let conn = Connection::open(path).map_err(|e| e.to_string())?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(|e| e.to_string())?;
    Ok(conn)
}

/// Copies the write-ahead log into the database file every [`CHECKPOINT`]
/// (a passive checkpoint: the writer goes on meanwhile) until `stop` ends,
/// then once more, truncating the log.
fn checkpoints(conn: Connection, stop: Receiver<()>) {
    let run = |mode: &str| {
        if let Err(e) = conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(())) {
            tracing::warn!("checkpoint of the database log failed: {e}");
        }
    };
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(CHECKPOINT) {
        run("PASSIVE");
    }
    run("TRUNCATE");
}

pub(super) fn migrate(conn: &mut Connection) -> Result<(), String> {
    let applied: usize =
        conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| e.to_string())?;
    if applied > MIGRATIONS.len() {
        return Err(format!(
            "its schema is version {applied}, newer than this server's {}; run a newer ttt-server",
            MIGRATIONS.len()
        ));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(applied) {
        let tx = conn.transaction().map_err(|e| e.to_string())?;
        tx.execute_batch(sql).map_err(|e| format!("migration {} failed: {e}", i + 1))?;
        tx.pragma_update(None, "user_version", i + 1).map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// What the writer holds between transactions: finished games and changes
/// to games in progress, kept (and retried) until a commit succeeds.
#[derive(Default)]
struct Batch {
    records: Vec<GameRecord>,
    live: Fold,
    /// When what is held must be committed: [`HOLD`] after the oldest of it.
    due: Option<Instant>,
    /// After a failed write: when to try again.
    retry: Option<Instant>,
}

impl Batch {
    /// Something written at `at` is held: it is due by `at + HOLD`.
    fn hold(&mut self, at: Instant) {
        let due = at + HOLD;
        self.due = Some(self.due.map_or(due, |d| d.min(due)));
    }

    /// When the next commit should happen, if anything is held.
    fn next_commit(&self) -> Option<Instant> {
        self.retry.or(self.due)
    }
}

/// While writes are held, how often the writer looks at its queue (what an
/// account request or an API query may wait behind them). It sleeps between
/// looks instead of blocking on the queue, so that no sender has to wake it.
const SLICE: Duration = Duration::from_millis(5);

/// The store's thread: takes jobs off the queue until every handle is gone.
/// Writes (finished games, changes to games in progress) are held and
/// committed together at most [`HOLD`] after the oldest of them — one
/// transaction, one sync, for everything in that window; other jobs are
/// answered at once, after a commit of what is held so that they see it.
/// `saved` names the rooms whose games are in the database already.
pub(super) fn run(
    mut conn: Connection,
    checkpointer: Connection,
    rx: Receiver<Job>,
    stats: Arc<StoreStats>,
    saved: Vec<Arc<str>>,
) {
    let (stop_checkpoints, stopped) = std::sync::mpsc::channel();
    let checkpoints = std::thread::Builder::new()
        .name("ttt-checkpoint".into())
        .spawn(move || checkpoints(checkpointer, stopped));
    write_jobs(&mut conn, &rx, &stats, Fold::saved(saved));
    drop(stop_checkpoints);
    if let Ok(t) = checkpoints {
        let _ = t.join();
    }
}

fn write_jobs(conn: &mut Connection, rx: &Receiver<Job>, stats: &StoreStats, live: Fold) {
    let mut batch = Batch { live, ..Batch::default() };
    // Kept across turns: a fresh one would grow (and copy) every time.
    let mut jobs = Vec::with_capacity(BATCH);
    loop {
        match batch.next_commit() {
            None => match rx.recv() {
                Ok(job) => jobs.push(job),
                Err(_) => return stop(conn, &mut batch, stats),
            },
            // Far behind: no pause.
            Some(_) if stats.queued.load(Ordering::Relaxed) >= BATCH => {}
            Some(at) => std::thread::sleep(SLICE.min(at.saturating_duration_since(Instant::now()))),
        }
        let mut gone = false;
        while jobs.len() < BATCH {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    gone = true;
                    break;
                }
            }
        }
        stats.queued.fetch_sub(jobs.len(), Ordering::Relaxed);
        let now = Instant::now();
        for job in jobs.drain(..) {
            match job {
                Job::Record(record) => {
                    batch.hold(now);
                    batch.live.end(&record.room);
                    batch.records.push(*record);
                }
                Job::Live(write) => {
                    batch.hold(match &write {
                        LiveWrite::Move { at, .. } => *at,
                        _ => now,
                    });
                    batch.live.add(write);
                }
                // Other jobs see every record queued before them.
                other => {
                    write(conn, &mut batch, stats);
                    answer(conn, other);
                }
            }
        }
        if gone {
            return stop(conn, &mut batch, stats);
        }
        let behind = stats.queued.load(Ordering::Relaxed) >= BATCH;
        if behind || batch.next_commit().is_some_and(|at| at <= Instant::now()) {
            write(conn, &mut batch, stats);
        }
    }
}

/// Every handle is gone: what is held is written, once more if it fails.
fn stop(conn: &mut Connection, batch: &mut Batch, stats: &StoreStats) {
    write(conn, batch, stats);
    if batch.retry.is_some() {
        write(conn, batch, stats);
    }
    if batch.retry.is_some() {
        tracing::error!(games = batch.records.len(), "stopping with writes that failed");
    }
}

/// Commits everything held in one transaction. On failure it stays (its
/// records up to [`BACKLOG`]), to be retried [`RETRY`] later with what comes next.
fn write(conn: &mut Connection, batch: &mut Batch, stats: &StoreStats) {
    batch.live.take();
    if batch.records.is_empty() && batch.live.is_empty() {
        batch.due = None;
        return;
    }
    let started = Instant::now();
    match commit(conn, batch) {
        Ok(()) => {
            let done = Instant::now();
            let durable = ::metrics::histogram!("ttt_move_durable_seconds");
            let moves = batch.live.committed(done, |age| durable.record(age.as_secs_f64()));
            stats.moves_saved.fetch_add(moves, Ordering::Relaxed);
            stats.written.fetch_add(batch.records.len() as u64, Ordering::Relaxed);
            stats.batches.fetch_add(1, Ordering::Relaxed);
            let took = done - started;
            ::metrics::histogram!("ttt_store_write_seconds").record(took.as_secs_f64());
            let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
            stats.write_micros.fetch_add(micros, Ordering::Relaxed);
            batch.records.clear();
            batch.due = None;
            batch.retry = None;
            stats.failing.store(false, Ordering::Relaxed);
        }
        Err(e) => {
            stats.failing.store(true, Ordering::Relaxed);
            batch.retry = Some(Instant::now() + RETRY);
            stats.failed_writes.fetch_add(1, Ordering::Relaxed);
            let games = batch.records.len();
            tracing::error!(games, "writing to the database failed (will retry): {e}");
            if games > BACKLOG {
                let over = games - BACKLOG;
                batch.records.drain(..over);
                stats.dropped.fetch_add(over as u64, Ordering::Relaxed);
                tracing::error!(games = over, "game records dropped: the backlog of failed writes is full");
            }
        }
    }
    stats.live_dropped.fetch_add(std::mem::take(&mut batch.live.dropped), Ordering::Relaxed);
}

fn commit(conn: &mut Connection, batch: &Batch) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    insert_games(&tx, &batch.records)?;
    batch.live.write(&tx)?;
    tx.commit()
}

fn insert_games(tx: &Transaction<'_>, games: &[GameRecord]) -> rusqlite::Result<()> {
    {
        let mut game = tx.prepare_cached(
            "INSERT INTO games (id, room, size, win, x_name, x_account, x_bot, o_name, o_account, o_bot,
                moves, winner, reason, line, rated, x_before, x_after, o_before, o_after, started_at, ended_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)
             ON CONFLICT (id) DO NOTHING",
        )?;
        let mut rating = tx.prepare_cached(
            "INSERT INTO ratings (account, size, win, rating, rd, volatility, games) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (account, size, win) DO UPDATE SET
                rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, games = excluded.games",
        )?;
        for g in games {
            let [x, o] = &g.players;
            let r = g.ratings.as_ref();
            let rating_of = |i: usize, after: bool| {
                r.map(|r| if after { r[i].after.rating.rating } else { r[i].before.rating.rating })
            };
            game.execute(params![
                &*g.id,
                &*g.room,
                g.rules.size,
                g.rules.win,
                &*x.name,
                x.account,
                x.bot,
                &*o.name,
                o.account,
                o.bot,
                serde_json::to_string(&g.moves).unwrap_or_default(),
                g.winner.map_or(0, |p| p.number()),
                json::reason(g.reason),
                g.line.as_ref().map(|l| serde_json::to_string(l).unwrap_or_default()),
                r.is_some(),
                rating_of(0, false),
                rating_of(0, true),
                rating_of(1, false),
                rating_of(1, true),
                g.started_at_ms,
                g.ended_at_ms,
            ])?;
            if let Some(r) = r {
                for (who, rated) in g.players.iter().zip(r) {
                    let s = rated.after;
                    rating.execute(params![
                        who.account,
                        g.rules.size,
                        g.rules.win,
                        s.rating.rating,
                        s.rating.deviation,
                        s.rating.volatility,
                        s.games
                    ])?;
                }
            }
        }
    }
    Ok(())
}

fn answer(conn: &mut Connection, job: Job) {
    match job {
        Job::Record(_) | Job::Live(_) => {}
        Job::Register { name, bot, token, reply } => {
            let _ = reply.send(register(conn, &name, bot, &token));
        }
        Job::Account { name, reply } => {
            let _ = reply.send(account(conn, &name).map_err(failed));
        }
        Job::Query(query, reply) => {
            let _ = reply.send(json::query(conn, query).map_err(failed));
        }
    }
}

fn failed(e: rusqlite::Error) -> StoreError {
    tracing::error!("database query failed: {e}");
    StoreError::Failed(e.to_string())
}

fn register(conn: &mut Connection, name: &str, bot: bool, token: &TokenHash) -> Result<Account, StoreError> {
    let now = unix_ms(std::time::SystemTime::now());
    let inserted = conn.execute(
        "INSERT INTO accounts (name, name_key, bot, token_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (name_key) DO NOTHING",
        params![name, name_key(name), bot, &token[..], now],
    );
    match inserted {
        Ok(0) => Err(StoreError::NameTaken),
        Ok(_) => Ok(Account { id: conn.last_insert_rowid(), name: name.into(), bot, standings: Vec::new() }),
        Err(e) => Err(failed(e)),
    }
}

fn account(conn: &mut Connection, name: &str) -> rusqlite::Result<Option<(Account, TokenHash)>> {
    let row = conn
        .prepare_cached("SELECT id, name, bot, token_hash FROM accounts WHERE name_key = ?1")?
        .query_row([name_key(name)], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, bool>(2)?, r.get::<_, Vec<u8>>(3)?))
        })
        .optional()?;
    let Some((id, name, bot, hash)) = row else { return Ok(None) };
    let Ok(hash) = TokenHash::try_from(hash.as_slice()) else { return Ok(None) };
    let mut stmt = conn
        .prepare_cached("SELECT size, win, rating, rd, volatility, games FROM ratings WHERE account = ?1")?;
    let standings = stmt
        .query_map([id], |r| {
            let rules = Rules { size: r.get(0)?, win: r.get(1)? };
            let rating = Glicko2Rating { rating: r.get(2)?, deviation: r.get(3)?, volatility: r.get(4)? };
            Ok((rules, Standing { rating, games: r.get(5)? }))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Some((Account { id, name: name.into(), bot, standings }, hash)))
}
