//! The store's writer: one thread that takes writes off the queue, folds
//! them, and decides when to commit — whatever the database. Finished games
//! and accepted moves are held at most [`HOLD`] (a record whose `game_over`
//! waits, [`RECORD_HOLD`]) and go in one transaction, one sync; rooms are
//! told once it is done. While commits fail, what is held stays in memory
//! and is retried; at the end, what could not be written is handed back to
//! be spilled.

mod attempt;
mod courier;

use attempt::write;
pub(super) use courier::Courier;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::core::account::AccountId;
use crate::ratings::{RatingBook, Standing};
use crate::store::backend::{Backend, NewAccount};
use crate::store::handle::{Job, Tell};
use crate::store::live::{Fold, HOLD};
use crate::store::rating;
use crate::store::record::GameRecord;
use crate::store::tournaments::TournamentWrite;
use crate::store::unwritten::Unwritten;
use crate::store::{Account, Outcome, StoreError, StoreStats};
use tictactoe_protocol::Rules;

/// Most jobs taken off the queue at once; their writes share a transaction.
const BATCH: usize = 8192;

/// How often failed writes are retried.
const RETRY: Duration = Duration::from_secs(1);

/// The longest a record whose `game_over` waits is held before its commit
/// (moves are held up to [`HOLD`]) when the writer has not committed for
/// [`COMMIT_GAP`]: the end of a game is this much later.
const RECORD_HOLD: Duration = Duration::from_millis(5);

/// While games end all the time, the least time between two commits a
/// record waits for: a commit costs a sync of the disk (and CPU for it)
/// however little it holds, so under load the ends of games share them
/// (at most one commit per gap for records), and `game_over` waits up to
/// this long instead of [`RECORD_HOLD`].
const COMMIT_GAP: Duration = Duration::from_millis(20);

/// Rough bytes of one held change to a game in progress.
const LIVE_BYTES: usize = 96;

/// While writes are held, how often the writer looks at its queue. It
/// sleeps between looks instead of blocking on the queue, so that no sender
/// has to wake it. No longer than the priority watcher's `LATE`: jobs left
/// untaken longer than that count as a starved writer, and lift it.
const SLICE: Duration = Duration::from_millis(5);

/// With nothing to write, how often the writer checks that it still can
/// (`/healthz` must tell the truth on an idle server too).
const PROBE: Duration = Duration::from_secs(1);

/// At shutdown, how long a store that cannot write is given before what it
/// holds is spilled to a file.
const LAST_TRIES: Duration = Duration::from_secs(10);

/// What the writer holds between transactions: finished games, new
/// accounts, changes to tournaments and to games in progress. Games and
/// their changes are kept (and retried) until a commit succeeds; a
/// registration or a tournament's change is answered by the first commit
/// that holds it, whether or not it worked.
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
    /// Changes to tournaments, and (like accounts) who waits for each.
    tournaments: Vec<TournamentWrite>,
    tournament_replies: Vec<oneshot::Sender<Result<(), StoreError>>>,
    live: Fold,
    /// When what is held must be committed: [`HOLD`] after the oldest of it.
    due: Option<Instant>,
    /// When the last commit attempt ended.
    last_commit: Option<Instant>,
    /// After a failed write: when to try again.
    retry: Option<Instant>,
}

impl Batch {
    /// Something written at `at` is held: it is due by `at + HOLD`.
    fn hold(&mut self, at: Instant) {
        self.due_by(at + HOLD);
    }

    /// A record whose `game_over` waits came in `now`: it is due
    /// [`RECORD_HOLD`] later, but not sooner than [`COMMIT_GAP`] after the
    /// last commit.
    fn record_due(&mut self, now: Instant) {
        let gap = self.last_commit.map_or(now, |last| last + COMMIT_GAP);
        self.due_by((now + RECORD_HOLD).max(gap));
    }

    fn due_by(&mut self, due: Instant) {
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
pub(super) struct Published {
    /// What `/healthz` and the metrics read.
    pub(super) stats: Arc<StoreStats>,
    /// Records shown from memory while they cannot be committed.
    pub(super) unwritten: Arc<Unwritten>,
    /// How the rooms waiting for a commit hear of it.
    pub(super) courier: Courier,
}

/// The writer's thread: takes jobs off the queue until every handle is
/// gone. `saved` names the rooms whose games are in the database already;
/// `standings` are their players' (the restored games are rated from them).
/// Returns what could not be written at the end.
pub(super) fn run<B: Backend>(
    mut db: B,
    rx: Receiver<Job>,
    published: Published,
    saved: Vec<Arc<str>>,
    standings: Vec<(AccountId, Rules, Standing)>,
) -> Vec<GameRecord> {
    let mut batch = Batch { live: Fold::saved(saved), ..Batch::default() };
    for (account, rules, standing) in standings {
        batch.book.put(account, rules, standing);
    }
    let stats = &*published.stats;
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
                    Err(RecvTimeoutError::Disconnected) => return stop(&mut db, &mut batch, &published),
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
                    rating::rate(&mut db, &mut batch.book, &mut record);
                    match tell {
                        // A store that cannot write still rates, and says so now.
                        Tell::Rated(answer) => {
                            let _ = answer.send(Outcome::Waiting(record.ratings));
                            batch.hold(now);
                        }
                        // A `game_over` waits for this commit: sooner than moves.
                        Tell::Committed(answer) => {
                            batch.record_due(now);
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
                Job::Tournament(write, reply) => {
                    batch.hold(now);
                    batch.tournaments.push(write);
                    batch.tournament_replies.push(reply);
                }
            }
        }
        if gone {
            return stop(&mut db, &mut batch, &published);
        }
        let behind = stats.queued.load(Ordering::Relaxed) >= BATCH && batch.retry.is_none();
        if behind || batch.next_commit().is_some_and(|at| at <= Instant::now()) {
            write(&mut db, &mut batch, &published);
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
fn stop(db: &mut impl Backend, batch: &mut Batch, published: &Published) -> Vec<GameRecord> {
    write(db, batch, published);
    let give_up = Instant::now() + LAST_TRIES;
    while batch.retry.is_some() && Instant::now() < give_up {
        std::thread::sleep(RETRY.min(give_up.saturating_duration_since(Instant::now())));
        write(db, batch, published);
    }
    batch.count(&published.stats);
    if batch.retry.is_some() {
        tracing::error!(
            games = batch.records.len(),
            "stopping while the database cannot be written: these games' records are not in it"
        );
        return std::mem::take(&mut batch.records);
    }
    Vec::new()
}
