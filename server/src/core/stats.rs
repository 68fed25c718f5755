//! Live counters of the server, read by tests, the load generator and logs.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What the server holds right now, and totals since it started.
#[derive(Debug, Default)]
pub struct Stats {
    /// Open WebSocket connections (after the handshake).
    pub connections: AtomicUsize,
    /// Live rooms (each owned by one task).
    pub rooms: AtomicUsize,
    /// Games started since the server started.
    pub games_started: AtomicU64,
    /// Games ended with a `game_over` since the server started.
    pub games_finished: AtomicU64,
    /// Games ended, by reason, indexed like `EndReason::ALL`.
    pub games_by_reason: [AtomicU64; 7],
    /// Moves accepted since the server started.
    pub moves: AtomicU64,
}

impl Stats {
    /// Adds what a room counted since `before`.
    pub fn add(&self, now: &Counts, before: &Counts) {
        self.games_started.fetch_add(now.started - before.started, Ordering::Relaxed);
        self.games_finished.fetch_add(now.finished() - before.finished(), Ordering::Relaxed);
        for (total, (n, b)) in self.games_by_reason.iter().zip(now.finished.iter().zip(&before.finished)) {
            total.fetch_add(n - b, Ordering::Relaxed);
        }
        self.moves.fetch_add(now.moves - before.moves, Ordering::Relaxed);
    }
}

impl Stats {
    /// Current open connections.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }

    /// Current live rooms.
    pub fn rooms(&self) -> usize {
        self.rooms.load(Ordering::Relaxed)
    }
}

/// Increments a gauge now and decrements it when dropped.
pub(crate) struct Gauge<'a>(&'a AtomicUsize);

impl<'a> Gauge<'a> {
    pub(crate) fn up(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Gauge(counter)
    }
}

impl Drop for Gauge<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What a room has seen so far, for the server's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Games started.
    pub started: u64,
    /// Games finished, indexed like `EndReason::ALL`.
    pub finished: [u64; 7],
    /// Moves accepted.
    pub moves: u64,
}

impl Counts {
    /// Games finished, whatever the reason.
    pub fn finished(&self) -> u64 {
        self.finished.iter().sum()
    }
}
