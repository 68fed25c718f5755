//! The store's handle: what the server's tasks call. Writes go on the
//! writer's queue without waiting; reads go on the readers' queue.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{SyncSender, TrySendError};

use tokio::sync::oneshot;

use crate::core::account::{AccountId, TokenHash};
use crate::ratings::Standing;
use crate::store::backend::NewAccount;
use crate::store::reads::Read;
use crate::store::record::GameRecord;
use crate::store::tournaments::{TournamentData, TournamentWrite};
use crate::store::unwritten::Unwritten;
use crate::store::{
    Account, Health, LiveWrite, Outcome, Query, QueryAnswer, Recorded, StoreError, StoreStats,
};
use tictactoe_protocol::Rules;
use tictactoe_protocol::tournament::TournamentSummary;

/// When the writer answers for a record.
pub(super) enum Tell {
    /// Once it is rated: the store cannot write, nobody waits for the commit.
    Rated(oneshot::Sender<Outcome>),
    /// Once the commit holding it is over (or the store stopped writing).
    Committed(oneshot::Sender<Outcome>),
    /// Nobody waits.
    Nobody,
}

/// A write for the writer's thread.
pub(super) enum Job {
    /// A finished game, and who waits for what became of it.
    Record(Box<GameRecord>, Tell),
    /// A change to a game in progress.
    Live(LiveWrite),
    /// An account to create, and who waits for it.
    Register(NewAccount, oneshot::Sender<Result<Account, StoreError>>),
    /// A change to a tournament, and who waits for it to be durable.
    Tournament(TournamentWrite, oneshot::Sender<Result<(), StoreError>>),
    /// An account's standings as a sign-in read them: the writer rates its
    /// next game from them without reading the database (which may be down).
    Known(AccountId, Vec<(Rules, Standing)>),
    /// Games adopted from another instance, in the database already, and
    /// their players' standings.
    Adopted(Vec<Arc<str>>, Vec<(AccountId, Rules, Standing)>),
    /// Commit what is queued now; told whether everything is written.
    Flush(oneshot::Sender<bool>),
}

/// A handle on the store; cheap to clone. With `--database none` every
/// request says [`StoreError::Disabled`] and records go nowhere.
#[derive(Clone)]
pub struct Store {
    pub(super) tx: Option<SyncSender<Job>>,
    pub(super) reads: Option<SyncSender<Read>>,
    pub(super) unwritten: Arc<Unwritten>,
    pub(super) stats: Arc<StoreStats>,
}

impl Store {
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
            self.unwritten.keep([&*record]);
        }
        match self.try_put(Job::Record(record, tell)) {
            Ok(()) => Some(Recorded { answer }),
            Err(_) => {
                self.unwritten.forget([&id]);
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

    /// Creates, joins or pauses in a tournament: `Ok` once it is durable.
    /// Without a store, [`StoreError::Disabled`]: no tournament can be made.
    pub async fn tournament_write(&self, write: TournamentWrite) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.try_put(Job::Tournament(write, reply))?;
        answer.await.unwrap_or(Err(StoreError::Unavailable))
    }

    /// Tournament `id` as the standings are made from it (its records not
    /// yet committed too), if there is one.
    pub async fn tournament(&self, id: &str) -> Result<Option<TournamentData>, StoreError> {
        self.read(|reply| Read::Tournament(id.to_owned(), reply)).await
    }

    /// The tournaments the lists show at `now_ms` (those not finished, and
    /// those finished within a day), newest start first, at most
    /// [`crate::store::tournaments::LISTED`].
    pub async fn tournaments(&self, now_ms: i64) -> Result<Vec<TournamentSummary>, StoreError> {
        self.read(|reply| Read::Tournaments(now_ms, reply)).await
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
    pub async fn query(&self, query: Query) -> Result<Option<QueryAnswer>, StoreError> {
        self.read(|reply| Read::Query(query, reply)).await
    }
}
