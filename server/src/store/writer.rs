//! The store's writer: one thread that takes writes off the queue, folds
//! them, and decides when to commit — whatever the database. Finished games
//! and accepted moves are held at most [`HOLD`] (a record whose `game_over`
//! waits, [`RECORD_HOLD`]) and go in one transaction, one sync; rooms are
//! told once it is done. While commits fail, what is held stays in memory
//! and is retried; at the end, what could not be written is handed back to
//! be spilled.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use tictactoe_protocol::Player;

use crate::core::account::AccountId;
use crate::ratings::{self, RatingBook, Standing};
use crate::store::backend::{Backend, BackendError, Commit, NewAccount};
use crate::store::held::Held;
use crate::store::live::{Fold, HOLD};
use crate::store::record::GameRecord;
use crate::store::{Account, BACKLOG, Job, Outcome, StoreError, StoreStats, Tell};
use tictactoe_protocol::Rules;

/// Most jobs taken off the queue at once; their writes share a transaction.
const BATCH: usize = 8192;

/// How often failed writes are retried.
const RETRY: Duration = Duration::from_secs(1);

/// The longest a record whose `game_over` waits is held before its commit
/// (moves are held up to [`HOLD`]): the end of a game is this much later.
const RECORD_HOLD: Duration = Duration::from_millis(5);

/// Rough bytes of one held change to a game in progress.
const LIVE_BYTES: usize = 96;

/// While writes are held, how often the writer looks at its queue. It
/// sleeps between looks instead of blocking on the queue, so that no sender
/// has to wake it.
const SLICE: Duration = Duration::from_millis(5);

/// With nothing to write, how often the writer checks that it still can
/// (`/healthz` must tell the truth on an idle server too).
const PROBE: Duration = Duration::from_secs(1);

/// At shutdown, how long a store that cannot write is given before what it
/// holds is spilled to a file.
const LAST_TRIES: Duration = Duration::from_secs(10);

/// What the writer holds between transactions: finished games, new
/// accounts and changes to games in progress. Games and changes are kept
/// (and retried) until a commit succeeds; a registration is answered by the
/// first commit that holds it, whether or not it worked.
#[derive(Default)]
struct Batch {
    records: Vec<GameRecord>,
    /// Rough bytes of `records`, for the metrics.
    record_bytes: usize,
    /// Told, by game id, what the next commit attempt did with their
    /// records (rooms hold `game_over` for it).
    answers: Vec<(Arc<str>, oneshot::Sender<Outcome>)>,
    /// Games whose records the database refused in this attempt: another
    /// instance holds or recorded them.
    refused: Vec<Arc<str>>,
    /// Told, after the next commit attempt, whether everything is written.
    flushes: Vec<oneshot::Sender<bool>>,
    /// The standings this writer has rated or read: it owns the ratings.
    book: RatingBook,
    /// New accounts, and (like them) who waits for each.
    accounts: Vec<NewAccount>,
    replies: Vec<oneshot::Sender<Result<Account, StoreError>>>,
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

    /// Tells the metrics how much is held.
    fn count(&self, stats: &StoreStats) {
        stats.held_games.store(self.records.len(), Ordering::Relaxed);
        stats.held_live.store(self.live.held(), Ordering::Relaxed);
        stats.held_bytes.store(self.record_bytes + self.live.held() * LIVE_BYTES, Ordering::Relaxed);
    }
}

/// Rough bytes of a held record.
fn record_bytes(r: &GameRecord) -> usize {
    std::mem::size_of::<GameRecord>() + r.moves.len() * 4 + r.id.len() + r.room.len() + 128
}

/// Who the writer tells what: the counters, and the records shown from
/// memory while they cannot be written.
pub(super) struct Shared {
    /// The store's counters and health.
    pub(super) stats: Arc<StoreStats>,
    /// Records shown from memory while they cannot be committed.
    pub(super) held: Arc<Held>,
}

