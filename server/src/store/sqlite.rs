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
use super::{Account, BACKLOG, Job, Query, StoreError, StoreStats};
use crate::ratings::{self, Rated, RatingBook, Standing};
use crate::rules::Rules;
use crate::session::account::{AccountId, TokenHash, name_key};
use crate::store::changes::LiveWrite;
use crate::store::record::{GameRecord, unix_ms};
use crate::text::look_alike_key;
use tictactoe_protocol::Player;
use tokio::sync::oneshot;

/// The schema's versions, in order; `PRAGMA user_version` says how many are applied.
const MIGRATIONS: [&str; 5] = [
    include_str!("../../migrations/0001_accounts_games_ratings.sql"),
    include_str!("../../migrations/0002_live_games.sql"),
    include_str!("../../migrations/0003_house_level.sql"),
    include_str!("../../migrations/0004_quarantine_heartbeat.sql"),
    include_str!("../../migrations/0005_name_skeleton.sql"),
];

/// Most jobs taken off the queue at once; their writes share a transaction.
const BATCH: usize = 8192;

/// How often failed writes are retried.
const RETRY: Duration = Duration::from_secs(1);

/// Opens `path`, creating it if missing, in WAL mode, checks an existing
/// file (`PRAGMA quick_check`) and applies the migrations it lacks. A file
/// that is not a database, or is damaged, is refused with what to do.
pub(super) fn open(path: &Path, max_pages: Option<u64>) -> Result<Connection, String> {
    let existed = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    let mut conn = Connection::open(path).map_err(|e| e.to_string())?;
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
pub(super) fn checkpointer(path: &Path) -> Result<Connection, String> {
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
            params![crate::text::look_alike_key(&name), id],
        )?;
    }
    tx.commit()
}

/// What the writer holds between transactions: finished games, new
/// accounts and changes to games in progress. Games and changes are kept
/// (and retried) until a commit succeeds; a registration is answered by the
/// first commit that holds it, whether or not it worked.
/// A room waiting for a record's commit, and the game's ratings to tell it.
type Ack = (oneshot::Sender<Option<[Rated; 2]>>, Option<[Rated; 2]>);

#[derive(Default)]
struct Batch {
    records: Vec<GameRecord>,
    /// Rough bytes of `records`, for the metrics.
    record_bytes: usize,
    /// Told when the next commit attempt is over, with the game's ratings
    /// (rooms hold `game_over` for it).
    acks: Vec<Ack>,
    /// The standings this writer has rated or read: it owns the ratings.
    book: RatingBook,
    registrations: Vec<Registration>,
    live: Fold,
    /// When what is held must be committed: [`HOLD`] after the oldest of it.
    due: Option<Instant>,
    /// After a failed write: when to try again.
    retry: Option<Instant>,
}

/// A `register` waiting for its commit.
struct Registration {
    name: String,
    bot: bool,
    token: TokenHash,
    reply: oneshot::Sender<Result<Account, StoreError>>,
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

    /// Tells the metrics how much is held.
    fn count(&self, stats: &StoreStats) {
        stats.held_games.store(self.records.len(), Ordering::Relaxed);
        stats.held_live.store(self.live.held(), Ordering::Relaxed);
        stats.held_bytes.store(self.record_bytes + self.live.held() * LIVE_BYTES, Ordering::Relaxed);
    }
}

/// The longest a record whose `game_over` waits is held before its commit
/// (moves are held up to [`HOLD`]): the end of a game is this much later.
const RECORD_HOLD: Duration = Duration::from_millis(15);

/// Rough bytes of one held change to a game in progress.
const LIVE_BYTES: usize = 96;

/// Rough bytes of a held record.
fn record_bytes(r: &GameRecord) -> usize {
    std::mem::size_of::<GameRecord>() + r.moves.len() * 4 + r.id.len() + r.room.len() + 128
}

/// While writes are held, how often the writer looks at its queue (what an
/// account request or an API query may wait behind them). It sleeps between
/// looks instead of blocking on the queue, so that no sender has to wake it.
const SLICE: Duration = Duration::from_millis(5);

/// With nothing to write, how often the writer checks that it still can
/// (`/healthz` must tell the truth on an idle server too).
const PROBE: Duration = Duration::from_secs(2);

