//! How the store is doing: its counters, for `/metrics` and the benches,
//! and its health, for `/healthz` and for what may start while it cannot write.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The store's counters, for `/metrics` and the benches.
#[derive(Debug, Default)]
pub struct StoreStats {
    /// Writes waiting for the writer now (reads have a queue of their own).
    pub queued: AtomicUsize,
    /// The most jobs that ever waited at once.
    pub max_queued: AtomicUsize,
    /// Games written.
    pub written: AtomicU64,
    /// Moves of games in progress committed.
    pub moves_saved: AtomicU64,
    /// Writes of games in progress lost on a full queue.
    pub live_dropped: AtomicU64,
    /// The last commit failed (a full disk, say): what is held may not be kept.
    pub failing: AtomicBool,
    /// Transactions that failed (their games are retried).
    pub failed_writes: AtomicU64,
    /// Games given up on: the queue was full, or the backlog of failed
    /// writes reached its bound.
    pub dropped: AtomicU64,
    /// Write transactions committed, and their total time in microseconds.
    pub batches: AtomicU64,
    /// Total time of committed write transactions, in microseconds.
    pub write_micros: AtomicU64,
    /// When the writer began what it is doing now (a commit, a probe), in milliseconds since [`StoreStats::epoch`]; 0 when it waits.
    pub busy_since_ms: AtomicU64,
    /// Finished games held in memory, not yet committed.
    pub held_games: AtomicUsize,
    /// Changes to games in progress held in memory, not yet committed.
    pub held_live: AtomicUsize,
    /// Rough bytes of what is held, records and live changes together.
    pub held_bytes: AtomicUsize,
    /// The origin of `busy_since_ms`.
    epoch: OnceLock<Instant>,
    /// The writer's priority, and what the runtime reads to lift it.
    pub priority: super::priority::Priority,
    /// Rooms whose games another instance holds now (the database refused
    /// this one's writes to them), until the lobby closes them.
    lost: std::sync::Mutex<Vec<std::sync::Arc<str>>>,
}

/// What `/healthz` says of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// It writes.
    Ok,
    /// `--database none`: nothing to be unhealthy.
    Disabled,
    /// Its last write (or probe) failed: a full disk, a lost database.
    Failing,
    /// One of its operations has not returned for [`STUCK`].
    Stuck,
}

impl Health {
    /// The plain words for `/healthz`'s `store` field: `"ok"` or why not.
    pub fn text(self) -> &'static str {
        match self {
            // No store is nothing wrong.
            Health::Ok | Health::Disabled => "ok",
            Health::Failing => "cannot write to the database",
            Health::Stuck => "the database is not answering",
        }
    }
}

/// An operation of the store that takes this long counts as stuck.
pub const STUCK: Duration = Duration::from_secs(4);

impl StoreStats {
    /// The writer found these rooms' games held by another instance.
    pub(crate) fn note_lost(&self, rooms: &[std::sync::Arc<str>]) {
        if let Ok(mut lost) = self.lost.lock() {
            lost.extend(rooms.iter().cloned());
        }
    }

    /// The rooms found lost since the last call: their players must go
    /// where the game is now.
    pub fn take_lost(&self) -> Vec<std::sync::Arc<str>> {
        self.lost.lock().map(|mut l| std::mem::take(&mut *l)).unwrap_or_default()
    }

    fn epoch(&self) -> Instant {
        *self.epoch.get_or_init(Instant::now)
    }

    /// The writer starts an operation (ended by [`StoreStats::idle`]).
    pub(crate) fn busy(&self) {
        let ms = u64::try_from(self.epoch().elapsed().as_millis()).unwrap_or(u64::MAX).max(1);
        self.busy_since_ms.store(ms, Ordering::Relaxed);
    }

    /// The writer's operation returned.
    pub(crate) fn idle(&self) {
        self.busy_since_ms.store(0, Ordering::Relaxed);
    }

    /// How long the writer's present operation (a commit, a probe) has run,
    /// to the millisecond; `None` while it waits.
    pub(crate) fn busy_for(&self) -> Option<Duration> {
        let since = self.busy_since_ms.load(Ordering::Relaxed);
        let now = u64::try_from(self.epoch().elapsed().as_millis()).unwrap_or(u64::MAX);
        (since != 0).then(|| Duration::from_millis(now.saturating_sub(since)))
    }

    /// Failing, stuck or fine.
    pub fn health(&self) -> Health {
        if self.failing.load(Ordering::Relaxed) {
            return Health::Failing;
        }
        let since = self.busy_since_ms.load(Ordering::Relaxed);
        let now = u64::try_from(self.epoch().elapsed().as_millis()).unwrap_or(u64::MAX);
        if since != 0 && now.saturating_sub(since) >= STUCK.as_millis() as u64 {
            return Health::Stuck;
        }
        Health::Ok
    }
}