/// The writer's thread: takes jobs off the queue until every handle is
/// gone. `saved` names the rooms whose games are in the database already;
/// `standings` are their players' (the restored games are rated from them).
/// Returns what could not be written at the end.
pub(super) fn run<B: Backend>(
    mut db: B,
    rx: Receiver<Job>,
    shared: Shared,
    saved: Vec<Arc<str>>,
    standings: Vec<(AccountId, Rules, Standing)>,
) -> Vec<GameRecord> {
    let mut batch = Batch { live: Fold::saved(saved), ..Batch::default() };
    for (account, rules, standing) in standings {
        batch.book.put(account, rules, standing);
    }
    let stats = &*shared.stats;
    stats.priority.enter();
    // Nobody touches the thread's priority once it ends, however it ends.
    let _leave = Leave(&stats.priority);
    // Kept across turns: a fresh one would grow (and copy) every time.
    let mut jobs = Vec::with_capacity(BATCH);
    loop {
        match batch.next_commit() {
            None => {
                let wait = if stats.failing.load(Ordering::Relaxed) { RETRY } else { PROBE };
                match rx.recv_timeout(wait) {
                    Ok(job) => jobs.push(job),
                    Err(RecvTimeoutError::Timeout) => {
                        probe(&mut db, stats);
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return stop(&mut db, &mut batch, &shared),
                }
            }
            // Far behind: no pause (unless writes fail: then the retry waits,
            // and what queues up waits in the batch, not in a blocked call).
            Some(_) if stats.queued.load(Ordering::Relaxed) >= BATCH && batch.retry.is_none() => {}
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
                Job::Record(mut record, tell) => {
                    rate(&mut db, &mut batch.book, &mut record);
                    match tell {
                        // A store that cannot write still rates, and says so now.
                        Tell::Rated(answer) => {
                            let _ = answer.send(Outcome::Waiting(record.ratings));
                            batch.hold(now);
                        }
                        // A `game_over` waits for this commit: sooner than moves.
                        Tell::Committed(answer) => {
                            batch.hold(now.checked_sub(HOLD - RECORD_HOLD).unwrap_or(now));
                            batch.answers.push((record.id.clone(), answer));
                        }
                        Tell::Nobody => batch.hold(now),
                    }
                    batch.live.end(&record.room);
                    batch.record_bytes += record_bytes(&record);
                    batch.records.push(*record);
                }
                Job::Live(write) => {
                    batch.hold(match &write {
                        crate::store::LiveWrite::Move { at, .. } => *at,
                        _ => now,
                    });
                    batch.live.add(write);
                }
                Job::Known(account, standings) => batch.book.learn(account, &standings),
                Job::Flush(done) => {
                    batch.hold(now.checked_sub(HOLD).unwrap_or(now));
                    batch.flushes.push(done);
                }
                Job::Adopted(rooms, standings) => {
                    batch.live.held_now(&rooms);
                    for (account, rules, standing) in standings {
                        batch.book.put(account, rules, standing);
                    }
                }
                Job::Register(account, reply) => {
                    batch.hold(now);
                    batch.accounts.push(account);
                    batch.replies.push(reply);
                }
            }
        }
        if gone {
            return stop(&mut db, &mut batch, &shared);
        }
        let behind = stats.queued.load(Ordering::Relaxed) >= BATCH && batch.retry.is_none();
        if behind || batch.next_commit().is_some_and(|at| at <= Instant::now()) {
            write(&mut db, &mut batch, &shared);
        }
        stats.priority.round(batch.next_commit());
        batch.count(stats);
    }
}