/// At shutdown, how long a store that cannot write is given before what it
/// holds is spilled to a file.
const LAST_TRIES: Duration = Duration::from_secs(10);

/// The store's thread: takes jobs off the queue until every handle is gone.
/// Writes (finished games, new accounts, changes to games in progress) are
/// held and committed together at most [`HOLD`] after the oldest of them —
/// one transaction, one sync, for everything in that window; queries are
/// answered at once. `saved` names the rooms whose games are in the
/// database already. Returns what could not be written at the end.
pub(super) fn run(
    mut conn: Connection,
    checkpointer: Connection,
    rx: Receiver<Job>,
    stats: Arc<StoreStats>,
    saved: Vec<Arc<str>>,
) -> Vec<GameRecord> {
    let (stop_checkpoints, stopped) = std::sync::mpsc::channel();
    let checkpoints = std::thread::Builder::new()
        .name("ttt-checkpoint".into())
        .spawn(move || checkpoints(checkpointer, stopped));
    let unsaved = write_jobs(&mut conn, &rx, &stats, Fold::saved(saved));
    drop(stop_checkpoints);
    if let Ok(t) = checkpoints {
        let _ = t.join();
    }
    unsaved
}

fn write_jobs(conn: &mut Connection, rx: &Receiver<Job>, stats: &StoreStats, live: Fold) -> Vec<GameRecord> {
    let mut batch = Batch { live, ..Batch::default() };
    // Kept across turns: a fresh one would grow (and copy) every time.
    let mut jobs = Vec::with_capacity(BATCH);
    loop {
        match batch.next_commit() {
            None => {
                let wait = if stats.failing.load(Ordering::Relaxed) { RETRY } else { PROBE };
                match rx.recv_timeout(wait) {
                    Ok(job) => jobs.push(job),
                    Err(RecvTimeoutError::Timeout) => {
                        probe(conn, stats);
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return stop(conn, &mut batch, stats),
                }
            }
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
                Job::Record(mut record, ack) => {
                    rate(conn, &mut batch.book, &mut record);
                    // A `game_over` waits for this commit: sooner than moves.
                    batch.hold(match ack {
                        Some(_) => now.checked_sub(HOLD - RECORD_HOLD).unwrap_or(now),
                        None => now,
                    });
                    batch.live.end(&record.room);
                    batch.record_bytes += record_bytes(&record);
                    batch.acks.extend(ack.map(|ack| (ack, record.ratings)));
                    batch.records.push(*record);
                }
                Job::Live(write) => {
                    batch.hold(match &write {
                        LiveWrite::Move { at, .. } => *at,
                        _ => now,
                    });
                    batch.live.add(write);
                }
                Job::Register { name, bot, token, reply } => {
                    batch.hold(now);
                    batch.registrations.push(Registration { name, bot, token, reply });
                }
                other => {
                    stats.busy();
                    answer(conn, other, &batch);
                    stats.idle();
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
        batch.count(stats);
    }
}

/// Checks that the database still takes a write: the heartbeat row.
fn probe(conn: &mut Connection, stats: &StoreStats) {
    stats.busy();
    let now = unix_ms(std::time::SystemTime::now());
    let done = conn.execute("INSERT OR REPLACE INTO heartbeat (id, at) VALUES (1, ?1)", [now]);
    stats.idle();
    match done {
        Ok(_) => {
            if stats.failing.swap(false, Ordering::Relaxed) {
                tracing::warn!("the database takes writes again");
            }
        }
        Err(e) => {
            if !stats.failing.swap(true, Ordering::Relaxed) {
                tracing::error!("the database cannot be written: {e}");
            }
        }
    }
}

/// Every handle is gone: what is held is written, retried for up to
/// [`LAST_TRIES`] if it fails. Returns the records that could not be.
fn stop(conn: &mut Connection, batch: &mut Batch, stats: &StoreStats) -> Vec<GameRecord> {
    write(conn, batch, stats);
    let give_up = Instant::now() + LAST_TRIES;
    while batch.retry.is_some() && Instant::now() < give_up {
        std::thread::sleep(RETRY.min(give_up.saturating_duration_since(Instant::now())));
        write(conn, batch, stats);
    }
    batch.count(stats);
    if batch.retry.is_some() {
        tracing::error!(
            games = batch.records.len(),
            "stopping while the database cannot be written: these games' records are not in it"
        );
        return std::mem::take(&mut batch.records);
    }
    Vec::new()
}

/// Commits everything held in one transaction. On failure games and live
/// changes stay (up to [`BACKLOG`] records), to be retried [`RETRY`] later
/// with what comes next; registrations are refused. Either way whoever
/// waits for the attempt is told.
fn write(conn: &mut Connection, batch: &mut Batch, stats: &StoreStats) {
    batch.live.take();
    if batch.records.is_empty() && batch.live.is_empty() && batch.registrations.is_empty() {
        batch.due = None;
        return;
    }
    let started = Instant::now();
    stats.busy();
    let result = commit(conn, batch);
    stats.idle();
    tracing::debug!(took_us = started.elapsed().as_micros() as u64, ok = result.is_ok(), "commit");
    match result {
        Ok(accounts) => {
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
            for (r, account) in batch.registrations.drain(..).zip(accounts) {
                let _ = r.reply.send(account);
            }
            batch.records.clear();
            batch.record_bytes = 0;
            batch.due = None;
            batch.retry = None;
            if stats.failing.swap(false, Ordering::Relaxed) {
                tracing::warn!("the database takes writes again: what waited is written");
            }
        }
        Err(e) => {
            stats.failing.store(true, Ordering::Relaxed);
            batch.retry = Some(Instant::now() + RETRY);
            stats.failed_writes.fetch_add(1, Ordering::Relaxed);
            for r in batch.registrations.drain(..) {
                let _ = r.reply.send(Err(StoreError::Unavailable));
            }
            let games = batch.records.len();
            tracing::error!(
                games,
                moves = batch.live.held(),
                held_bytes = stats.held_bytes.load(Ordering::Relaxed),
                "writing to the database failed; holding what waits in memory and retrying: {e}"
            );
            if games > BACKLOG {
                let over = games - BACKLOG;
                batch.records.drain(..over);
                batch.record_bytes = batch.records.iter().map(record_bytes).sum();
                stats.dropped.fetch_add(over as u64, Ordering::Relaxed);
                tracing::error!(games = over, "game records dropped: the backlog of failed writes is full");
            }
        }
    }
    for (ack, ratings) in batch.acks.drain(..) {
        let _ = ack.send(ratings);
    }
    stats.live_dropped.fetch_add(std::mem::take(&mut batch.live.dropped), Ordering::Relaxed);
}

/// One transaction: the records, the new accounts, the live changes.
/// Returns each registration's answer, in order.
fn commit(conn: &mut Connection, batch: &Batch) -> rusqlite::Result<Vec<Result<Account, StoreError>>> {
    let tx = conn.transaction()?;
    insert_games(&tx, &batch.records)?;
    let accounts = batch
        .registrations
        .iter()
        .map(|r| register(&tx, &r.name, r.bot, &r.token))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    batch.live.write(&tx)?;
    tx.commit()?;
    Ok(accounts)
}

/// Puts spilled records into the database in one transaction, and drops
/// the saved live rows of those games (they ended). Returns how many records
/// were new.
pub(super) fn import(conn: &mut Connection, games: &[GameRecord]) -> rusqlite::Result<usize> {
    let tx = conn.transaction()?;
    let before: i64 = tx.query_row("SELECT count(*) FROM games", [], |r| r.get(0))?;
    insert_games(&tx, games)?;
    let after: i64 = tx.query_row("SELECT count(*) FROM games", [], |r| r.get(0))?;
    for g in games {
        tx.execute(
            "DELETE FROM live_moves WHERE room IN (SELECT room FROM live_games WHERE game_id = ?1)",
            [&*g.id],
        )?;
        tx.execute("DELETE FROM live_games WHERE game_id = ?1", [&*g.id])?;
    }
    tx.commit()?;
    Ok(usize::try_from(after - before).unwrap_or(0))
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
                rating = excluded.rating, rd = excluded.rd, volatility = excluded.volatility, games = excluded.games
             WHERE excluded.games > ratings.games",
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

fn answer(conn: &mut Connection, job: Job, batch: &Batch) {
    match job {
        Job::Record(..) | Job::Live(_) | Job::Register { .. } => {}
        Job::Account { name, reply } => {
            let mut found = account(conn, &name);
            if let Ok(Some((account, _))) = &mut found {
                batch.book.newest(account.id, &mut account.standings);
            }
            let _ = reply.send(found.map_err(failed));
        }
        // A record still waiting for its commit (the disk is full, say) is
        // already the players'; the API shows it from memory.
        Job::Query(Query::Game(id), reply) if batch.records.iter().any(|r| *r.id == *id) => {
            let held = batch.records.iter().find(|r| *r.id == *id).map(json::held);
            let _ = reply.send(Ok(held));
        }
        Job::Query(query, reply) => {
            let _ = reply.send(json::query(conn, query).map_err(failed));
        }
    }
}

/// A database error is logged; the caller hears only that the store is unavailable.
fn failed(e: rusqlite::Error) -> StoreError {
    tracing::error!("database query failed: {e}");
    StoreError::Unavailable
}

/// Inserts an account within the batch's transaction: its row, or
/// `NameTaken` when the name (ignoring case), or one that looks like it,
/// has one already.
fn register(
    tx: &Transaction<'_>,
    name: &str,
    bot: bool,
    token: &TokenHash,
) -> rusqlite::Result<Result<Account, StoreError>> {
    let now = unix_ms(std::time::SystemTime::now());
    let inserted = tx
        .prepare_cached(
            "INSERT INTO accounts (name, name_key, name_skeleton, bot, token_hash, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
        )?
        .execute(params![name, name_key(name), look_alike_key(name), bot, &token[..], now])?;
    Ok(match inserted {
        0 => Err(StoreError::NameTaken),
        _ => Ok(Account { id: tx.last_insert_rowid(), name: name.into(), bot, standings: Vec::new() }),
    })
}

/// The account of `name` (ignoring case), else the one whose name looks
/// like it.
fn account(conn: &mut Connection, name: &str) -> rusqlite::Result<Option<(Account, TokenHash)>> {
    let row = conn
        .prepare_cached(
            "SELECT id, name, bot, token_hash FROM accounts WHERE name_key = ?1 OR name_skeleton = ?2
             ORDER BY name_key = ?1 DESC LIMIT 1",
        )?
        .query_row([name_key(name), look_alike_key(name)], |r| {
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

/// Rates a finished game if it is rated: from the book's standings, or the
/// database's for an account the book has not seen; the book keeps the
/// new ones. A standing that cannot be read leaves the game unrated (and
/// says so): rating from a made-up standing would overwrite the real one.
fn rate(conn: &mut Connection, book: &mut RatingBook, record: &mut GameRecord) {
    let players = [record.players[0].account, record.players[1].account];
    let Some(accounts) = ratings::rated_pair(players, record.reason) else { return };
    let mut before = [Standing::default(); 2];
    for (standing, &account) in before.iter_mut().zip(&accounts) {
        *standing = match book.get(account, record.rules) {
            Some(known) => known,
            None => match stored_standing(conn, account, record.rules) {
                Ok(stored) => stored.unwrap_or_default(),
                Err(e) => {
                    tracing::error!(game = %record.id, "game not rated: a standing could not be read: {e}");
                    return;
                }
            },
        };
    }
    let winner = record.winner.map(|w| usize::from(w != Player::X));
    let rated = ratings::rate(before, winner);
    for (account, r) in accounts.iter().zip(&rated) {
        book.put(*account, record.rules, r.after);
    }
    record.ratings = Some(rated);
}

/// An account's stored standing in one pool.
fn stored_standing(
    conn: &mut Connection,
    account: AccountId,
    rules: Rules,
) -> rusqlite::Result<Option<Standing>> {
    conn.prepare_cached(
        "SELECT rating, rd, volatility, games FROM ratings WHERE account = ?1 AND size = ?2 AND win = ?3",
    )?
    .query_row(rusqlite::params![account, rules.size, rules.win], |r| {
        let rating = Glicko2Rating { rating: r.get(0)?, deviation: r.get(1)?, volatility: r.get(2)? };
        Ok(Standing { rating, games: r.get(3)? })
    })
    .optional()
}
