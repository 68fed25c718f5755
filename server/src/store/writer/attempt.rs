//! One commit attempt of the writer and what becomes of it: on success
//! the book, the records' ratings and the waiting rooms are told; on
//! failure what is held stays for the next attempt; a refusal gives up the
//! games another instance holds now.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::{Batch, Published, RETRY, record_bytes};
use crate::store::backend::{Backend, BackendError, Commit};
use crate::store::{BACKLOG, Outcome, StoreError};

/// Commits everything held in one transaction; until it is done the records
/// are shown from memory. On failure games and live changes stay (up to
/// [`BACKLOG`] records), to be retried [`RETRY`] later with what comes next;
/// registrations and tournaments' changes are refused. Either way whoever waits for the attempt is told.
pub(super) fn write(db: &mut impl Backend, batch: &mut Batch, published: &Published) {
    let stats = &*published.stats;
    batch.live.take();
    if batch.records.is_empty()
        && batch.live.is_empty()
        && batch.accounts.is_empty()
        && batch.tournaments.is_empty()
    {
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
        published.unwritten.keep(&batch.records);
    }
    let started = Instant::now();
    stats.busy();
    let result = db.commit(&Commit::new(&batch.records, &batch.accounts, &batch.tournaments, &batch.live));
    stats.idle();
    batch.last_commit = Some(Instant::now());
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
                refuse(&committed.refused, batch, published);
            }
            // Readers find them in the database now, rated as they were
            // kept: no reader may see the copy rated before the commit once
            // a player could have read `game_over`.
            published.unwritten.forget(batch.records.iter().map(|r| &r.id));
            answer(batch, true, published);
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
            batch.tournaments.clear();
            for reply in batch.tournament_replies.drain(..) {
                let _ = reply.send(Ok(()));
            }
            batch.records.clear();
            batch.record_bytes = 0;
            batch.due = None;
            batch.retry = None;
            if stats.failing.swap(false, Ordering::Relaxed) {
                tracing::warn!("the database takes writes again: what waited is written");
            }
        }
        Err(e) if e.is_refusal() => give_up_taken(db, batch, published, &e),
        Err(e) => {
            stats.failing.store(true, Ordering::Relaxed);
            batch.retry = Some(Instant::now() + RETRY);
            stats.failed_writes.fetch_add(1, Ordering::Relaxed);
            batch.accounts.clear();
            for reply in batch.replies.drain(..) {
                let _ = reply.send(Err(StoreError::Unavailable));
            }
            batch.tournaments.clear();
            for reply in batch.tournament_replies.drain(..) {
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
                published.unwritten.forget(batch.records[..over].iter().map(|r| &r.id));
                batch.records.drain(..over);
                batch.record_bytes = batch.records.iter().map(record_bytes).sum();
                stats.dropped.fetch_add(over as u64, Ordering::Relaxed);
                tracing::error!(games = over, "game records dropped: the backlog of failed writes is full");
            }
        }
    }
    answer(batch, false, published);
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
fn give_up_taken(db: &mut impl Backend, batch: &mut Batch, published: &Published, e: &BackendError) {
    let mut rooms = batch.live.taken_rooms();
    rooms.extend(batch.records.iter().map(|r| r.room.clone()));
    let lost = match db.not_held(&rooms) {
        Ok(lost) if !lost.is_empty() => lost,
        found => {
            let why = found.err().map_or_else(|| e.to_string(), |f| f.to_string());
            tracing::error!("a write was refused and which games it touched cannot be told: {why}");
            batch.retry = Some(Instant::now() + RETRY);
            published.stats.failing.store(true, Ordering::Relaxed);
            return;
        }
    };
    tracing::error!(
        games = lost.len(),
        rooms = ?lost,
        "another instance holds these games now (it adopted them): this one's changes to them are given up"
    );
    ::metrics::counter!("ttt_games_lost_total").increment(lost.len() as u64);
    published.stats.note_lost(&lost);
    batch.live.give_up(&lost);
    let gone: Vec<_> =
        batch.records.iter().filter(|r| lost.contains(&r.room)).map(|r| r.id.clone()).collect();
    refuse(&gone, batch, published);
    write(db, batch, published);
}

/// The records of `games` were refused (another instance holds or recorded
/// them): they are given up, and their rooms told (they close at once).
fn refuse(games: &[Arc<str>], batch: &mut Batch, published: &Published) {
    let rooms: Vec<Arc<str>> =
        batch.records.iter().filter(|r| games.contains(&r.id)).map(|r| r.room.clone()).collect();
    if !rooms.is_empty() {
        tracing::error!(games = ?games, "another instance recorded or holds these games: this one's records of them are given up");
        published.stats.note_lost(&rooms);
    }
    published.unwritten.forget(games.iter());
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
/// with it: refused, `written`, or waiting in memory for the next. The
/// attempt's answers go to the rooms together.
fn answer(batch: &mut Batch, written: bool, published: &Published) {
    if batch.answers.is_empty() {
        batch.refused.clear();
        return;
    }
    let ratings: rustc_hash::FxHashMap<&Arc<str>, _> =
        batch.records.iter().map(|r| (&r.id, r.ratings)).collect();
    let answers = batch
        .answers
        .drain(..)
        .map(|(game, to)| {
            let outcome = match ratings.get(&game) {
                _ if batch.refused.contains(&game) => Outcome::Refused,
                Some(&rated) if !written => Outcome::Waiting(rated),
                Some(&rated) => Outcome::Written(rated),
                // Dropped from a full backlog.
                None => Outcome::Waiting(None),
            };
            (to, outcome)
        })
        .collect();
    published.courier.deliver(answers);
    batch.refused.clear();
}
