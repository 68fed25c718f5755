//! The store's readers: a few threads, each with a connection of its own,
//! answering the API and sign-in's account lookups. They never wait behind
//! the writer's batch (the backend lets readers and the writer go on at
//! once), and a slow read holds up only the reads behind it.

use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::core::account::TokenHash;
use crate::store::backend::{BackendError, Reader};
use crate::store::tournaments::TournamentData;
use crate::store::unwritten::Unwritten;
use crate::store::{Account, Query, QueryAnswer, StoreError};
use tictactoe_protocol::tournament::TournamentSummary;

/// How many reads run at once.
pub(super) const READERS: usize = 2;

/// Most reads waiting; beyond it a read is refused as busy.
pub(super) const READ_QUEUE: usize = 4096;

/// One read and who waits for its answer.
pub(super) enum Read {
    /// An API query.
    Query(Query, oneshot::Sender<Result<Option<QueryAnswer>, StoreError>>),
    /// Sign-in's lookup of an account by name.
    Account(String, oneshot::Sender<Result<Option<(Account, TokenHash)>, StoreError>>),
    /// A tournament, by id, as its standings are made from it.
    Tournament(String, oneshot::Sender<Result<Option<TournamentData>, StoreError>>),
    /// The tournaments listed at a time (Unix ms).
    Tournaments(i64, oneshot::Sender<Result<Vec<TournamentSummary>, StoreError>>),
}

/// Starts a thread for each of `readers`, all taking reads off one queue;
/// they end when every sender is gone.
pub(super) fn start<R: Reader>(
    readers: Vec<R>,
    unwritten: Arc<Unwritten>,
) -> std::io::Result<SyncSender<Read>> {
    let (tx, rx) = std::sync::mpsc::sync_channel(READ_QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    for (i, reader) in readers.into_iter().enumerate() {
        let (rx, unwritten) = (rx.clone(), unwritten.clone());
        std::thread::Builder::new()
            .name(format!("ttt-read-{i}"))
            .spawn(move || serve(reader, &rx, &unwritten))?;
    }
    Ok(tx)
}

fn serve<R: Reader>(mut reader: R, rx: &Mutex<Receiver<Read>>, unwritten: &Unwritten) {
    loop {
        // The lock is held only while waiting for the next read.
        let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
        match next {
            Ok(Read::Query(query, reply)) => {
                let _ = reply.send(answer(&mut reader, query, unwritten).map_err(failed));
            }
            Ok(Read::Account(name, reply)) => {
                let _ = reply.send(reader.account(&name).map_err(failed));
            }
            Ok(Read::Tournament(id, reply)) => {
                let _ = reply.send(tournament(&mut reader, &id, unwritten).map_err(failed));
            }
            Ok(Read::Tournaments(now_ms, reply)) => {
                let _ = reply.send(reader.tournaments(now_ms).map_err(failed));
            }
            Err(_) => return,
        }
    }
}

/// Answers one API query: `None` for what does not exist.
fn answer(
    reader: &mut impl Reader,
    query: Query,
    unwritten: &Unwritten,
) -> Result<Option<QueryAnswer>, BackendError> {
    Ok(match query {
        // A record still waiting for its commit (the disk is full, say) is
        // already the players'; the API shows it from memory.
        Query::Game(id) => match unwritten.game(&id) {
            Some(game) => Some(game),
            None => reader.game(&id)?,
        }
        .map(|g| QueryAnswer::Game(Box::new(g))),
        Query::Player(name) => reader.player(&name)?.map(QueryAnswer::Player),
        Query::PlayerGames { name, limit, before } => {
            reader.player_games(&name, limit, before.as_deref())?.map(QueryAnswer::PlayerGames)
        }
        Query::Leaderboard { rules, limit } => {
            Some(QueryAnswer::Leaderboard(reader.leaderboard(rules, limit)?))
        }
        Query::Tournaments { now_ms } => {
            Some(QueryAnswer::Tournaments { tournaments: reader.tournaments(now_ms)? })
        }
        Query::Tournament { id, now_ms } => {
            tournament(reader, &id, unwritten)?.map(|t| QueryAnswer::Tournament(Box::new(t.view(now_ms))))
        }
    })
}

/// Tournament `id` with its records, those still waiting for their commit
/// too (its players saw those games end: the standings count them).
fn tournament(
    reader: &mut impl Reader,
    id: &str,
    unwritten: &Unwritten,
) -> Result<Option<TournamentData>, BackendError> {
    let Some(mut data) = reader.tournament(id)? else { return Ok(None) };
    for game in unwritten.tournament_games(id) {
        if !data.games.iter().any(|g| g.id == game.id) {
            data.games.push(game);
        }
    }
    Ok(Some(data))
}

/// A database error is logged; the caller hears only that the store is unavailable.
fn failed(e: BackendError) -> StoreError {
    tracing::error!("database query failed: {e}");
    StoreError::Unavailable
}