/// Says the writer's thread is gone when dropped.
struct Leave<'a>(&'a super::priority::Priority);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// Checks that the database still takes a write.
fn probe(db: &mut impl Backend, stats: &StoreStats) {
    stats.busy();
    let done = db.probe();
    stats.idle();
    match done {
        Ok(()) => {
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
fn stop(db: &mut impl Backend, batch: &mut Batch, shared: &Shared) -> Vec<GameRecord> {
    write(db, batch, shared);
    let give_up = Instant::now() + LAST_TRIES;
    while batch.retry.is_some() && Instant::now() < give_up {
        std::thread::sleep(RETRY.min(give_up.saturating_duration_since(Instant::now())));
        write(db, batch, shared);
    }
    batch.count(&shared.stats);
    if batch.retry.is_some() {
        tracing::error!(
            games = batch.records.len(),
            "stopping while the database cannot be written: these games' records are not in it"
        );
        return std::mem::take(&mut batch.records);
    }
    Vec::new()
}

/// Commits everything held in one transaction; until it is done the records
/// are shown from memory. On failure games and live changes stay (up to
/// [`BACKLOG`] records), to be retried [`RETRY`] later with what comes next;
/// registrations are refused. Either way whoever waits for the attempt is told.
fn write(db: &mut impl Backend, batch: &mut Batch, shared: &Shared) {
    let stats = &*shared.stats;
    batch.live.take();
    if batch.records.is_empty() && batch.live.is_empty() && batch.accounts.is_empty() {
        batch.due = None;
        // A flush with nothing to write is done at once.
        for flush in batch.flushes.drain(..) {
            let _ = flush.send(true);
        }
        return;
    }
    // Shown from memory until committed: a room whose record's commit takes
    // too long (`STUCK`) tells its players the game ended without waiting.
    if !batch.records.is_empty() {
        shared.held.keep(&batch.records);
    }
    let started = Instant::now();
    stats.busy();
    let result = db.commit(&Commit::new(&batch.records, &batch.accounts, &batch.live));
    stats.idle();
    tracing::debug!(took_us = started.elapsed().as_micros() as u64, ok = result.is_ok(), "commit");
    match result {
        Ok(committed) => {
            let done = Instant::now();
            for (account, rules, standing) in committed.standings {
                batch.book.put(account, rules, standing);
            }
            // Rated again in the commit: the records (and `game_over`) say so.
            for r in &mut batch.records {
                if let Some(rated) = committed.ratings.get(&r.id) {
                    r.ratings = *rated;
                }
            }
            if !committed.refused.is_empty() {
                refuse(&committed.refused, batch, shared);
            }
            answer(batch, true);
            let durable = ::metrics::histogram!("ttt_move_durable_seconds");
            let moves = batch.live.committed(done, |age| durable.record(age.as_secs_f64()));
            stats.moves_saved.fetch_add(moves, Ordering::Relaxed);
            stats.written.fetch_add(batch.records.len() as u64, Ordering::Relaxed);
            stats.batches.fetch_add(1, Ordering::Relaxed);
            let took = done - started;
            ::metrics::histogram!("ttt_store_write_seconds").record(took.as_secs_f64());
            let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
            stats.write_micros.fetch_add(micros, Ordering::Relaxed);
            batch.accounts.clear();
            for (reply, account) in batch.replies.drain(..).zip(committed.accounts) {
                let _ = reply.send(account);
            }
            // Readers find them in the database now.
            shared.held.forget(batch.records.iter().map(|r| &r.id));
            batch.records.clear();
            batch.record_bytes = 0;
            batch.due = None;
            batch.retry = None;
            if stats.failing.swap(false, Ordering::Relaxed) {
                tracing::warn!("the database takes writes again: what waited is written");
            }
        }
        Err(e) if e.is_refusal() => give_up_taken(db, batch, shared, &e),
        Err(e) => {
            stats.failing.store(true, Ordering::Relaxed);
            batch.retry = Some(Instant::now() + RETRY);
            stats.failed_writes.fetch_add(1, Ordering::Relaxed);
            batch.accounts.clear();
            for reply in batch.replies.drain(..) {
                let _ = reply.send(Err(StoreError::Unavailable));
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
                shared.held.forget(batch.records[..over].iter().map(|r| &r.id));
                batch.records.drain(..over);
                batch.record_bytes = batch.records.iter().map(record_bytes).sum();
                stats.dropped.fetch_add(over as u64, Ordering::Relaxed);
                tracing::error!(games = over, "game records dropped: the backlog of failed writes is full");
            }
        }
    }
    answer(batch, false);
    let written = batch.retry.is_none();
    for flush in batch.flushes.drain(..) {
        let _ = flush.send(written);
    }
    stats.live_dropped.fetch_add(std::mem::take(&mut batch.live.dropped), Ordering::Relaxed);
}

/// The database refused the commit: some of its games are held by another
/// instance now (it adopted them while this one was cut off). Their changes
/// and records are given up (their holder plays them on and records them),
/// and the rest is written at once. Should the refused games not be found,
/// the commit is tried again later like any failed one.
fn give_up_taken(db: &mut impl Backend, batch: &mut Batch, shared: &Shared, e: &BackendError) {
    let mut rooms = batch.live.taken_rooms();
    rooms.extend(batch.records.iter().map(|r| r.room.clone()));
    let lost = match db.not_held(&rooms) {
        Ok(lost) if !lost.is_empty() => lost,
        found => {
            let why = found.err().map_or_else(|| e.to_string(), |f| f.to_string());
            tracing::error!("a write was refused and which games it touched cannot be told: {why}");
            batch.retry = Some(Instant::now() + RETRY);
            shared.stats.failing.store(true, Ordering::Relaxed);
            return;
        }
    };
    tracing::error!(
        games = lost.len(),
        rooms = ?lost,
        "another instance holds these games now (it adopted them): this one's changes to them are given up"
    );
    ::metrics::counter!("ttt_games_lost_total").increment(lost.len() as u64);
    shared.stats.note_lost(&lost);
    batch.live.give_up(&lost);
    let gone: Vec<_> =
        batch.records.iter().filter(|r| lost.contains(&r.room)).map(|r| r.id.clone()).collect();
    refuse(&gone, batch, shared);
    write(db, batch, shared);
}

/// The records of `games` were refused (another instance holds or recorded
/// them): they are given up, and their rooms told (they close at once).
fn refuse(games: &[Arc<str>], batch: &mut Batch, shared: &Shared) {
    let rooms: Vec<Arc<str>> =
        batch.records.iter().filter(|r| games.contains(&r.id)).map(|r| r.room.clone()).collect();
    if !rooms.is_empty() {
        tracing::error!(games = ?games, "another instance recorded or holds these games: this one's records of them are given up");
        shared.stats.note_lost(&rooms);
    }
    shared.held.forget(games.iter());
    for r in batch.records.iter().filter(|r| games.contains(&r.id)) {
        for account in r.players.iter().filter_map(|p| p.account) {
            batch.book.forget(account);
        }
    }
    batch.records.retain(|r| !games.contains(&r.id));
    batch.record_bytes = batch.records.iter().map(record_bytes).sum();
    batch.refused.extend(games.iter().cloned());
}

/// Tells every room that waits for a record what the attempt just over did
/// with it: refused, `written`, or waiting in memory for the next.
fn answer(batch: &mut Batch, written: bool) {
    if batch.answers.is_empty() {
        batch.refused.clear();
        return;
    }
    let ratings: rustc_hash::FxHashMap<&Arc<str>, _> =
        batch.records.iter().map(|r| (&r.id, r.ratings)).collect();
    for (game, to) in batch.answers.drain(..) {
        let outcome = match ratings.get(&game) {
            _ if batch.refused.contains(&game) => Outcome::Refused,
            Some(&rated) if !written => Outcome::Waiting(rated),
            Some(&rated) => Outcome::Written(rated),
            // Dropped from a full backlog.
            None => Outcome::Waiting(None),
        };
        let _ = to.send(outcome);
    }
    batch.refused.clear();
}

/// Rates a finished game if it is rated: from the book's standings, or the
/// database's for an account the book has not seen; the book keeps the new
/// ones, which the commit writes with the record. A standing that cannot be
/// read leaves the game unrated (and says so): rating from a made-up
/// standing would overwrite the real one.
fn rate(db: &mut impl Backend, book: &mut RatingBook, record: &mut GameRecord) {
    let players = [record.players[0].account, record.players[1].account];
    let Some(accounts) = ratings::rated_pair(players, record.reason) else { return };
    let mut before = [Standing::default(); 2];
    for (standing, &account) in before.iter_mut().zip(&accounts) {
        *standing = match book.get(account, record.rules) {
            Some(known) => known,
            None => match db.standing(account, record.rules) {
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
